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
  /** `--record PATH` could not write the recording file. */
  | "recording_unwritable"
  /** The provider answered with an HTTP error status (after the SDK's retries). */
  | "provider_http"
  /** The provider could not be reached or timed out (after the SDK's retries). */
  | "provider_connection"
  /** The provider answered, but not with the forced tool call and valid arguments. */
  | "provider_protocol";

/** Options of {@linkcode ProviderError}. */
export interface ProviderErrorOptions {
  /** The HTTP status, for `provider_http`. */
  readonly status?: number | null;
  /** Usage observed before the failure (a partial observation). */
  readonly usage?: ModelUsage | null;
  /** The underlying error. */
  readonly cause?: unknown;
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
  }
}
