/**
 * Strict UTF-8 validation and character-boundary arithmetic over bytes.
 *
 * Validation follows RFC 3629 / Unicode Table 3-7 exactly: overlong forms,
 * UTF-16 surrogates (U+D800..U+DFFF, i.e. `ED A0..BF`), code points above
 * U+10FFFF, stray continuation bytes and truncated sequences are all invalid.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * Content is not valid UTF-8: the store or a builder refused it, and nothing
 * was stored.
 *
 * @example
 * ```ts
 * import { InvalidUtf8Error, ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * await assert.rejects(
 *   store.put(new Uint8Array([0x61, 0xc0, 0xaf]), { origin: "x", capture: "complete" }),
 *   (error: unknown) => error instanceof InvalidUtf8Error && error.offset === 1,
 * );
 * assert.equal(store.count, 0);
 * ```
 */
export class InvalidUtf8Error extends LoomError.TypeError<"InvalidUtf8Error", {
  /** Byte offset of the first invalid sequence (-1 for a string with a lone surrogate). */
  readonly offset: number;
}> {}

/**
 * Whether `bytes` is entirely well-formed UTF-8.
 *
 * Validates without decoding, so it runs several times faster than a
 * fatal `TextDecoder` (which builds a string it would then discard).
 *
 * @param bytes The bytes to check.
 * @returns `true` when every byte belongs to a well-formed UTF-8 sequence.
 */
export function isValidUtf8(bytes: Uint8Array): boolean {
  return firstInvalidUtf8(bytes) === -1;
}

/**
 * The offset of the first byte that does not start or continue a
 * well-formed UTF-8 sequence, or `-1` when every byte is valid.
 *
 * For a truncated or malformed multi-byte sequence the offset is that of its
 * lead byte, so `bytes.subarray(0, offset)` is always the longest valid prefix.
 *
 * @param bytes The bytes to check.
 * @returns The offset of the first invalid sequence, or `-1`.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  // An aligned 32-bit view lets runs of ASCII be checked eight bytes at a time.
  const base = (4 - (bytes.byteOffset & 3)) & 3;
  const words = n > base ? (n - base) >>> 2 : 0;
  const view = words === 0
    ? new Uint32Array(0)
    : new Uint32Array(bytes.buffer, bytes.byteOffset + base, words);
  const wordsEnd = base + (words << 2) - 8;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      if (((i - base) & 3) === 0 && i >= base && i <= wordsEnd) {
        const w = (i - base) >>> 2;
        if (((view[w]! | view[w + 1]!) & 0x80808080) === 0) {
          i += 8;
          continue;
        }
      }
      i++;
      continue;
    }
    if (b < 0xc2) return i; // continuation byte or overlong 2-byte lead
    if (b < 0xe0) {
      if (i + 1 >= n || (bytes[i + 1]! & 0xc0) !== 0x80) return i;
      i += 2;
      continue;
    }
    if (b < 0xf5) {
      // Table 3-7 of the Unicode Standard: the lead fixes the length and the
      // second byte's range (E0 and F0 refuse overlongs, ED surrogates, F4
      // anything above U+10FFFF); the later bytes are plain continuations.
      const length = b < 0xf0 ? 3 : 4;
      if (i + length > n) return i;
      const b1 = bytes[i + 1]!;
      if (
        b1 < (b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80) ||
        b1 > (b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf)
      ) return i;
      if ((bytes[i + 2]! & 0xc0) !== 0x80) return i;
      if (length === 4 && (bytes[i + 3]! & 0xc0) !== 0x80) return i;
      i += length;
      continue;
    }
    return i; // F5..FF never appear in UTF-8
  }
  return -1;
}

/**
 * Whether `offset` falls between two characters: `0` and `bytes.length` are
 * boundaries; any other offset is one unless the byte there is a
 * continuation byte (`0b10xxxxxx`). Offsets outside `0..length` are not.
 *
 * @param bytes UTF-8 bytes.
 * @param offset A byte offset.
 * @returns `true` when `offset` is a character boundary.
 */
export function isCharBoundary(bytes: Uint8Array, offset: number): boolean {
  if (!Number.isInteger(offset) || offset < 0 || offset > bytes.length) {
    return false;
  }
  if (offset === 0 || offset === bytes.length) return true;
  return (bytes[offset]! & 0xc0) !== 0x80;
}

/**
 * The greatest character boundary at or before `offset` (clamped to
 * `0..bytes.length`).
 *
 * @param bytes UTF-8 bytes.
 * @param offset A byte offset.
 * @returns A boundary `b` with `b <= offset`.
 */
export function floorCharBoundary(bytes: Uint8Array, offset: number): number {
  let i = clamp(Math.floor(offset), bytes.length);
  while (i > 0 && i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i--;
  return i;
}

/**
 * The least character boundary at or after `offset` (clamped to
 * `0..bytes.length`).
 *
 * @param bytes UTF-8 bytes.
 * @param offset A byte offset.
 * @returns A boundary `b` with `b >= offset`.
 */
export function ceilCharBoundary(bytes: Uint8Array, offset: number): number {
  let i = clamp(Math.ceil(offset), bytes.length);
  while (i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}

function clamp(offset: number, length: number): number {
  if (!(offset > 0)) return 0; // also NaN
  return offset > length ? length : offset;
}

/**
 * The UTF-8 length of a string without encoding it. Lone surrogates count as
 * the three bytes of U+FFFD, as `TextEncoder` would write them.
 *
 * @param text Any string.
 * @returns Its length in UTF-8 bytes.
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
