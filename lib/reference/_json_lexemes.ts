/**
 * The lexemes of strict JSON, each checked where it stands: whitespace,
 * literals, numbers, strings (escapes and UTF-8 byte by byte) and member
 * names. `scanJson` calls them; they throw `JsonScanError`s.
 *
 * @module
 */
import { describe, invalid, invalidUtf8 } from "./json_scan_error.ts";
import {
  BACKSLASH,
  hex4 as hex4Digits,
  QUOTE,
  SPECIAL,
  specialBits,
  UNESCAPE,
} from "./json_string.ts";

const encoder = new TextEncoder();

// The grammar's bytes.
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

/** 1 for the four JSON whitespace bytes. */
export const WS: Uint8Array = new Uint8Array(256);
WS[0x20] =
  WS[0x09] =
  WS[0x0a] =
  WS[0x0d] =
    1;

/**
 * 1 for a byte that ends the fast path inside a string: a control character,
 * `"`, `\` or any non-ASCII byte (checked as UTF-8 where it stands).
 */
const STRING_STOP = SPECIAL.map((special, b) => b >= 0x80 ? 1 : special);

/** What the last string {@linkcode scanString} read was: where it ended, whether it held an escape. */
export const lastString: { end: number; escaped: boolean } = {
  end: -1,
  escaped: false,
};

/**
 * Scans the member name at `i` and the `:` after it; returns the offset
 * after the `:`. The name ends at `lastString.end`, and
 * `lastString.escaped` tells whether it holds an escape.
 *
 * @param missing The message when no name starts at `i`.
 */
export function scanMemberName(
  bytes: Uint8Array,
  words: WordView,
  i: number,
  n: number,
  missing: string,
): number {
  if (i >= n || bytes[i] !== QUOTE) throw invalid(i, missing);
  i = scanString(bytes, words, i, n);
  lastString.end = i;
  if (i < n && WS[bytes[i]!] === 1) i = skipSpace(bytes, words, i, n);
  if (i >= n || bytes[i] !== COLON) {
    throw invalid(i, "expected ':' after a member name");
  }
  return i + 1;
}

/** A 32-bit view of the 4-byte-aligned part of `bytes`. */
export interface WordView {
  view: Int32Array;
  /** Offset in `bytes` of `view[0]`. */
  base: number;
  /** Last offset in `bytes` at which a whole word can be read. */
  last: number;
}

export function wordView(bytes: Uint8Array): WordView {
  const base = (4 - (bytes.byteOffset & 3)) & 3;
  const count = bytes.length > base ? (bytes.length - base) >>> 2 : 0;
  const view = count === 0
    ? new Int32Array(0)
    : new Int32Array(bytes.buffer, bytes.byteOffset + base, count);
  return { view, base, last: base + (count << 2) - 4 };
}

const SPACES = 0x20202020;

/** Skip JSON whitespace from `i`; returns the first other offset (or `n`). */
export function skipSpace(
  bytes: Uint8Array,
  words: WordView,
  i: number,
  n: number,
): number {
  const { view, base, last } = words;
  while (i < n) {
    const c = bytes[i]!;
    if (c === 0x20) {
      if (
        ((i - base) & 3) === 0 && i >= base && i <= last &&
        view[(i - base) >>> 2] === SPACES
      ) {
        i += 4;
      } else {
        i++;
      }
    } else if (c === 0x0a || c === 0x0d || c === 0x09) {
      i++;
    } else {
      return i;
    }
  }
  return i;
}

export const TRUE = encoder.encode("true");
export const FALSE = encoder.encode("false");
export const NULL = encoder.encode("null");

export function scanLiteral(
  bytes: Uint8Array,
  i: number,
  n: number,
  literal: Uint8Array,
): number {
  const len = literal.length;
  if (i + len > n) throw invalid(i, "unexpected end of input in a literal");
  for (let k = 1; k < len; k++) {
    if (bytes[i + k] !== literal[k]) {
      throw invalid(i + k, `unexpected ${describe(bytes, i + k)} in a literal`);
    }
  }
  return i + len;
}

/** Scan a number lexeme starting at `i`; returns the offset after it. */
export function scanNumber(bytes: Uint8Array, i: number, n: number): number {
  if (bytes[i] === 0x2d) i++;
  if (i >= n) throw invalid(i, "unexpected end of input in a number");
  let c = bytes[i]!;
  if (c === 0x30) {
    i++;
  } else if (c >= 0x31 && c <= 0x39) {
    i++;
    while (i < n && (c = bytes[i]!) >= 0x30 && c <= 0x39) i++;
  } else {
    throw invalid(i, "a number needs a digit after '-'");
  }
  if (i < n && bytes[i] === 0x2e) {
    i++;
    const digits = i;
    while (i < n && (c = bytes[i]!) >= 0x30 && c <= 0x39) i++;
    if (i === digits) throw invalid(i, "a number needs digits after '.'");
  }
  if (i < n && ((c = bytes[i]!) === 0x65 || c === 0x45)) {
    i++;
    if (i < n && ((c = bytes[i]!) === 0x2b || c === 0x2d)) i++;
    const digits = i;
    while (i < n && (c = bytes[i]!) >= 0x30 && c <= 0x39) i++;
    if (i === digits) throw invalid(i, "a number needs digits in its exponent");
  }
  return i;
}

/**
 * Scan a string lexeme whose opening quote is at `i`, validating escapes and
 * UTF-8; returns the offset after the closing quote and sets
 * `lastString.escaped`.
 */
export function scanString(
  bytes: Uint8Array,
  words: WordView,
  i: number,
  n: number,
): number {
  const { view, base, last } = words;
  i++;
  let escaped = false;
  for (;;) {
    // Byte by byte up to a word boundary, then four bytes at a time while
    // no byte is a quote, a backslash, a control character or non-ASCII.
    while (i < n && ((i - base) & 3) !== 0 && STRING_STOP[bytes[i]!] === 0) {
      i++;
    }
    if (i >= base && ((i - base) & 3) === 0) {
      while (i <= last) {
        const x = view[(i - base) >> 2]!;
        if ((specialBits(x) | (x & 0x80808080)) !== 0) break;
        i += 4;
      }
    }
    while (i < n && STRING_STOP[bytes[i]!] === 0) i++;
    if (i >= n) throw invalid(i, "unterminated string");
    const b = bytes[i]!;
    if (b >= 0x80) {
      // Non-ASCII: one well-formed UTF-8 sequence (Unicode Table 3-7).
      if (b >= 0xe1 && b <= 0xef && b !== 0xed) {
        // The common three-byte case (most of the BMP) first.
        if (
          i + 2 >= n || (bytes[i + 1]! & 0xc0) !== 0x80 ||
          (bytes[i + 2]! & 0xc0) !== 0x80
        ) throw invalidUtf8(i);
        i += 3;
        continue;
      }
      if (b < 0xc2) throw invalidUtf8(i);
      if (b < 0xe0) {
        if (i + 1 >= n || (bytes[i + 1]! & 0xc0) !== 0x80) {
          throw invalidUtf8(i);
        }
        i += 2;
        continue;
      }
      if (b < 0xf0) {
        // E0 (no overlongs) or ED (no surrogates).
        if (i + 2 >= n) throw invalidUtf8(i);
        const b1 = bytes[i + 1]!;
        if (b === 0xe0 ? b1 < 0xa0 || b1 > 0xbf : b1 < 0x80 || b1 > 0x9f) {
          throw invalidUtf8(i);
        }
        if ((bytes[i + 2]! & 0xc0) !== 0x80) throw invalidUtf8(i);
        i += 3;
        continue;
      }
      if (b < 0xf5) {
        if (i + 3 >= n) throw invalidUtf8(i);
        const b1 = bytes[i + 1]!;
        if (b === 0xf0) {
          if (b1 < 0x90 || b1 > 0xbf) throw invalidUtf8(i);
        } else if (b === 0xf4) {
          if (b1 < 0x80 || b1 > 0x8f) throw invalidUtf8(i);
        } else if ((b1 & 0xc0) !== 0x80) throw invalidUtf8(i);
        if (
          (bytes[i + 2]! & 0xc0) !== 0x80 || (bytes[i + 3]! & 0xc0) !== 0x80
        ) throw invalidUtf8(i);
        i += 4;
        continue;
      }
      throw invalidUtf8(i);
    }
    if (b === QUOTE) {
      lastString.escaped = escaped;
      return i + 1;
    }
    if (b === BACKSLASH) {
      escaped = true;
      if (i + 1 >= n) throw invalid(i, "unterminated escape");
      const e = bytes[i + 1]!;
      if (e === 0x75) {
        const unit = hex4(bytes, i + 2, n);
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // A high surrogate must be followed by an escaped low surrogate.
          if (
            i + 7 < n && bytes[i + 6] === BACKSLASH && bytes[i + 7] === 0x75
          ) {
            const low = hex4(bytes, i + 8, n);
            if (low >= 0xdc00 && low <= 0xdfff) {
              i += 12;
              continue;
            }
          }
          throw invalid(i, "an escaped high surrogate has no low surrogate");
        }
        if (unit >= 0xdc00 && unit <= 0xdfff) {
          throw invalid(i, "an escaped low surrogate has no high surrogate");
        }
        i += 6;
        continue;
      }
      if (UNESCAPE[e] !== 0) {
        i += 2;
        continue;
      }
      throw invalid(i, `invalid escape ${describe(bytes, i + 1)}`);
    }
    if (b < 0x20) {
      throw invalid(i, "a control character must be escaped in a string");
    }
    throw invalidUtf8(i); // unreachable: the stop table covers every case
  }
}

/** The code unit of the `\\u` escape's digits at `i` (checked). */
function hex4(bytes: Uint8Array, i: number, n: number): number {
  if (i + 4 > n) throw invalid(i, "unterminated \\u escape");
  const unit = hex4Digits(bytes, i);
  if (unit < 0) throw invalid(i, "a \\u escape needs four hex digits");
  return unit;
}
