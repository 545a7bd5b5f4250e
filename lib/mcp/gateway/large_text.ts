/**
 * A large string of an upstream answer as the gateway's stdio transport
 * delivers it: the UTF-8 bytes and digest it was unescaped and hashed into
 * while it streamed in (see `message_assembler.ts`), ready for the store,
 * standing in a tool result where the string would be; and what the
 * gateway does with results that may hold one: compare texts, put strings
 * back for a reader that keeps them, or empty stand-ins for a shape check.
 *
 * @module
 */
import type { DigestedUtf8 } from "../../store/utf8_builder.ts";
import { isPlainObject } from "../../plain_object.ts";

/**
 * A large string of an upstream answer, taken out as it streamed in: its
 * UTF-8 bytes with their digest (ready for the store), and its line count.
 * `JSON.stringify` writes it as the string it is.
 *
 * @example
 * ```ts
 * import { LargeText } from "./large_text.ts";
 * import { Utf8Builder } from "../../store/utf8_builder.ts";
 * import assert from "node:assert/strict";
 * const builder = new Utf8Builder(64);
 * builder.append(new TextEncoder().encode("a\nb"));
 * const text = new LargeText(builder.finish(), 2);
 * assert.equal(text.byteLength, 3);
 * assert.equal(JSON.stringify({ text }), '{"text":"a\\nb"}');
 * ```
 */
export class LargeText {
  /** The bytes and their SHA-256. */
  readonly content: DigestedUtf8;
  /** How many lines it holds (a last line without a newline counts). */
  readonly lines: number;
  /** Byte offsets of U+FFFD that stand for lone surrogates, and the units. */
  readonly #lone: readonly number[];

  /**
   * @param content The built content (well-formed UTF-8).
   * @param lines Its line count.
   * @param loneSurrogates Where the string held a lone surrogate, which UTF-8
   *   cannot: pairs of the byte offset of the U+FFFD that stands for it in
   *   `content` and the surrogate's code unit, so that
   *   {@linkcode LargeText.text} gives back the string exactly.
   */
  constructor(
    content: DigestedUtf8,
    lines: number,
    loneSurrogates: readonly number[] = [],
  ) {
    this.content = content;
    this.lines = lines;
    this.#lone = loneSurrogates;
  }

  /** Its size in UTF-8 bytes. */
  get byteLength(): number {
    return this.content.bytes.length;
  }

  /**
   * The string, exactly as `JSON.parse` gives it (decoded anew on every
   * call: it is large).
   *
   * @returns The text.
   */
  text(): string {
    const bytes = this.content.bytes;
    const decoder = new TextDecoder();
    if (this.#lone.length === 0) return decoder.decode(bytes);
    let text = "";
    let at = 0;
    for (let k = 0; k < this.#lone.length; k += 2) {
      const offset = this.#lone[k]!;
      text += decoder.decode(bytes.subarray(at, offset)) +
        String.fromCharCode(this.#lone[k + 1]!);
      at = offset + 3;
    }
    return text + decoder.decode(bytes.subarray(at));
  }

  /**
   * The string, for `JSON.stringify`.
   *
   * @returns The text.
   */
  toJSON(): string {
    return this.text();
  }
}

/**
 * A tool result as a schema sees it: each text block whose text is a
 * {@linkcode LargeText} gets an empty string in its place (a shallow copy;
 * the result itself is not changed). For checking the shape only.
 *
 * @param result A `tools/call` result.
 * @returns The result, or a copy with stand-ins.
 *
 * @example
 * ```ts
 * import { LargeText, shapeOf } from "./large_text.ts";
 * import { Utf8Builder } from "../../store/utf8_builder.ts";
 * import assert from "node:assert/strict";
 * const text = new LargeText(new Utf8Builder(8).finish(), 0);
 * const result = { content: [{ type: "text", text }] };
 * assert.deepEqual(shapeOf(result), { content: [{ type: "text", text: "" }] });
 * assert.equal(result.content[0]!.text, text);
 * ```
 */
export function shapeOf(
  result: Record<string, unknown>,
): Record<string, unknown> {
  return replacingLarge(result, () => "", false);
}

/**
 * The result with every {@linkcode LargeText} decoded back into a string:
 * what a reader that keeps the answer (not the host: `run_code`'s code)
 * gets.
 *
 * @param result A `tools/call` result as the transport delivered it.
 * @returns The result itself when it holds no large text, else a copy.
 *
 * @example
 * ```ts
 * import { withStrings } from "./large_text.ts";
 * import assert from "node:assert/strict";
 * const result = { content: [{ type: "text", text: "small" }] };
 * assert.equal(withStrings(result), result);
 * ```
 */
export function withStrings(
  result: Record<string, unknown>,
): Record<string, unknown> {
  return replacingLarge(result, (text) => text.text(), true);
}

/**
 * The result with each large text of its text blocks (and, when
 * `structured`, of `structuredContent`'s values) replaced by `by(text)`:
 * the result itself when it holds none, else a shallow copy.
 */
function replacingLarge(
  result: Record<string, unknown>,
  by: (text: LargeText) => unknown,
  structured: boolean,
): Record<string, unknown> {
  const large = (value: unknown): value is LargeText =>
    value instanceof LargeText;
  const content = Array.isArray(result.content) ? result.content : undefined;
  const values = structured && isPlainObject(result.structuredContent)
    ? result.structuredContent as Record<string, unknown>
    : undefined;
  if (
    !content?.some((block) => large(block?.text)) &&
    !Object.values(values ?? {}).some(large)
  ) return result;
  const out = { ...result };
  if (content !== undefined) {
    out.content = content.map((block) =>
      large(block?.text) ? { ...block, text: by(block.text) } : block
    );
  }
  if (values !== undefined) {
    out.structuredContent = Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, large(v) ? by(v) : v]),
    );
  }
  return out;
}

/** A string of a tool result, or a large one taken out as it streamed in. */
export type Text = string | LargeText;

/** Whether a text holds the JSON of `structuredContent` (made on demand). */
export function sameJson(text: Text, structuredText: () => string): boolean {
  if (text instanceof LargeText) {
    const first = text.content.bytes.find((b) => !JSON_SPACE.includes(b));
    if (first !== 0x7b) return false;
    text = text.text();
  }
  const first = text.trimStart()[0];
  if (first !== "{") return false;
  if (text === structuredText()) return true;
  try {
    return JSON.stringify(JSON.parse(text), null, 2) === structuredText();
  } catch {
    return false;
  }
}

/** The bytes JSON allows as white space. */
const JSON_SPACE = [0x20, 0x09, 0x0a, 0x0d];

/** Whether a value is a text: a string or a large one. */
export function isText(value: unknown): value is Text {
  return typeof value === "string" || value instanceof LargeText;
}

/** Whether two texts are equal (large ones by their digest). */
export function sameText(a: Text, b: Text): boolean {
  if (a instanceof LargeText && b instanceof LargeText) {
    return a.byteLength === b.byteLength &&
      a.content.sha256 === b.content.sha256;
  }
  if (typeof a === "string" && typeof b === "string") return a === b;
  const large = (a instanceof LargeText ? a : b) as LargeText;
  const text = (a instanceof LargeText ? b : a) as string;
  // A UTF-8 byte takes at most one UTF-16 unit: a shorter text differs.
  return text.length <= large.byteLength && large.text() === text;
}
