/**
 * Replays a recording offline under a context policy and captures, call by
 * call, the HTTP body the `anthropic:` or `openai:` provider would send —
 * the same mapping the live providers hand to the official SDKs — so the
 * run can be priced without a network or an API key. The replay works on a
 * temporary copy of the workspace; the given directory is never changed.
 *
 * @module
 */
import type { ContextPolicy } from "../briefing/briefing.ts";
import type { RequestPart } from "../briefing/context_report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import type {
  ModelCall,
  ModelProvider,
  ModelReply,
} from "../providers/model_provider.ts";
import { RecordedProvider } from "../providers/recorded_provider.ts";
import { providerRequestBody } from "../providers/request_body.ts";
import {
  providerRequestParts,
  type ProviderWire,
} from "../providers/request_parts.ts";
import type { SliceOutcome } from "../slice/outcome.ts";
import { runSlice } from "../slice/run.ts";
import type { RunOptions, SliceTest } from "../slice/request.ts";
import type { PricedCall } from "./simulate.ts";
import { copyTree } from "../copy_tree.ts";

/** Options of {@linkcode replayRecording}. */
export interface ReplayOptions {
  /** The `loom-recording/1` file. */
  readonly recording: string;
  /** The workspace the recording was made on (copied, never changed). */
  readonly workspace: string;
  /** The intent the recording was made with. */
  readonly intent: string;
  /** The test command, as in the recorded run. */
  readonly test?: SliceTest;
  /** Step budget (default 200). */
  readonly maxSteps?: number;
  /** The context policy to replay under. */
  readonly policy: ContextPolicy;
  /** Briefing limits to replay with (roll batch, retirement target, …). */
  readonly briefingLimits?: RunOptions["briefingLimits"];
  /** Whose request bodies to capture. */
  readonly wire: ProviderWire;
  /** The model name the bodies carry. */
  readonly model: string;
  /** Assumed time between model calls, for cache expiry (default 5 s). */
  readonly callIntervalMs?: number;
  /** Told after every captured call. */
  readonly onCall?: (calls: number) => void;
}

/** A replayed run: its calls as sent and how it ended. */
export interface ReplayedRun {
  /** Every model call, with its body, time and reply. */
  readonly calls: readonly PricedCall[];
  /** The slice's outcome. */
  readonly outcome: SliceOutcome;
}

/** Default assumed time between model calls. */
export const DEFAULT_CALL_INTERVAL_MS = 5_000;

/**
 * Replays a recording and captures the provider bodies of its calls.
 *
 * @param options Recording, workspace, intent, policy, wire and model.
 * @returns The captured calls and the outcome.
 * @throws {ProviderError} When the recording cannot be read.
 */
export async function replayRecording(
  options: ReplayOptions,
): Promise<ReplayedRun> {
  const recorded = RecordedProvider.load(options.recording);
  const interval = options.callIntervalMs ?? DEFAULT_CALL_INTERVAL_MS;
  const calls: PricedCall[] = [];
  const body = (request: TurnRequest) =>
    providerRequestBody(options.wire, request, options.model);
  const provider: ModelProvider = {
    spec: recorded.spec,
    requestParts(request: TurnRequest): readonly RequestPart[] {
      return providerRequestParts(options.wire, body(request));
    },
    async call(call: ModelCall): Promise<ModelReply> {
      const sent = body(call.request);
      const reply = await recorded.call(call);
      calls.push({
        body: sent,
        atMs: calls.length * interval,
        reply: reply.arguments,
      });
      options.onCall?.(calls.length);
      return reply;
    },
  };
  const root = await Deno.makeTempDir({ prefix: "loom-cost-" });
  try {
    const workspace = `${root}/workspace`;
    await copyTree(options.workspace, workspace);
    const outcome = await runSlice({
      intent: options.intent,
      workspace,
      ...(options.test === undefined ? {} : { test: options.test }),
      maxSteps: options.maxSteps ?? 200,
      provider,
    }, {
      contextPolicy: options.policy,
      ...(options.briefingLimits === undefined
        ? {}
        : { briefingLimits: options.briefingLimits }),
    });
    return { calls, outcome };
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}
