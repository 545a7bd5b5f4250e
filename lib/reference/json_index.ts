/**
 * What {@linkcode scanJson} builds: the index of a scanned document, and how
 * pointers, children and byte ranges are resolved over it without scanning
 * again.
 *
 * @module
 */
import { clip } from "./json_scan_error.ts";
import { BACKSLASH, decodeStringLexeme, QUOTE } from "./json_string.ts";
import { LBRACE, LBRACKET, WS } from "./_json_lexemes.ts";
import {
  hasBackslash,
  hashBytes,
  hashOf,
  LINEAR_MEMBERS,
  nameMatches,
} from "./_json_names.ts";
import { arrayIndexOf, PointerError } from "./pointer.ts";

const encoder = new TextEncoder();

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

export interface IndexData {
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
export class ScannedIndex implements JsonIndex {
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

  /** The offset just past the value starting at `at`. */
  #valueEnd(at: number): number {
    const first = this.bytes[at]!;
    return first === LBRACE || first === LBRACKET
      ? this.#data.cEnds[this.#container(at)]!
      : scalarEnd(this.bytes, at);
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
        ? hashOf(encoder.encode(decodeStringLexeme(bytes, ks, ke)))
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
    const { cLists, children } = this.#data;
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
    return { start: at, end: this.#valueEnd(at), kind: kindOf(bytes[at]!) };
  }

  childrenOf(span: JsonSpan, limit: number): JsonChildren {
    const bytes = this.bytes;
    const first = bytes[span.start]!;
    if (first !== LBRACE && first !== LBRACKET) return { count: 0, items: [] };
    const { cLists, children } = this.#data;
    const list = cLists[this.#container(span.start)]!;
    const count = children[list]!;
    const items: { name?: string; span: JsonSpan }[] = [];
    for (let k = 1; k <= Math.min(count, limit); k++) {
      const child = children[list + k]!;
      const value = first === LBRACE ? this.#memberValue(child) : child;
      const valueSpan = {
        start: value,
        end: this.#valueEnd(value),
        kind: kindOf(bytes[value]!),
      };
      items.push(
        first === LBRACE
          ? {
            name: decodeStringLexeme(bytes, child, stringEnd(bytes, child)),
            span: valueSpan,
          }
          : { span: valueSpan },
      );
    }
    return { count, items };
  }

  locate(start: number, end: number): string[] {
    const bytes = this.bytes;
    const { cLists, children } = this.#data;
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
      if (last >= this.#valueEnd(value)) return tokens;
      tokens.push(
        first === LBRACE
          ? decodeStringLexeme(bytes, child, stringEnd(bytes, child))
          : String(k - 1),
      );
      at = value;
    }
  }
}

export function kindOf(first: number): JsonKind {
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
