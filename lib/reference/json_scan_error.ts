/**
 * The error of a document that is not strict JSON, and how the scanner's
 * parts word it.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * The bytes are not strict JSON: `invalid_json` (grammar, UTF-8, BOM, lone
 * surrogate escape) or `ambiguous_json` (a duplicate member name).
 *
 * @example The code and byte offset of a problem
 * ```ts
 * import { JsonScanError, scanJson } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 *
 * const bytes = new TextEncoder().encode('{"a": 1, "a": 2}');
 * assert.throws(() => scanJson(bytes), (error: unknown) =>
 *   error instanceof JsonScanError && error.code === "ambiguous_json" &&
 *   error.offset === 9);
 * ```
 */
export class JsonScanError extends LoomError.SyntaxError<"JsonScanError", {
  /** Byte offset where the problem was found. */
  readonly offset: number;
}> {}

/** `invalid_json` at `offset`, saying why. */
export function invalid(offset: number, why: string): JsonScanError {
  return new JsonScanError(
    "invalid_json",
    `Invalid JSON at byte ${offset}: ${why}`,
    { offset },
  );
}

/** `invalid_json`: malformed UTF-8 in a string at `offset`. */
export function invalidUtf8(offset: number): JsonScanError {
  return invalid(offset, "malformed UTF-8 in a string");
}

/** The byte at `i`, for a message: `'x'`, `byte 0x1f` or `end of input`. */
export function describe(bytes: Uint8Array, i: number): string {
  if (i >= bytes.length) return "end of input";
  const b = bytes[i]!;
  if (b >= 0x20 && b < 0x7f) return `'${String.fromCharCode(b)}'`;
  return `byte 0x${b.toString(16).padStart(2, "0")}`;
}

/** A string quoted as JSON, clipped to about 64 characters, for a message. */
export function clip(text: string): string {
  const quoted = JSON.stringify(text);
  return quoted.length > 66 ? quoted.slice(0, 64) + '…"' : quoted;
}
