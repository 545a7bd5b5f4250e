/**
 * The error every provider throws, with a stable code the slice and the CLI
 * map to a `provider_error` stop and exit code 3.
 *
 * @module
 */

import { LoomError, type LoomErrorOptions } from "../errors.ts";
import type { ModelUsage } from "./model_provider.ts";

/**
 * A model provider failed: bad spec or key, a recording that does not match
 * the loop, an HTTP error or an unusable answer. Its codes:
 * - `bad_spec`: The model spec is not `recorded:PATH`, `anthropic:MODEL` or `openai:MODEL`.
 * - `bad_option`: An option has a value the provider cannot use.
 * - `missing_api_key`: The provider's API key variable is unset or empty.
 * - `recording_invalid`: The recording file is unreadable, not JSON or not `loom-recording/1`.
 * - `recording_mismatch`: The recorded call's phase or tool differs from what the loop asked for.
 * - `recording_exhausted`: The loop asked for more calls than the recording holds.
 * - `recording_unwritable`: `--record PATH` could not write the recording file.
 * - `request_log_unwritable`: `--record-requests PATH` could not write the
 *   request log.
 * - `provider_http`: The provider answered with an HTTP error status after the retries, or asked
 *   (`Retry-After`) for a wait longer than the model timeout, which is not waited for.
 * - `provider_connection`: The provider could not be reached (after the retries).
 * - `provider_timeout`: No complete reply (headers and the last byte of the body) arrived within
 *   the model timeout, on every attempt.
 * - `provider_aborted`: The caller's abort signal ended the call (an interrupt, the run timeout).
 * - `provider_protocol`: The provider answered, but not with the forced tool call and valid
 *   arguments (see {@linkcode ProviderError.problem}).
 * - `provider_contract`: The request body breaks a rule the service enforces before any model
 *   sees it (see {@linkcode ProviderError.rule} and {@linkcode ProviderError.path}); it was not
 *   sent, and no call was spent.
 *
 * @example
 * ```ts
 * import { ProviderError, createProvider } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => createProvider("anthropic:claude-sonnet-4-5", { env: {} }),
 *   (e: unknown) => e instanceof ProviderError && e.code === "missing_api_key",
 * );
 * ```
 */
export class ProviderError extends LoomError.Error<"ProviderError"> {
  /** HTTP status of a `provider_http` error; otherwise `null`. */
  readonly status: number | null;
  /**
   * Usage the provider reported for a call whose answer was unusable (its
   * `final_usage` is false); `null` when nothing was observed.
   */
  readonly usage: ModelUsage | null;
  /** Attempts made before giving up; `null` when not a transport failure. */
  readonly attempts: number | null;
  /**
   * What was wrong with a `provider_protocol` reply; otherwise `null`:
   * - `malformed_response`: the body is not JSON or not the provider's response shape.
   * - `no_choice`: an OpenAI-compatible reply with an empty `choices` array.
   * - `truncated`: output stopped at the token limit.
   * - `no_tool_call`: the reply holds no call of the forced tool.
   * - `wrong_tool`: the reply calls another tool.
   * - `invalid_arguments`: the call's arguments are not valid JSON.
   * - `too_deep`: the arguments nest deeper than 64 levels.
   */
  readonly problem:
    | "malformed_response"
    | "no_choice"
    | "truncated"
    | "no_tool_call"
    | "wrong_tool"
    | "invalid_arguments"
    | "too_deep"
    | null;
  /** The broken service rule of a `provider_contract` error (`anthropic.tool_schema_root`); otherwise `null`. */
  readonly rule: string | null;
  /** Where in the request body the rule is broken (an RFC 6901 pointer), for `provider_contract`; otherwise `null`. */
  readonly path: string | null;

  /**
   * Creates a provider error.
   *
   * @param code Stable machine code.
   * @param message Sentence-case message without a trailing period.
   * @param options Status, partial usage and cause.
   */
  constructor(
    code: ProviderError["code"],
    message: string,
    options: LoomErrorOptions & {
      /** The HTTP status, for `provider_http`. */
      readonly status?: number | null;
      /** Usage observed before the failure (a partial observation). */
      readonly usage?: ModelUsage | null;
      /** Attempts made, for the transport failures. */
      readonly attempts?: number;
      /** What was wrong, for `provider_protocol`. */
      readonly problem?: ProviderError["problem"];
      /** The broken rule, for `provider_contract`. */
      readonly rule?: string;
      /** Where the rule is broken, for `provider_contract`. */
      readonly path?: string;
    } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.status = options.status ?? null;
    this.usage = options.usage ?? null;
    this.attempts = options.attempts ?? null;
    this.problem = options.problem ?? null;
    this.rule = options.rule ?? null;
    this.path = options.path ?? null;
  }
}
