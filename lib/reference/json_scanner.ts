/**
 * A strict, lexeme-preserving JSON scanner over UTF-8 bytes.
 *
 * {@linkcode scanJson} validates a whole document in one iterative pass (an
 * explicit stack, so any depth is fine) and builds a compact index of
 * exact-size typed arrays: each container's span and the offsets of its
 * children (about 4 bytes per value and 16 per container, a fraction of the
 * document). {@linkcode JsonIndex.resolve} walks that index for an RFC 6901
 * pointer, rereading only the few bytes around each step, and the span it
 * returns addresses the value's original bytes, so numbers keep every digit.
 *
 * Strict means: RFC 8259 grammar, well-formed UTF-8 everywhere (RFC 3629), no
 * leading byte order mark, no escaped lone surrogates, and no duplicate member
 * names in any object (compared after decoding escapes), since a duplicate
 * would make a pointer ambiguous.
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import { arrayIndexOf, PointerError } from "./pointer.ts";

/** The kinds of JSON value a {@linkcode JsonSpan} can address. */
export type JsonKind =
  | "object"
  | "array"
  | "string"
  | "number"
  | "true"
  | "false"
  | "null";

/** The bytes `[start, end)` of one JSON value lexeme, and its kind. */
export interface JsonSpan {
  /** Offset of the value's first byte. */
  start: number;
  /** Offset just past the value's last byte. */
  end: number;
  /** What the value is. */
  kind: JsonKind;
}

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

/**
 * A scanned document: resolves pointer tokens to value spans.
 *
 * @example Resolving a pointer to its original lexeme
 * ```ts
 * import { parsePointer, scanJson } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 *
 * const index = scanJson(new TextEncoder().encode('{"n": [1.50, 2]}'));
 * const span = index.resolve(parsePointer("/n/0"));
 * assert.equal(span.kind, "number");
 * assert.equal(
 *   new TextDecoder().decode(index.bytes.subarray(span.start, span.end)),
 *   "1.50",
 * );
 * ```
 */
export interface JsonIndex {
  /** The scanned bytes. */
  readonly bytes: Uint8Array;
  /** How many values (of any kind, at any depth) the document holds. */
  readonly valueCount: number;
  /**
   * Bytes the index holds beside the document (its typed arrays, name tables
   * included), for memory budgets.
   */
  readonly byteLength: number;
  /**
   * The span of the value that decoded pointer tokens name.
   *
   * @param tokens Reference tokens, as {@linkcode parsePointer} returns them.
   * @returns The value's span.
   * @throws {PointerError} `pointer_not_found` for a missing member, an index
   * out of range or a step into a scalar; `invalid_pointer` for a token that
   * is not a canonical array index (`0`, `12`; never `01` or `-`) where an
   * array is indexed.
   */
  resolve(tokens: readonly string[]): JsonSpan;
  /**
   * The pointer tokens of the innermost value whose lexeme holds every byte
   * of `[start, end)`. Bytes of a member name count as the member's value;
   * bytes between values (whitespace, `,`, `:`) count as their container's.
   *
   * @param start Offset of the first byte (0 ≤ start < size).
   * @param end Offset just past the last byte (start < end ≤ size).
   * @returns Decoded tokens; `[]` for the top-level value.
   */
  locate(start: number, end: number): string[];
  /**
   * The first `limit` children of a container value: elements (no name) or
   * members (with their decoded names), and how many it has in all.
   *
   * @param span A container's span, as {@linkcode JsonIndex.resolve} returns it.
   * @param limit The most children to return.
   * @returns The children's spans in document order and the total count; a
   *   scalar has none.
   */
  childrenOf(span: JsonSpan, limit: number): JsonChildren;
}

/** Some children of a container value (see {@linkcode JsonIndex.childrenOf}). */
export interface JsonChildren {
  /** How many children the container has in all. */
  readonly count: number;
  /** The first children: a member's decoded name, and the value's span. */
  readonly items: readonly {
    readonly name?: string;
    readonly span: JsonSpan;
  }[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// Byte constants.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** 1 for the four JSON whitespace bytes. */
const WS = new Uint8Array(256);
WS[0x20] =
  WS[0x09] =
  WS[0x0a] =
  WS[0x0d] =
    1;

/** What each one-character escape stands for, by the byte after the `\`. */
const ESCAPES: Readonly<Record<number, string>> = {
  [QUOTE]: '"',
  [BACKSLASH]: "\\",
  0x2f: "/",
  0x62: "\b",
  0x66: "\f",
  0x6e: "\n",
  0x72: "\r",
  0x74: "\t",
};

/** Value of a hex digit, or 255. */
const HEX = new Uint8Array(256).fill(255);
for (let d = 0; d < 10; d++) HEX[0x30 + d] = d;
for (let d = 0; d < 6; d++) HEX[0x41 + d] = HEX[0x61 + d] = 10 + d;

/**
 * 1 for a byte that ends the fast path inside a string: a control character,
 * `"`, `\` or any non-ASCII byte.
 */
const STRING_STOP = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) STRING_STOP[b] = 1;
for (let b = 0x80; b < 0x100; b++) STRING_STOP[b] = 1;
STRING_STOP[QUOTE] = STRING_STOP[BACKSLASH] = 1;

/** Set by {@linkcode scanString}: whether the last string held an escape. */
let lastStringEscaped = false;

/**
 * Scan `bytes` as one strict JSON document and index every value.
 *
 * @param bytes The document, UTF-8 encoded.
 * @returns An index that resolves pointers without rescanning.
 * @throws {JsonScanError} `invalid_json` or `ambiguous_json`.
 *
 * @example Numbers keep every digit
 * ```ts
 * import { scanJson } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 *
 * const text = '{"id": 12345678901234567890123, "tags": ["a"]}';
 * const index = scanJson(new TextEncoder().encode(text));
 * const span = index.resolve(["id"]);
 * assert.equal(text.slice(span.start, span.end), "12345678901234567890123");
 * assert.equal(index.valueCount, 4);
 * ```
 */
export function scanJson(bytes: Uint8Array): JsonIndex {
  const n = bytes.length;
  // Containers, numbered in the order they open (so by start offset).
  let capacity = Math.max(16, Math.min(n >>> 6, 1 << 16));
  let cStarts = new Int32Array(capacity);
  let cEnds = new Int32Array(capacity);
  let cLists = new Int32Array(capacity);
  let containers = 0;
  let count = 0;

  // Final child lists, [count, at, at, …] per container, where `at` is an
  // element's value start or a member's key start.
  let children = new Int32Array(Math.max(64, Math.min(n >>> 3, 1 << 18)));
  let childrenTop = 0;
  // Children of the open containers, innermost last; key ends are scratch
  // for the duplicate check and are not kept.
  let pending = new Int32Array(256);
  let pendingKeyEnds = new Int32Array(256);
  let pendingTop = 0;

  // Open containers.
  let stackIds = new Int32Array(64);
  let stackBase = new Int32Array(64); // pendingTop when the container opened
  let stackEscapedKey = new Uint8Array(64);
  let depth = 0;
  let inObject = false;

  // Name hash tables of large objects (see LINEAR_MEMBERS).
  const tables = new Map<number, Int32Array>();
  let keyStart = -1;
  let keyEnd = -1;
  let i = 0;
  // Indentation is skipped four bytes at a time through an aligned view.
  const words = wordView(bytes);

  if (n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw invalid(0, "a byte order mark is not allowed");
  }

  for (;;) {
    // ---- A value is expected at i (after whitespace).
    if (i < n && WS[bytes[i]!] === 1) i = skipSpace(bytes, words, i, n);
    if (i >= n) throw invalid(i, "unexpected end of input, expected a value");
    count++;
    if (depth > 0) {
      if (pendingTop === pending.length) {
        pending = grow(pending, pending.length * 2);
        pendingKeyEnds = grow(pendingKeyEnds, pending.length);
      }
      if (inObject) {
        pending[pendingTop] = keyStart;
        pendingKeyEnds[pendingTop] = keyEnd;
      } else {
        pending[pendingTop] = i;
      }
      pendingTop++;
    }
    const c = bytes[i]!;
    if (c === LBRACE || c === LBRACKET) {
      if (containers === capacity) {
        capacity *= 2;
        cStarts = grow(cStarts, capacity);
        cEnds = grow(cEnds, capacity);
        cLists = grow(cLists, capacity);
      }
      const id = containers++;
      cStarts[id] = i;
      if (depth === stackIds.length) {
        stackIds = grow(stackIds, depth * 2);
        stackBase = grow(stackBase, depth * 2);
        const escaped = new Uint8Array(depth * 2);
        escaped.set(stackEscapedKey);
        stackEscapedKey = escaped;
      }
      stackIds[depth] = id;
      stackBase[depth] = pendingTop;
      stackEscapedKey[depth] = 0;
      depth++;
      inObject = c === LBRACE;
      i++;
      if (i < n && WS[bytes[i]!] === 1) i = skipSpace(bytes, words, i, n);
      if (i < n && bytes[i] === (inObject ? RBRACE : RBRACKET)) {
        // Empty container: close it right away.
        cEnds[id] = i + 1;
        cLists[id] = childrenTop;
        if (childrenTop === children.length) {
          children = grow(children, children.length * 2);
        }
        children[childrenTop++] = 0;
        depth--;
        i++;
        if (depth > 0) {
          inObject = bytes[cStarts[stackIds[depth - 1]!]!] === LBRACE;
        }
      } else if (inObject) {
        // First member name.
        keyStart = i;
        i = scanMemberName(bytes, words, i, n, "expected a member name");
        keyEnd = lastKeyEnd;
        if (lastStringEscaped) stackEscapedKey[depth - 1] = 1;
        continue;
      } else {
        continue;
      }
    } else if (c === QUOTE) {
      i = scanString(bytes, words, i, n);
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      i = scanNumber(bytes, i, n);
    } else if (c === 0x74) {
      i = scanLiteral(bytes, i, n, TRUE);
    } else if (c === 0x66) {
      i = scanLiteral(bytes, i, n, FALSE);
    } else if (c === 0x6e) {
      i = scanLiteral(bytes, i, n, NULL);
    } else {
      throw invalid(i, `unexpected ${describe(bytes, i)}, expected a value`);
    }

    // ---- A value just ended at i: a separator, a close, or the end.
    for (;;) {
      if (i < n && WS[bytes[i]!] === 1) i = skipSpace(bytes, words, i, n);
      if (depth === 0) {
        if (i < n) {
          throw invalid(
            i,
            `unexpected ${describe(bytes, i)} after the top-level value`,
          );
        }
        // Keep exactly what is used: no slack from doubling.
        return new Index(bytes, {
          cStarts: cStarts.slice(0, containers),
          cEnds: cEnds.slice(0, containers),
          cLists: cLists.slice(0, containers),
          children: children.slice(0, childrenTop),
          count,
          tables,
        });
      }
      if (i >= n) {
        throw invalid(i, "unexpected end of input inside a container");
      }
      const d = bytes[i]!;
      if (d === COMMA) {
        i++;
        if (inObject) {
          if (i < n && WS[bytes[i]!] === 1) i = skipSpace(bytes, words, i, n);
          keyStart = i;
          i = scanMemberName(
            bytes,
            words,
            i,
            n,
            "expected a member name after ','",
          );
          keyEnd = lastKeyEnd;
          if (lastStringEscaped) stackEscapedKey[depth - 1] = 1;
        }
        break;
      }
      if (d !== (inObject ? RBRACE : RBRACKET)) {
        throw invalid(
          i,
          `unexpected ${describe(bytes, i)}, expected ',' or '${
            inObject ? "}" : "]"
          }'`,
        );
      }
      // Close the innermost container.
      depth--;
      const cid = stackIds[depth]!;
      const base = stackBase[depth]!;
      const members = pendingTop - base;
      cEnds[cid] = i + 1;
      if (inObject && members > 1) {
        const table = checkDuplicates(
          bytes,
          pending,
          pendingKeyEnds,
          base,
          pendingTop,
          stackEscapedKey[depth] === 1,
        );
        if (table !== undefined) tables.set(cid, table);
      }
      if (childrenTop + members + 1 > children.length) {
        children = grow(
          children,
          Math.max(children.length * 2, childrenTop + members + 1),
        );
      }
      cLists[cid] = childrenTop;
      children[childrenTop++] = members;
      children.set(pending.subarray(base, pendingTop), childrenTop);
      childrenTop += members;
      pendingTop = base;
      i++;
      if (depth > 0) {
        inObject = bytes[cStarts[stackIds[depth - 1]!]!] === LBRACE;
      }
    }
  }
}

/** Where the member name {@linkcode scanMemberName} last read ends. */
let lastKeyEnd = -1;

/**
 * Scans the member name at `i` and the `:` after it; returns the offset
 * after the `:`. The name ends at {@linkcode lastKeyEnd}, and
 * {@linkcode lastStringEscaped} tells whether it holds an escape.
 *
 * @param missing The message when no name starts at `i`.
 */
function scanMemberName(
  bytes: Uint8Array,
  words: WordView,
  i: number,
  n: number,
  missing: string,
): number {
  if (i >= n || bytes[i] !== QUOTE) throw invalid(i, missing);
  i = scanString(bytes, words, i, n);
  lastKeyEnd = i;
  if (i < n && WS[bytes[i]!] === 1) i = skipSpace(bytes, words, i, n);
  if (i >= n || bytes[i] !== COLON) {
    throw invalid(i, "expected ':' after a member name");
  }
  return i + 1;
}

/** A 32-bit view of the 4-byte-aligned part of `bytes`. */
interface WordView {
  view: Int32Array;
  /** Offset in `bytes` of `view[0]`. */
  base: number;
  /** Last offset in `bytes` at which a whole word can be read. */
  last: number;
}

function wordView(bytes: Uint8Array): WordView {
  const base = (4 - (bytes.byteOffset & 3)) & 3;
  const count = bytes.length > base ? (bytes.length - base) >>> 2 : 0;
  const view = count === 0
    ? new Int32Array(0)
    : new Int32Array(bytes.buffer, bytes.byteOffset + base, count);
  return { view, base, last: base + (count << 2) - 4 };
}

const SPACES = 0x20202020;

/** Skip JSON whitespace from `i`; returns the first other offset (or `n`). */
function skipSpace(
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

const TRUE = encoder.encode("true");
const FALSE = encoder.encode("false");
const NULL = encoder.encode("null");

function scanLiteral(
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
function scanNumber(bytes: Uint8Array, i: number, n: number): number {
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
 * {@linkcode lastStringEscaped}.
 */
function scanString(
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
        const q = x ^ 0x22222222;
        const s = x ^ 0x5c5c5c5c;
        if (
          ((((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s) |
            ((x - 0x20202020) & ~x) | x) & 0x80808080) !== 0
        ) break;
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
      lastStringEscaped = escaped;
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
      if (ESCAPES[e] !== undefined) {
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

function hex4(bytes: Uint8Array, i: number, n: number): number {
  if (i + 4 > n) throw invalid(i, "unterminated \\u escape");
  const a = HEX[bytes[i]!]!;
  const b = HEX[bytes[i + 1]!]!;
  const c = HEX[bytes[i + 2]!]!;
  const d = HEX[bytes[i + 3]!]!;
  if ((a | b | c | d) === 255) {
    throw invalid(i, "a \\u escape needs four hex digits");
  }
  return (a << 12) | (b << 8) | (c << 4) | d;
}

/**
 * Objects with more members than this keep a name hash table (from the
 * duplicate check, or built on first lookup when names use escapes).
 */
const LINEAR_MEMBERS = 256;

/** Scratch hash table for duplicate detection in large objects. */
let table = new Int32Array(1024);

/**
 * Throw `ambiguous_json` when two members of one object share a decoded
 * name; the members' key spans are `[keyStarts[p], keyEnds[p])` for `p` in
 * `[from, to)`. Returns the name table of a large object: key starts by
 * name hash, -1 for an empty slot.
 */
function checkDuplicates(
  bytes: Uint8Array,
  keyStarts: Int32Array,
  keyEnds: Int32Array,
  from: number,
  to: number,
  escaped: boolean,
): Int32Array | undefined {
  const members = to - from;
  if (escaped) {
    // Some name uses escapes: compare decoded names.
    const seen = new Set<string>();
    for (let p = from; p < to; p++) {
      const name = decodeStringBytes(bytes, keyStarts[p]!, keyEnds[p]!);
      if (seen.has(name)) throw duplicate(bytes, keyStarts[p]!, keyEnds[p]!);
      seen.add(name);
    }
    return undefined;
  }
  // No escapes: equal names are equal bytes (UTF-8 is already validated).
  if (members <= 8) {
    for (let p = from + 1; p < to; p++) {
      const as = keyStarts[p]!;
      const ae = keyEnds[p]!;
      for (let q = from; q < p; q++) {
        if (sameBytes(bytes, as, ae, keyStarts[q]!, keyEnds[q]!)) {
          throw duplicate(bytes, as, ae);
        }
      }
    }
    return undefined;
  }
  let size = 32;
  while (size < members * 2) size <<= 1;
  if (table.length < size) table = new Int32Array(size);
  const mask = size - 1;
  // Slots hold p - from; -1 is empty.
  table.fill(-1, 0, size);
  for (let p = from; p < to; p++) {
    const as = keyStarts[p]!;
    const ae = keyEnds[p]!;
    const h = hashBytes(bytes, as + 1, ae - 1);
    let slot = h & mask;
    for (;;) {
      const q = table[slot]!;
      if (q === -1) {
        table[slot] = p - from;
        break;
      }
      if (sameBytes(bytes, as, ae, keyStarts[from + q]!, keyEnds[from + q]!)) {
        throw duplicate(bytes, as, ae);
      }
      slot = (slot + 1) & mask;
    }
  }
  if (members <= LINEAR_MEMBERS) return undefined;
  // The same table serves name lookups later, holding key starts.
  const kept = table.slice(0, size);
  for (let k = 0; k < size; k++) {
    if (kept[k] !== -1) kept[k] = keyStarts[from + kept[k]!]!;
  }
  return kept;
}

/** Per-process seed, so crafted names cannot force hash collisions. */
const HASH_SEED = crypto.getRandomValues(new Int32Array(1))[0]!;

/** MurmurHash3 (x86, 32-bit) of `bytes[from..to)`, seeded per process. */
function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let h = HASH_SEED;
  let k = from;
  for (; k + 4 <= to; k += 4) {
    let w = bytes[k]! | (bytes[k + 1]! << 8) | (bytes[k + 2]! << 16) |
      (bytes[k + 3]! << 24);
    w = Math.imul(w, 0xcc9e2d51);
    w = Math.imul((w << 15) | (w >>> 17), 0x1b873593);
    h ^= w;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let w = 0;
  switch (to - k) {
    case 3:
      w ^= bytes[k + 2]! << 16;
    // falls through
    case 2:
      w ^= bytes[k + 1]! << 8;
    // falls through
    case 1:
      w ^= bytes[k]!;
      w = Math.imul(w, 0xcc9e2d51);
      w = Math.imul((w << 15) | (w >>> 17), 0x1b873593);
      h ^= w;
  }
  h ^= to - from;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function hasBackslash(bytes: Uint8Array, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (bytes[k] === BACKSLASH) return true;
  return false;
}

function hashOf(bytes: Uint8Array): number {
  return hashBytes(bytes, 0, bytes.length);
}

function sameBytes(
  bytes: Uint8Array,
  as: number,
  ae: number,
  bs: number,
  be: number,
): boolean {
  if (ae - as !== be - bs) return false;
  for (let k = 0; k < ae - as; k++) {
    if (bytes[as + k] !== bytes[bs + k]) return false;
  }
  return true;
}

function duplicate(bytes: Uint8Array, start: number, end: number): never {
  throw new JsonScanError(
    "ambiguous_json",
    `Duplicate member name ${
      clip(decodeStringBytes(bytes, start, end))
    } at byte ${start}: a pointer to it would be ambiguous`,
    { offset: start },
  );
}

function invalid(offset: number, why: string): JsonScanError {
  return new JsonScanError(
    "invalid_json",
    `Invalid JSON at byte ${offset}: ${why}`,
    { offset },
  );
}

function invalidUtf8(offset: number): JsonScanError {
  return invalid(offset, "malformed UTF-8 in a string");
}

function describe(bytes: Uint8Array, i: number): string {
  if (i >= bytes.length) return "end of input";
  const b = bytes[i]!;
  if (b >= 0x20 && b < 0x7f) return `'${String.fromCharCode(b)}'`;
  return `byte 0x${b.toString(16).padStart(2, "0")}`;
}

function clip(text: string): string {
  const quoted = JSON.stringify(text);
  return quoted.length > 66 ? quoted.slice(0, 64) + '…"' : quoted;
}

function grow<T extends Int32Array | Uint8Array>(array: T, size: number): T {
  const next = new (array.constructor as new (n: number) => T)(size);
  next.set(array);
  return next;
}

interface IndexData {
  /** Start offset of each container, in opening order (so ascending). */
  cStarts: Int32Array;
  /** End offset (after the close) of each container. */
  cEnds: Int32Array;
  /** Offset of each container's list in `children`. */
  cLists: Int32Array;
  /** Per container: member count, then each value start (arrays) or key start (objects). */
  children: Int32Array;
  count: number;
  /** Name tables of objects with more than LINEAR_MEMBERS members: key starts by hash. */
  tables: Map<number, Int32Array>;
}

/** The offset just past the string lexeme starting at `i` (already validated). */
function stringEnd(bytes: Uint8Array, i: number): number {
  i++;
  for (;;) {
    const b = bytes[i]!;
    if (b === QUOTE) return i + 1;
    i += b === BACKSLASH ? 2 : 1;
  }
}

/** The offset just past the scalar lexeme starting at `i` (already validated). */
function scalarEnd(bytes: Uint8Array, i: number): number {
  const c = bytes[i]!;
  if (c === QUOTE) return stringEnd(bytes, i);
  if (c === 0x74 || c === 0x6e) return i + 4;
  if (c === 0x66) return i + 5;
  const n = bytes.length;
  i++;
  for (; i < n; i++) {
    const d = bytes[i]!;
    if (
      !((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 ||
        d === 0x2b || d === 0x2d)
    ) break;
  }
  return i;
}

/**
 * The index keeps containers only: each one's span and its children's
 * offsets (an element's value start, a member's key start). A member's value
 * start, a scalar's end and a key's end are found again in the bytes when a
 * pointer needs them; a nested container's number by binary search over the
 * container starts. So it costs about 4 bytes per value and 16 per
 * container, well under the document for any realistic JSON.
 */
class Index implements JsonIndex {
  readonly bytes: Uint8Array;
  readonly #data: IndexData;

  constructor(bytes: Uint8Array, data: IndexData) {
    this.bytes = bytes;
    this.#data = data;
  }

  get valueCount(): number {
    return this.#data.count;
  }

  get byteLength(): number {
    const { cStarts, cEnds, cLists, children, tables } = this.#data;
    let total = cStarts.byteLength + cEnds.byteLength + cLists.byteLength +
      children.byteLength;
    for (const table of tables.values()) total += table.byteLength;
    return total;
  }

  /** The number of the container starting at `at`. */
  #container(at: number): number {
    const starts = this.#data.cStarts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid]! < at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The value start of the member whose key starts at `key`. */
  #memberValue(key: number): number {
    const bytes = this.bytes;
    let i = stringEnd(bytes, key);
    while (WS[bytes[i]!] === 1) i++;
    i++; // the colon
    while (WS[bytes[i]!] === 1) i++;
    return i;
  }

  /** The key start of the member of a small object named `name`, or -1. */
  #scanMembers(list: number, size: number, name: Uint8Array): number {
    const { children } = this.#data;
    const bytes = this.bytes;
    for (let k = 1; k <= size; k++) {
      const key = children[list + k]!;
      if (nameMatches(bytes, key, stringEnd(bytes, key), name)) return key;
    }
    return -1;
  }

  /** The key start of the member of a large object named `name`, or -1. */
  #lookup(object: number, name: Uint8Array): number {
    const bytes = this.bytes;
    let table = this.#data.tables.get(object);
    if (table === undefined) table = this.#buildTable(object);
    const mask = table.length - 1;
    let slot = hashBytes(name, 0, name.length) & mask;
    for (;;) {
      const key = table[slot]!;
      if (key === -1) return -1;
      if (nameMatches(bytes, key, stringEnd(bytes, key), name)) return key;
      slot = (slot + 1) & mask;
    }
  }

  #buildTable(object: number): Int32Array {
    const bytes = this.bytes;
    const { cLists, children } = this.#data;
    const list = cLists[object]!;
    const size = children[list]!;
    let capacity = 64;
    while (capacity < size * 2) capacity <<= 1;
    const table = new Int32Array(capacity).fill(-1);
    const mask = capacity - 1;
    for (let k = 1; k <= size; k++) {
      const ks = children[list + k]!;
      const ke = stringEnd(bytes, ks);
      // Hash the decoded name, so escaped names meet their tokens.
      const h = hasBackslash(bytes, ks + 1, ke - 1)
        ? hashOf(encoder.encode(decodeStringBytes(bytes, ks, ke)))
        : hashBytes(bytes, ks + 1, ke - 1);
      let slot = h & mask;
      while (table[slot] !== -1) slot = (slot + 1) & mask;
      table[slot] = ks;
    }
    this.#data.tables.set(object, table);
    return table;
  }

  resolve(tokens: readonly string[]): JsonSpan {
    const bytes = this.bytes;
    const { cEnds, cLists, children } = this.#data;
    let at = 0;
    while (WS[bytes[at]!] === 1) at++;
    for (let t = 0; t < tokens.length; t++) {
      const token = tokens[t]!;
      const first = bytes[at]!;
      if (first === LBRACKET) {
        const index = arrayIndexOf(token);
        if (index < 0) {
          throw new PointerError(
            "invalid_pointer",
            `Token ${t + 1} (${
              JSON.stringify(token)
            }) indexes an array but is not a canonical array index (0, 1, 2, … without leading zeros)`,
          );
        }
        const list = cLists[this.#container(at)]!;
        const size = children[list]!;
        if (index >= size) {
          throw new PointerError(
            "pointer_not_found",
            `Token ${
              t + 1
            } asks for index ${token} of an array of ${size} elements`,
          );
        }
        at = children[list + 1 + index]!;
      } else if (first === LBRACE) {
        const id = this.#container(at);
        const list = cLists[id]!;
        const size = children[list]!;
        const name = encoder.encode(token);
        let found = -1;
        // A name with a lone surrogate can never match (keys are UTF-8).
        if (token.isWellFormed()) {
          found = size > LINEAR_MEMBERS
            ? this.#lookup(id, name)
            : this.#scanMembers(list, size, name);
        }
        if (found < 0) {
          throw new PointerError(
            "pointer_not_found",
            `Token ${t + 1} names member ${
              clip(token)
            }, which the object does not have`,
          );
        }
        at = this.#memberValue(found);
      } else {
        throw new PointerError(
          "pointer_not_found",
          `Token ${t + 1} steps into ${kindOf(first)}, which has no members`,
        );
      }
    }
    const first = bytes[at]!;
    const end = first === LBRACE || first === LBRACKET
      ? cEnds[this.#container(at)]!
      : scalarEnd(bytes, at);
    return { start: at, end, kind: kindOf(first) };
  }

  childrenOf(span: JsonSpan, limit: number): JsonChildren {
    const bytes = this.bytes;
    const first = bytes[span.start]!;
    if (first !== LBRACE && first !== LBRACKET) return { count: 0, items: [] };
    const { cEnds, cLists, children } = this.#data;
    const list = cLists[this.#container(span.start)]!;
    const count = children[list]!;
    const items: { name?: string; span: JsonSpan }[] = [];
    for (let k = 1; k <= Math.min(count, limit); k++) {
      const child = children[list + k]!;
      const value = first === LBRACE ? this.#memberValue(child) : child;
      const c = bytes[value]!;
      const end = c === LBRACE || c === LBRACKET
        ? cEnds[this.#container(value)]!
        : scalarEnd(bytes, value);
      const valueSpan = { start: value, end, kind: kindOf(c) };
      items.push(
        first === LBRACE
          ? {
            name: decodeStringBytes(bytes, child, stringEnd(bytes, child)),
            span: valueSpan,
          }
          : { span: valueSpan },
      );
    }
    return { count, items };
  }

  locate(start: number, end: number): string[] {
    const bytes = this.bytes;
    const { cEnds, cLists, children } = this.#data;
    const last = Math.max(start, end - 1);
    const tokens: string[] = [];
    let at = 0;
    while (WS[bytes[at]!] === 1) at++;
    for (;;) {
      const first = bytes[at]!;
      if (first !== LBRACE && first !== LBRACKET) return tokens;
      const list = cLists[this.#container(at)]!;
      const size = children[list]!;
      // The last child starting at or before `start` (children ascend).
      let lo = 1;
      let hi = size;
      let k = 0;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        if (children[list + mid]! <= start) {
          k = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      if (k === 0) return tokens;
      const child = children[list + k]!;
      const value = first === LBRACE ? this.#memberValue(child) : child;
      const c = bytes[value]!;
      const valueEnd = c === LBRACE || c === LBRACKET
        ? cEnds[this.#container(value)]!
        : scalarEnd(bytes, value);
      if (last >= valueEnd) return tokens;
      tokens.push(
        first === LBRACE
          ? decodeStringBytes(bytes, child, stringEnd(bytes, child))
          : String(k - 1),
      );
      at = value;
    }
  }
}

/**
 * Whether the string lexeme `[start, end)` decodes to the UTF-8 bytes `name`.
 * Bytes before the first escape decode to themselves, and escapes only ever
 * shrink, so a raw comparison settles every case but names with escapes.
 */
function nameMatches(
  bytes: Uint8Array,
  start: number,
  end: number,
  name: Uint8Array,
): boolean {
  const from = start + 1;
  const raw = end - 1 - from;
  const len = name.length;
  if (raw < len) return false;
  for (let k = 0; k < len; k++) {
    const x = bytes[from + k]!;
    if (x === BACKSLASH) {
      return decodeStringBytes(bytes, start, end) === decoder.decode(name);
    }
    if (x !== name[k]) return false;
  }
  return raw === len;
}

function kindOf(first: number): JsonKind {
  switch (first) {
    case LBRACE:
      return "object";
    case LBRACKET:
      return "array";
    case QUOTE:
      return "string";
    case 0x74:
      return "true";
    case 0x66:
      return "false";
    case 0x6e:
      return "null";
    default:
      return "number";
  }
}

/**
 * Decode the JSON string value that `span` addresses (quotes included) in
 * `bytes`, resolving every escape.
 *
 * @param bytes The scanned document.
 * @param span The span of a string value, as {@linkcode JsonIndex.resolve}
 * returns it.
 * @returns The decoded string.
 * @throws {TypeError} When the span is not a string value.
 *
 * @example Decoding escapes in a string value
 * ```ts
 * import { scanJson } from "@loom/loom/reference";
 * import { decodeJsonString } from "./json_scanner.ts";
 * import assert from "node:assert/strict";
 *
 * const index = scanJson(new TextEncoder().encode('["caf\\u00e9\\n"]'));
 * assert.equal(decodeJsonString(index.bytes, index.resolve(["0"])), "café\n");
 * ```
 */
export function decodeJsonString(
  bytes: Uint8Array,
  span: { start: number; end: number; kind?: JsonKind },
): string {
  if (
    (span.kind !== undefined && span.kind !== "string") ||
    span.end - span.start < 2 || bytes[span.start] !== QUOTE ||
    bytes[span.end - 1] !== QUOTE
  ) {
    throw new TypeError(
      `Cannot decode bytes ${span.start}..${span.end} as a JSON string: the span is not a string value`,
    );
  }
  return decodeStringBytes(bytes, span.start, span.end);
}

/** Decode a string lexeme `[start, end)` (quotes included) already scanned. */
function decodeStringBytes(
  bytes: Uint8Array,
  start: number,
  end: number,
): string {
  const inner = bytes.subarray(start + 1, end - 1);
  let from = inner.indexOf(BACKSLASH);
  if (from < 0) return decoder.decode(inner);
  let out = decoder.decode(inner.subarray(0, from));
  const n = inner.length;
  let i = from;
  while (i < n) {
    // inner[i] is a backslash, and the escape after it is valid.
    const e = inner[i + 1]!;
    if (e === 0x75) {
      out += String.fromCharCode(hex4(inner, i + 2, n));
      i += 6;
    } else {
      out += ESCAPES[e]!;
      i += 2;
    }
    from = i;
    while (i < n && inner[i] !== BACKSLASH) i++;
    if (i > from) out += decoder.decode(inner.subarray(from, i));
  }
  return out;
}
