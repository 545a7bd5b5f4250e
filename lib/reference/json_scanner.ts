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
 * The scanner's parts live beside it: the lexemes (`_json_lexemes.ts`, with
 * the string lexer `json_string.ts` it shares with the gateway's streaming
 * reader), member names (`_json_names.ts`), the index it builds
 * (`json_index.ts`) and its error (`json_scan_error.ts`).
 *
 * @module
 */
import {
  type JsonChildren,
  type JsonIndex,
  type JsonKind,
  type JsonSpan,
  ScannedIndex,
} from "./json_index.ts";
import { describe, invalid, JsonScanError } from "./json_scan_error.ts";
import { QUOTE } from "./json_string.ts";
import {
  COMMA,
  FALSE,
  lastString,
  LBRACE,
  LBRACKET,
  NULL,
  RBRACE,
  RBRACKET,
  scanLiteral,
  scanMemberName,
  scanNumber,
  scanString,
  skipSpace,
  TRUE,
  wordView,
  WS,
} from "./_json_lexemes.ts";
import { checkDuplicates } from "./_json_names.ts";

export type { JsonChildren, JsonIndex, JsonKind, JsonSpan };
export { JsonScanError };

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
        keyEnd = lastString.end;
        if (lastString.escaped) stackEscapedKey[depth - 1] = 1;
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
        return new ScannedIndex(bytes, {
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
          keyEnd = lastString.end;
          if (lastString.escaped) stackEscapedKey[depth - 1] = 1;
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

function grow<T extends Int32Array | Uint8Array>(array: T, size: number): T {
  const next = new (array.constructor as new (n: number) => T)(size);
  next.set(array);
  return next;
}
