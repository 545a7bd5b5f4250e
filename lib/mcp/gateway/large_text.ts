/**
 * A large string of an upstream answer as the gateway's stdio transport
 * delivers it: the UTF-8 bytes and digest it was unescaped and hashed into
 * while it streamed in (see `message_assembler.ts`), ready for the store,
 * standing in a tool result where the string would be.
 *
 * @module
 */
import type { DigestedUtf8 } from "../../store/utf8_builder.ts";

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
  const content = result.content;
  if (
    !Array.isArray(content) ||
    !content.some((block) => block?.text instanceof LargeText)
  ) return result;
  return {
    ...result,
    content: content.map((block) =>
      block?.text instanceof LargeText ? { ...block, text: "" } : block
    ),
  };
}
