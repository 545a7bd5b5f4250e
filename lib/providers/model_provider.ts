/**
 * The one interface the slice talks to a model through, whatever answers:
 * a recording, Anthropic's Messages API or an OpenAI-compatible server.
 *
 * @module
 */

import type { TurnRequest } from "../briefing/turn_request.ts";
import type { ModelUsage } from "../briefing/context_report.ts";
import type { StepPhase } from "../reference/lookup_session.ts";

export type { ModelUsage } from "../briefing/context_report.ts";

/** The forced tool of each phase. */
export type ModelToolName = "select_action" | "action_arguments";

/** One model call the loop asks for. */
export interface ModelCall {
  /** `selection` (choose an action) or `arguments` (fill its arguments). */
  readonly phase: StepPhase;
  /** `select_action` in selection, `action_arguments` in arguments. */
  readonly tool: ModelToolName;
  /** The provider-neutral request to send. */
  readonly request: TurnRequest;
  /**
   * Aborts the call in flight (an interrupt, the run timeout); the provider
   * then rejects with `provider_aborted`.
   */
  readonly signal?: AbortSignal;
}

/** What a model call returns. */
export interface ModelReply {
  /** The forced tool call's arguments, parsed JSON; any text outside the call is dropped. */
  readonly arguments: unknown;
  /** Token counters of this call. */
  readonly usage: ModelUsage;
  /**
   * `true`: the usage is the provider's final figure for a completed call
   * (always so on a reply; partial observations ride on a `ProviderError`).
   */
  readonly final_usage: boolean;
  /**
   * What a live provider said about its response (its id, model and finish
   * reasons), for telemetry; recordings leave it out.
   */
  readonly response?: {
    /** The response id (`msg_…`, `chatcmpl-…`). */
    readonly id?: string;
    /** The model that answered. */
    readonly model?: string;
    /** Why generation stopped, one per choice (`tool_use`, `tool_calls`). */
    readonly finish_reasons?: readonly string[];
  };
}

/** A model the slice can ask for forced tool calls. */
export interface ModelProvider {
  /** The spec the provider was created from, e.g. `anthropic:claude-sonnet-4-5`. */
  readonly spec: string;
  /**
   * Sends one forced tool call and returns its arguments.
   *
   * @param call Phase, tool and request of this call.
   * @returns The tool call's arguments and usage.
   * @throws {ProviderError} When the model cannot be reached
   * (`provider_connection`), times out (`provider_timeout`), rejects the
   * request (`provider_http`), breaks the protocol (`provider_protocol`),
   * the call is aborted (`provider_aborted`), or a recording does not match.
   */
  call(call: ModelCall): Promise<ModelReply>;
  /**
   * The parts of the HTTP body this provider sends for `request`, in its
   * cache order (see `providerRequestParts`); the context report measures
   * prefix stability on them. Providers without a wire of their own
   * (recordings) leave it out and the report uses the turn request's parts.
   */
  requestParts?(
    request: TurnRequest,
  ): readonly { readonly part: string; readonly json: string }[];
}
