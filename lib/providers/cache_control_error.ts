/**
 * The error thrown when a turn request's cache markers break Anthropic's
 * rules, before anything is sent.
 *
 * @module
 */

/** Codes of {@linkcode CacheControlError}. */
export type CacheControlErrorCode =
  /** More than 4 `cache_control` markers in one request. */
  | "too_many_breakpoints"
  /** A `1h` marker after a `5m` one (1h breakpoints must come first). */
  | "cache_ttl_order";

/**
 * A turn request has more than 4 cache breakpoints, or a 1h breakpoint after
 * a 5m one; Anthropic would reject it, so Loom refuses to send it.
 *
 * @example
 * ```ts
 * import { CacheControlError } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const error = new CacheControlError("too_many_breakpoints", "Too many");
 * assert.ok(error instanceof RangeError);
 * assert.equal(error.code, "too_many_breakpoints");
 * ```
 */
export class CacheControlError extends RangeError {
  /** Stable machine code. */
  readonly code: CacheControlErrorCode;

  /**
   * Creates the error.
   *
   * @param code Which rule was broken.
   * @param message Sentence-case message without a trailing period.
   */
  constructor(code: CacheControlErrorCode, message: string) {
    super(message);
    this.name = "CacheControlError";
    this.code = code;
  }
}
