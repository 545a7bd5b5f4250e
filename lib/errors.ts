/**
 * The contract every domain error of Loom keeps: a stable machine `code`
 * beside a sentence-case message. Errors extend the closest built-in
 * (`TypeError`, `RangeError`, `SyntaxError`, `Error`) and implement this.
 *
 * @module
 */

/** An error that carries a stable machine-readable code. */
export interface CodedError extends Error {
  /** Stable, snake_case machine code, e.g. `digest_mismatch`. */
  readonly code: string;
}

/**
 * Tells whether a thrown value is one of Loom's coded errors.
 *
 * @param value Anything caught.
 * @returns `true` when `value` is an `Error` with a string `code`.
 *
 * @example
 * ```ts
 * import { isCodedError } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const err = Object.assign(new RangeError("Out of range"), { code: "invalid_range" });
 * assert.equal(isCodedError(err), true);
 * assert.equal(isCodedError(new Error("plain")), false);
 * ```
 */
export function isCodedError(value: unknown): value is CodedError {
  return value instanceof Error &&
    typeof (value as { code?: unknown }).code === "string";
}
