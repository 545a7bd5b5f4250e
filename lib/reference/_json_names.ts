/**
 * Member names: the duplicate check that keeps a pointer unambiguous, and
 * the name hashing and matching that find a member again by its decoded
 * name.
 *
 * @module
 */
import { clip, JsonScanError } from "./json_scan_error.ts";
import { BACKSLASH, decodeStringLexeme } from "./json_string.ts";

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Objects with more members than this keep a name hash table (from the
 * duplicate check, or built on first lookup when names use escapes).
 */
export const LINEAR_MEMBERS = 256;

/** Scratch hash table for duplicate detection in large objects. */
let table = new Int32Array(1024);

/**
 * Throw `ambiguous_json` when two members of one object share a decoded
 * name; the members' key spans are `[keyStarts[p], keyEnds[p])` for `p` in
 * `[from, to)`. Returns the name table of a large object: key starts by
 * name hash, -1 for an empty slot.
 */
export function checkDuplicates(
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
      const name = decodeStringLexeme(bytes, keyStarts[p]!, keyEnds[p]!);
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
export function hashBytes(bytes: Uint8Array, from: number, to: number): number {
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

/** Whether `bytes[from, to)` holds a backslash (an escape). */
export function hasBackslash(
  bytes: Uint8Array,
  from: number,
  to: number,
): boolean {
  for (let k = from; k < to; k++) if (bytes[k] === BACKSLASH) return true;
  return false;
}

/** The name hash of a whole name. */
export function hashOf(bytes: Uint8Array): number {
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
      clip(decodeStringLexeme(bytes, start, end))
    } at byte ${start}: a pointer to it would be ambiguous`,
    { offset: start },
  );
}

/**
 * Whether the string lexeme `[start, end)` decodes to the UTF-8 bytes `name`.
 * Bytes before the first escape decode to themselves, and escapes only ever
 * shrink, so a raw comparison settles every case but names with escapes.
 */
export function nameMatches(
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
      return decodeStringLexeme(bytes, start, end) === decoder.decode(name);
    }
    if (x !== name[k]) return false;
  }
  return raw === len;
}
