/**
 * The lexer for JSON strings, one for every reader of JSON text in Loom: the
 * document scanner of this folder (`json_scanner.ts`, which validates a whole
 * document in memory) and the gateway's streaming reader
 * (`lib/mcp/gateway/message_assembler.ts`, which unescapes a large string
 * into the store while the rest of the answer still streams in). What it
 * holds is what both do alike:
 *
 * - the byte classes of a string body (what ends a run of plain bytes) and
 *   their four-bytes-at-a-time test;
 * - the escapes: what a one-character escape stands for, `\uXXXX`, and a
 *   surrogate pair joined into one code point;
 * - unescaping a string body in place into UTF-8 ({@linkcode StringUnescaper}),
 *   resumable when the bytes arrive in pieces, which also decodes a scanned
 *   string value ({@linkcode decodeJsonString}).
 *
 * Each reader keeps its own policy: the scanner refuses lone surrogates and
 * checks UTF-8 byte by byte; the streaming reader writes a lone surrogate as
 * U+FFFD (noting where, so the exact string can be given back) and leaves
 * UTF-8 to its builder.
 *
 * @module
 */

/** `"` */
export const QUOTE = 0x22;
/** `\` */
export const BACKSLASH = 0x5c;
/** Line feed, as `\n` stands for it. */
export const LF = 0x0a;

/** 1 for a byte that ends a run of plain string bytes: a control character, `"` or `\`. */
export const SPECIAL: Uint8Array = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) SPECIAL[b] = 1;
SPECIAL[QUOTE] = SPECIAL[BACKSLASH] = 1;

/**
 * What a one-character escape stands for, by the byte after the `\` (0 for a
 * byte that makes no escape; `u` is read by {@linkcode hex4}).
 */
export const UNESCAPE: Uint8Array = new Uint8Array(256);
UNESCAPE[QUOTE] = QUOTE;
UNESCAPE[BACKSLASH] = BACKSLASH;
UNESCAPE[0x2f] = 0x2f; // /
UNESCAPE[0x62] = 0x08; // b
UNESCAPE[0x66] = 0x0c; // f
UNESCAPE[0x6e] = LF; // n
UNESCAPE[0x72] = 0x0d; // r
UNESCAPE[0x74] = 0x09; // t

/** Value of a hex digit, or -1. */
const HEX = new Int8Array(256).fill(-1);
for (let d = 0; d < 10; d++) HEX[0x30 + d] = d;
for (let d = 0; d < 6; d++) HEX[0x41 + d] = HEX[0x61 + d] = 10 + d;

/**
 * The code unit four hex digits at `at` name (the caller has checked that
 * four bytes are there), or -1 when one of them is not a hex digit.
 */
export function hex4(bytes: Uint8Array, at: number): number {
  const a = HEX[bytes[at]!]!, b = HEX[bytes[at + 1]!]!;
  const c = HEX[bytes[at + 2]!]!, d = HEX[bytes[at + 3]!]!;
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

/**
 * The high bit of each of four bytes (a little- or big-endian word) that is
 * a control character, `"` or `\`, and of some bytes after one; zero exactly
 * when none is (the zero-byte tests, in parallel).
 */
export function specialBits(v: number): number {
  const quote = v ^ 0x22222222;
  const backslash = v ^ 0x5c5c5c5c;
  return (((v - 0x20202020) & ~v) |
    ((quote - 0x01010101) & ~quote) |
    ((backslash - 0x01010101) & ~backslash)) & 0x80808080;
}

/** Whether `unit` is a UTF-16 high (leading) surrogate. */
export function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** Whether `unit` is a UTF-16 low (trailing) surrogate. */
export function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The code point of a surrogate pair. */
export function fromSurrogates(high: number, low: number): number {
  return 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
}

/** Writes `code`'s UTF-8 bytes at `buf[o]`; returns the offset after them. */
export function putUtf8(buf: Uint8Array, o: number, code: number): number {
  if (code < 0x80) {
    buf[o++] = code;
  } else if (code < 0x800) {
    buf[o++] = 0xc0 | (code >> 6);
    buf[o++] = 0x80 | (code & 0x3f);
  } else if (code < 0x10000) {
    buf[o++] = 0xe0 | (code >> 12);
    buf[o++] = 0x80 | ((code >> 6) & 0x3f);
    buf[o++] = 0x80 | (code & 0x3f);
  } else {
    buf[o++] = 0xf0 | (code >> 18);
    buf[o++] = 0x80 | ((code >> 12) & 0x3f);
    buf[o++] = 0x80 | ((code >> 6) & 0x3f);
    buf[o++] = 0x80 | (code & 0x3f);
  }
  return o;
}

/** {@linkcode StringUnescaper.run}: the bytes ended before the closing quote. */
export const MORE = -1;
/** {@linkcode StringUnescaper.run}: a raw control character or a bad escape. */
export const INVALID = -2;

/**
 * Unescapes a JSON string body into UTF-8, in place, a piece at a time:
 * {@linkcode StringUnescaper.run} reads up to the closing quote and writes
 * the unescaped bytes over the start of its buffer (they never pass what is
 * read). An escape the piece cuts off is left for the caller to carry into
 * the next piece ({@linkcode StringUnescaper.carry}). A lone surrogate is
 * written as U+FFFD, and where it stood is noted.
 *
 * @example
 * ```ts
 * import { StringUnescaper } from "./json_string.ts";
 * import assert from "node:assert/strict";
 * const buf = new Uint8Array(16);
 * const n = new TextEncoder().encodeInto('a\\nb\\u00e9"rest', buf).written;
 * const unescaper = new StringUnescaper();
 * const end = unescaper.run(buf, new Uint32Array(buf.buffer), n, 0);
 * assert.equal(end, 11);
 * assert.equal(new TextDecoder().decode(buf.subarray(0, unescaper.written)), "a\nbé");
 * assert.equal(unescaper.newlines, 1);
 * ```
 */
export class StringUnescaper {
  /** How many line feeds the string held so far. */
  newlines = 0;
  /**
   * Pairs: the output offset (past `base`) of each U+FFFD that stands for a
   * lone surrogate, and the surrogate's code unit.
   */
  readonly lone: number[] = [];
  /** After {@linkcode StringUnescaper.run}: the bytes written at the buffer's start. */
  written = 0;
  /**
   * After {@linkcode StringUnescaper.run}: where an escape the piece cut off
   * starts (to be carried to the front of the next piece), or -1.
   */
  carry = -1;

  /**
   * Unescapes `buf[0, n)` in place, up to the closing quote.
   *
   * @param buf The piece, at a 4-aligned offset of its buffer.
   * @param words `buf` as 32-bit words (runs of plain bytes go four at a
   *   time).
   * @param n How many bytes of `buf` to read.
   * @param base The output offset of `buf[0]` in the whole string, for
   *   {@linkcode StringUnescaper.lone}.
   * @returns The offset after the closing quote, {@linkcode MORE} or
   *   {@linkcode INVALID}.
   */
  run(buf: Uint8Array, words: Uint32Array, n: number, base: number): number {
    const wordsEnd = n >>> 2;
    let o = 0; // the output's end
    let i = 0;
    let end = MORE;
    this.carry = -1;
    while (i < n) {
      // A run of plain bytes: four at a time while aligned.
      const start = i;
      let b = 0;
      for (;;) {
        if ((i & 3) === 0) {
          let w = i >>> 2;
          while (w < wordsEnd && specialBits(words[w]!) === 0) w++;
          i = w << 2;
        }
        if (i >= n) break;
        b = buf[i]!;
        if (SPECIAL[b] !== 0) break;
        i++;
      }
      if (o !== start && i > start) buf.copyWithin(o, start, i);
      o += i - start;
      if (i >= n) break;
      if (b === QUOTE) {
        end = i + 1;
        break;
      }
      if (b !== BACKSLASH) return INVALID; // a raw control character
      if (i + 1 === n) {
        this.carry = i;
        break;
      }
      const e = buf[i + 1]!;
      if (e !== 0x75) {
        const byte = UNESCAPE[e]!;
        if (byte === 0) return INVALID;
        if (byte === LF) this.newlines++;
        buf[o++] = byte;
        i += 2;
        continue;
      }
      if (i + 6 > n) {
        this.carry = i;
        break;
      }
      const unit = hex4(buf, i + 2);
      if (unit < 0) return INVALID;
      let code = unit;
      let size = 6;
      if (isHighSurrogate(unit)) {
        // A low surrogate may follow as the next escape.
        if (
          i + 12 > n &&
          (i + 6 === n || buf[i + 6] === BACKSLASH) &&
          (i + 7 >= n || buf[i + 7] === 0x75)
        ) {
          this.carry = i;
          break;
        }
        const low = i + 12 <= n && buf[i + 6] === BACKSLASH &&
            buf[i + 7] === 0x75
          ? hex4(buf, i + 8)
          : -1;
        if (isLowSurrogate(low)) {
          code = fromSurrogates(unit, low);
          size = 12;
        } else code = 0xfffd; // a lone surrogate, as toWellFormed() makes it
      } else if (isLowSurrogate(unit)) code = 0xfffd;
      if (code === 0xfffd && unit !== 0xfffd) this.lone.push(base + o, unit);
      // The escape is read before its bytes are written over.
      i += size;
      if (code === LF) this.newlines++;
      o = putUtf8(buf, o, code);
    }
    this.written = o;
    return end;
  }
}

/** Where {@linkcode decodeJsonString} unescapes (grown as needed). */
let scratch = new Uint8Array(4096);
let scratchWords = new Uint32Array(scratch.buffer);
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes the string lexeme `bytes[start, end)` (quotes included), which a
 * scanner has validated, resolving every escape.
 */
export function decodeStringLexeme(
  bytes: Uint8Array,
  start: number,
  end: number,
): string {
  const inner = bytes.subarray(start + 1, end - 1);
  if (inner.indexOf(BACKSLASH) < 0) return decoder.decode(inner);
  const n = inner.length;
  if (scratch.length < n) {
    scratch = new Uint8Array(n + 3 & ~3);
    scratchWords = new Uint32Array(scratch.buffer);
  }
  scratch.set(inner);
  const unescaper = new StringUnescaper();
  unescaper.run(scratch, scratchWords, n, 0);
  return decoder.decode(scratch.subarray(0, unescaper.written));
}

/** The span of a string value: its bytes `[start, end)`, quotes included. */
export interface StringSpan {
  /** Offset of the opening quote. */
  readonly start: number;
  /** Offset just past the closing quote. */
  readonly end: number;
  /** The value's kind, when known (`string` for a string). */
  readonly kind?: string;
}

/**
 * Decode the JSON string value that `span` addresses (quotes included) in
 * `bytes`, resolving every escape.
 *
 * @param bytes The scanned document.
 * @param span The span of a string value, as `JsonIndex.resolve` returns it.
 * @returns The decoded string.
 * @throws {TypeError} When the span is not a string value.
 *
 * @example Decoding escapes in a string value
 * ```ts
 * import { scanJson } from "@loom/loom/reference";
 * import { decodeJsonString } from "./json_string.ts";
 * import assert from "node:assert/strict";
 *
 * const index = scanJson(new TextEncoder().encode('["caf\\u00e9\\n"]'));
 * assert.equal(decodeJsonString(index.bytes, index.resolve(["0"])), "café\n");
 * ```
 */
export function decodeJsonString(bytes: Uint8Array, span: StringSpan): string {
  if (
    (span.kind !== undefined && span.kind !== "string") ||
    span.end - span.start < 2 || bytes[span.start] !== QUOTE ||
    bytes[span.end - 1] !== QUOTE
  ) {
    throw new TypeError(
      `Cannot decode bytes ${span.start}..${span.end} as a JSON string: the span is not a string value`,
    );
  }
  return decodeStringLexeme(bytes, span.start, span.end);
}
