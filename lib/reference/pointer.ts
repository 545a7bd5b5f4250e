/**
 * RFC 6901 JSON Pointer parsing (string form only) with strict `~` escapes.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * A JSON Pointer that cannot be parsed (`invalid_pointer`: bad syntax, or a
 * token that is not a canonical array index where an array is indexed) or
 * that names no value in the document (`pointer_not_found`).
 *
 * @example Telling a malformed pointer from a missing value
 * ```ts
 * import { parsePointer, PointerError, scanJson } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 *
 * assert.throws(() => parsePointer("/a~2"), (error: unknown) =>
 *   error instanceof PointerError && error.code === "invalid_pointer");
 *
 * const index = scanJson(new TextEncoder().encode('{"a": [1]}'));
 * assert.throws(() => index.resolve(["a", "1"]), (error: unknown) =>
 *   error instanceof PointerError && error.code === "pointer_not_found");
 * ```
 */
export class PointerError extends LoomError.SyntaxError<"PointerError"> {}

/**
 * Split an RFC 6901 pointer into its decoded reference tokens.
 *
 * Only the JSON string form is accepted: `""` (the whole document) or a
 * sequence of `/`-prefixed tokens. `~1` decodes to `/` and `~0` to `~`
 * (in that order, so `~01` is `~1`); any other `~` is a syntax error. The
 * URI fragment form (`#/a`) is refused.
 *
 * @param pointer The pointer text.
 * @returns The decoded reference tokens (empty for the whole document).
 * @throws {PointerError} `invalid_pointer` when the text is not a pointer.
 *
 * @example Decoding escapes
 * ```ts
 * import { parsePointer } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(parsePointer(""), []);
 * assert.deepEqual(parsePointer("/a~1b/m~0n/0"), ["a/b", "m~n", "0"]);
 * ```
 */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (pointer.charCodeAt(0) !== 0x2f) {
    throw new PointerError(
      "invalid_pointer",
      pointer.charCodeAt(0) === 0x23
        ? "Pointer must use the JSON string form: the URI fragment form (#…) is not accepted"
        : "Pointer must be empty or start with /",
    );
  }
  const tokens = pointer.slice(1).split("/");
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t]!;
    if (!token.includes("~")) continue;
    let decoded = "";
    for (let i = 0; i < token.length; i++) {
      const c = token[i]!;
      if (c !== "~") {
        decoded += c;
        continue;
      }
      const next = token[i + 1];
      if (next === "0") decoded += "~";
      else if (next === "1") decoded += "/";
      else {
        throw new PointerError(
          "invalid_pointer",
          `Pointer token ${t + 1} has a ~ not followed by 0 or 1`,
        );
      }
      i++;
    }
    tokens[t] = decoded;
  }
  return tokens;
}

/**
 * The array index a reference token names, or `-1` when the token is not a
 * canonical RFC 6901 array index (`0`, or digits without a leading zero).
 * Indices too long to be in range for any array come back as
 * `Number.MAX_SAFE_INTEGER`.
 *
 * @param token A decoded reference token.
 * @returns The index, or `-1`.
 */
export function arrayIndexOf(token: string): number {
  const n = token.length;
  if (n === 0) return -1;
  const first = token.charCodeAt(0);
  if (first === 0x30) return n === 1 ? 0 : -1;
  let value = 0;
  for (let i = 0; i < n; i++) {
    const d = token.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  // Longer than any array can be: canonical, but never in range.
  return n > 15 ? Number.MAX_SAFE_INTEGER : value;
}

/**
 * Encode reference tokens as an RFC 6901 pointer (the inverse of
 * {@linkcode parsePointer}).
 *
 * @param tokens Decoded reference tokens.
 * @returns The pointer text.
 *
 * @example Escaping `/` and `~`
 * ```ts
 * import { formatPointer, parsePointer } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 *
 * const pointer = formatPointer(["a/b", "m~n", "0"]);
 * assert.equal(pointer, "/a~1b/m~0n/0");
 * assert.deepEqual(parsePointer(pointer), ["a/b", "m~n", "0"]);
 * ```
 */
export function formatPointer(tokens: readonly string[]): string {
  let out = "";
  for (const token of tokens) {
    out += "/" + token.replaceAll("~", "~0").replaceAll("/", "~1");
  }
  return out;
}
