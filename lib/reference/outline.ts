/**
 * A JSON outline: the shape of a stored document in one short line, so a
 * model can write a pointer without reading the document first
 * (wire-formats.md "Gateway descriptor", `outline`).
 *
 * @module
 */
import { cutUtf8 } from "../store/preview.ts";
import type { JsonIndex, JsonKind, JsonSpan } from "./json_scanner.ts";
import { jsonIndex } from "./selection.ts";
import { JsonScanError } from "./json_scanner.ts";

/** The longest outline, in UTF-8 bytes. */
export const OUTLINE_MAX_BYTES = 1024;

/** Elements of an array whose shapes the outline merges. */
const SAMPLED_ELEMENTS = 32;
/** Members of an object the outline names. */
const NAMED_MEMBERS = 64;
/** The longest member name the outline shows, in characters. */
const NAME_CHARS = 48;

/**
 * Outlines a strict JSON document: its top-level type, its keys or array
 * length, and the types under them, e.g.
 * `array[60] of object{name: string, type: string, children: array}`.
 * Array elements are sampled (the first 32) and their shapes merged.
 *
 * @param bytes The stored document, UTF-8.
 * @returns The outline, at most 1,024 bytes (cut on a character boundary
 *   and ended with `…` when longer), or `undefined` when the bytes are not
 *   one strict JSON document.
 *
 * @example
 * ```ts
 * import { jsonOutline } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const doc = '[{"name": "a", "type": "file"}, {"name": "b", "type": "dir", "children": []}]';
 * assert.equal(
 *   jsonOutline(new TextEncoder().encode(doc)),
 *   "array[2] of object{name: string, type: string, children: array}",
 * );
 * assert.equal(jsonOutline(new TextEncoder().encode("not json")), undefined);
 * ```
 */
export function jsonOutline(bytes: Uint8Array): string | undefined {
  const index = jsonIndex(bytes);
  if (index instanceof JsonScanError) return undefined;
  const root = index.resolve([]);
  const text = describe(index, [root], 2);
  const { text: cut, truncated } = cutUtf8(text, OUTLINE_MAX_BYTES - 3);
  return truncated ? cut + "…" : text;
}

/** The merged shape of some values (the elements of one array, say). */
function describe(
  index: JsonIndex,
  spans: readonly JsonSpan[],
  depth: number,
): string {
  const kinds: string[] = [];
  const seen = new Set<string>();
  const add = (text: string) => {
    if (!seen.has(text)) {
      seen.add(text);
      kinds.push(text);
    }
  };
  const objects = spans.filter((span) => span.kind === "object");
  const arrays = spans.filter((span) => span.kind === "array");
  for (const span of spans) {
    if (span.kind === "object") {
      if (span === objects[0]) add(objectShape(index, objects, depth));
    } else if (span.kind === "array") {
      if (span === arrays[0]) add(arrayShape(index, arrays, depth));
    } else add(scalar(span.kind));
  }
  return kinds.length === 1 ? kinds[0]! : `(${kinds.join(" | ")})`;
}

function objectShape(
  index: JsonIndex,
  objects: readonly JsonSpan[],
  depth: number,
): string {
  if (depth === 0) return "object";
  const members = new Map<string, JsonSpan[]>();
  let more = 0;
  for (const object of objects) {
    const { items } = index.childrenOf(object, NAMED_MEMBERS);
    for (const item of items) {
      const name = item.name!;
      const spans = members.get(name);
      if (spans !== undefined) spans.push(item.span);
      else if (members.size < NAMED_MEMBERS) members.set(name, [item.span]);
      else more++;
    }
  }
  const parts = [...members].map(([name, spans]) =>
    `${memberName(name)}: ${describe(index, spans, depth - 1)}`
  );
  if (more > 0) parts.push("…");
  return `object{${parts.join(", ")}}`;
}

function arrayShape(
  index: JsonIndex,
  arrays: readonly JsonSpan[],
  depth: number,
): string {
  if (depth === 0) return "array";
  const elements: JsonSpan[] = [];
  const counts = new Set<number>();
  for (const array of arrays) {
    const { count, items } = index.childrenOf(array, SAMPLED_ELEMENTS);
    counts.add(count);
    for (const item of items) elements.push(item.span);
  }
  const length = counts.size === 1 ? `[${[...counts][0]}]` : "";
  if (elements.length === 0) return `array${length}`;
  return `array${length} of ${describe(index, elements, depth - 1)}`;
}

function scalar(kind: JsonKind): string {
  return kind === "true" || kind === "false" ? "boolean" : kind;
}

function memberName(name: string): string {
  const short = [...name].length > NAME_CHARS
    ? [...name].slice(0, NAME_CHARS).join("") + "…"
    : name;
  return /^[A-Za-z_$][\w$-]*$/.test(short) ? short : JSON.stringify(short);
}
