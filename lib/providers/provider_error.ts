/**
 * The error every provider throws, with a stable code the slice and the CLI
 * map to a `provider_error` stop and exit code 3.
 *
 * @module
 */

import type { ModelUsage } from "./model_provider.ts";

/** Stable machine codes of {@linkcode ProviderError}. */
export type ProviderErrorCode =
  /** The model spec is not `recorded:PATH`, `anthropic:MODEL` or `openai:MODEL`. */
  | "bad_spec"
  /** An option has a value the provider cannot use. */
  | "bad_option"
  /** The provider's API key variable is unset or empty. */
  | "missing_api_key"
  /** The recording file is unreadable, not JSON or not `loom-recording/1`. */
  | "recording_invalid"
  /** The recorded call's phase or tool differs from what the loop asked for. */
  | "recording_mismatch"
  /** The loop asked for more calls than the recording holds. */
  | "recording_exhausted"
  /**
   * The provider answered with an HTTP error status, after the retries (a
   * `Retry-After` longer than the model timeout is not waited for).
   */
  | "provider_http"
  /** The provider could not be reached (after the retries). */
  | "provider_connection"
  /**
   * No complete reply (headers and the last byte of the body) arrived within
   * the model timeout, on every attempt.
   */
  | "provider_timeout"
  /** The caller's abort signal ended the call (an interrupt or the run timeout). */
  | "provider_aborted"
  /**
   * The provider answered, but not with the forced tool call and valid
   * arguments: a body that is not the expected JSON, no choice, no or the
   * wrong tool call, arguments that are not JSON or nest too deep, output
   * cut at the token limit.
   */
  | "provider_protocol";

/**
 * What was wrong with a `provider_protocol` reply:
 *
 * - `malformed_response`: the body is not JSON or not the provider's response
 *   shape.
 * - `no_choice`: an OpenAI-compatible reply with an empty `choices` array.
 * - `truncated`: output stopped at the token limit.
 * - `no_tool_call`: the reply holds no call of the forced tool.
 * - `wrong_tool`: the reply calls another tool.
 * - `invalid_arguments`: the call's arguments are not valid JSON.
 * - `too_deep`: the arguments nest deeper than `MAX_REPLY_DEPTH` (64).
 */
export type ProtocolProblem =
  | "malformed_response"
  | "no_choice"
  | "truncated"
  | "no_tool_call"
  | "wrong_tool"
  | "invalid_arguments"
  | "too_deep";

/** Options of {@linkcode ProviderError}. */
export interface ProviderErrorOptions {
  /** The HTTP status, for `provider_http`. */
  readonly status?: number | null;
  /** Usage observed before the failure (a partial observation). */
  readonly usage?: ModelUsage | null;
  /** The underlying error. */
  readonly cause?: unknown;
  /** Attempts made, for `provider_timeout`, `provider_http` and `provider_connection`. */
  readonly attempts?: number;
  /** What was wrong, for `provider_protocol`. */
  readonly problem?: ProtocolProblem;
}

/**
 * A model provider failed: bad spec or key, a recording that does not match
 * the loop, an HTTP error or an unusable answer.
 *
 * @example
 * ```ts
 * import { ProviderError, createProvider } from "@loom/loom";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => createProvider("anthropic:claude-sonnet-4-5", { env: {} }),
 *   (e: unknown) => e instanceof ProviderError && e.code === "missing_api_key",
 * );
 * ```
 */
export class ProviderError extends Error {
  /** Stable machine code. */
  readonly code: ProviderErrorCode;
  /** HTTP status of a `provider_http` error; otherwise `null`. */
  readonly status: number | null;
  /**
   * Usage the provider reported for a call whose answer was unusable (its
   * `final_usage` is false); `null` when nothing was observed.
   */
  readonly usage: ModelUsage | null;
  /** Attempts made before giving up; `null` when not a transport failure. */
  readonly attempts: number | null;
  /** What was wrong with a `provider_protocol` reply; otherwise `null`. */
  readonly problem: ProtocolProblem | null;

  /**
   * Creates a provider error.
   *
   * @param code Stable machine code.
   * @param message Sentence-case message without a trailing period.
   * @param options Status, partial usage and cause.
   */
  constructor(
    code: ProviderErrorCode,
    message: string,
    options: ProviderErrorOptions = {},
  ) {
    super(
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "ProviderError";
    this.code = code;
    this.status = options.status ?? null;
    this.usage = options.usage ?? null;
    this.attempts = options.attempts ?? null;
    this.problem = options.problem ?? null;
  }
}
