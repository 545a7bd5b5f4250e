/**
 * Resolving a verified reference against one record: whole content, a
 * half-open byte range, inclusive lines, or one RFC 6901 JSON pointer
 * (wire-formats.md "Reference").
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import type { ResultReference } from "../store/result_store.ts";
import { isCharBoundary } from "../store/utf8.ts";
import { IndexCache } from "./_index_cache.ts";
import { type JsonIndex, JsonScanError, scanJson } from "./json_scanner.ts";
import { decodeJsonString } from "./json_string.ts";
import { parsePointer, PointerError } from "./pointer.ts";
import { describeIssue, referenceSchema } from "./schema.ts";

/** Something a reference can select from: a stored result or an archived event. */
export interface SelectableRecord {
  /** `result-<n>` or `event-<n>`. */
  readonly id: string;
  /** Valid UTF-8 content; never modified. */
  readonly bytes: Uint8Array;
  /** SHA-256 of `bytes`, lowercase hex. */
  readonly sha256: string;
}

/** A resolved selection: decoded text, or a JSON value's original lexeme. */
export type SelectionResult = { text: string } | { json: string };

/**
 * A reference that does not resolve; `code` is a wire-format failure code.
 *
 * @example
 * ```ts
 * import { ReferenceFailureError, ResultStore, select } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put("a€", { origin: "x", capture: "complete" });
 * assert.throws(
 *   () => select(store.get("result-1")!, { ...d.reference!, select: { kind: "bytes", start: 0, end: 2 } }),
 *   (error: unknown) => error instanceof ReferenceFailureError && error.code === "not_char_boundary",
 * );
 * ```
 */
export class ReferenceFailureError
  extends LoomError.RangeError<"ReferenceFailureError"> {}

/** Options of {@link select}. */
export interface SelectOptions {
  /**
   * Largest selection in raw UTF-8 bytes; a larger one fails with
   * `answer_too_large` (checked before decoding where possible).
   */
  maxBytes?: number;
}

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * Bytes of JSON indexes kept between lookups: half the result store's
 * default 64 MiB, room for the index of the largest result (about 0.65× its
 * 16 MiB) and more. Older indexes are released first and rescanned if asked
 * for again.
 */
export const JSON_INDEX_BUDGET = 32 * 1024 * 1024;
/** Bytes of line-end tables kept between lookups (4 bytes per line). */
export const LINE_INDEX_BUDGET = 16 * 1024 * 1024;

const jsonCache = new IndexCache<JsonIndex | JsonScanError>(
  JSON_INDEX_BUDGET,
  (index) => index instanceof JsonScanError ? 64 : index.byteLength,
);
const lineCache = new IndexCache<Uint32Array>(
  LINE_INDEX_BUDGET,
  (ends) => ends.byteLength,
);

/**
 * Parses and checks a reference's shape (closed object, known selector,
 * `whole`/`bytes`/`lines` only with `text` rendering).
 *
 * @param reference Untrusted JSON.
 * @returns The reference, typed.
 * @throws {ReferenceFailureError} `invalid_reference` when the shape is wrong.
 */
export function parseReference(reference: unknown): ResultReference {
  const parsed = referenceSchema.safeParse(reference);
  if (!parsed.success) {
    throw new ReferenceFailureError(
      "invalid_reference",
      `The reference is malformed ${describeIssue(parsed.error)}`,
    );
  }
  const ref = parsed.data as ResultReference;
  if (ref.select.kind !== "json_pointer" && ref.rendering === "json") {
    throw new ReferenceFailureError(
      "invalid_reference",
      `A ${ref.select.kind} selection needs text rendering: only json_pointer selections render as json`,
    );
  }
  return ref;
}

/**
 * Resolves a reference against a record, verifying its digest first.
 *
 * @param record The record the reference names.
 * @param reference The reference (checked again here).
 * @param options A size limit for the selection.
 * @returns `{text}` for text rendering, `{json}` (the lexeme) for json rendering.
 * @throws {ReferenceFailureError} With the wire-format failure code.
 *
 * @example
 * ```ts
 * import { ResultStore, select } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put('{"n": 1.50, "s": "caf\\u00e9"}', { origin: "x", capture: "complete" });
 * const record = store.get(d.result!)!;
 * const pointer = (p: string) => ({ kind: "json_pointer" as const, pointer: p });
 * assert.deepEqual(select(record, { ...d.reference!, select: pointer("/n"), rendering: "json" }), { json: "1.50" });
 * assert.deepEqual(select(record, { ...d.reference!, select: pointer("/s") }), { text: "café" });
 * ```
 */
export function select(
  record: SelectableRecord,
  reference: ResultReference | unknown,
  options: SelectOptions = {},
): SelectionResult {
  const span = selectionSpan(record, reference);
  const maxBytes = options.maxBytes ?? Infinity;
  const bytes = record.bytes;
  if (span.render === "text") {
    return {
      text: cut(record, bytes, span.start, span.end, maxBytes, span.what),
    };
  }
  if (span.render === "json") {
    return {
      json: cut(record, bytes, span.start, span.end, maxBytes, span.what),
    };
  }
  // A decoded string is never longer than its lexeme minus the quotes.
  const lexemeBytes = span.end - span.start - 2;
  const text = decodeJsonString(bytes, span);
  if (lexemeBytes > maxBytes) {
    const size = encoder.encode(text).length;
    if (size > maxBytes) throw tooLarge(record, span.what, size, maxBytes);
  }
  return { text };
}

/**
 * Where a reference's selection lies in its record, and how it renders:
 * `text` (the bytes decoded), `json` (a value's lexeme) or `string` (a JSON
 * string lexeme, quotes included, that renders decoded).
 */
export interface SelectionSpan {
  /** Offset of the selection's first byte in the record. */
  readonly start: number;
  /** Offset just past the selection's last byte. */
  readonly end: number;
  /** How the bytes render. */
  readonly render: "text" | "json" | "string";
  /** The selection in words, for messages (`lines 3..7`). */
  readonly what: string;
}

/**
 * Resolves a reference to the byte span it selects, verifying its digest
 * first, without decoding anything: the checks of {@linkcode select}.
 *
 * @param record The record the reference names.
 * @param reference The reference (checked again here).
 * @returns The span and how it renders.
 * @throws {ReferenceFailureError} With the wire-format failure code.
 *
 * @example
 * ```ts
 * import { selectionSpan } from "./selection.ts";
 * import { ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put("one\ntwo\n", { origin: "x", capture: "complete" });
 * const span = selectionSpan(store.get(d.result!)!, { ...d.reference!, select: { kind: "lines", start: 2, end: 2 } });
 * assert.deepEqual([span.start, span.end, span.render], [4, 8, "text"]);
 * ```
 */
export function selectionSpan(
  record: SelectableRecord,
  reference: ResultReference | unknown,
): SelectionSpan {
  const ref = parseReference(reference);
  if (ref.result !== record.id) {
    throw new ReferenceFailureError(
      "unknown_result",
      `The reference names ${clipped(ref.result)}, not ${record.id}`,
    );
  }
  if (ref.sha256 !== record.sha256) {
    throw new ReferenceFailureError(
      "digest_mismatch",
      `The digest does not match ${record.id}: its content has SHA-256 ${record.sha256}`,
    );
  }
  const bytes = record.bytes;
  const sel = ref.select;
  switch (sel.kind) {
    case "whole":
      return { start: 0, end: bytes.length, render: "text", what: "whole" };
    case "bytes": {
      const { start, end } = sel;
      const what = `bytes ${start}..${end}`;
      if (start < 0 || end < start || end > bytes.length) {
        throw new ReferenceFailureError(
          "invalid_range",
          `Cannot select ${what} of ${record.id}: it has ${bytes.length} bytes and a range needs 0 <= start <= end <= size`,
        );
      }
      for (const at of [start, end]) {
        if (!isCharBoundary(bytes, at)) {
          throw new ReferenceFailureError(
            "not_char_boundary",
            `Cannot select ${what} of ${record.id}: ${at} is inside a UTF-8 character`,
          );
        }
      }
      return { start, end, render: "text", what };
    }
    case "lines": {
      const { start, end } = sel;
      const what = `lines ${start}..${end}`;
      const ends = lineEnds(bytes);
      if (start < 1 || end < start || end > ends.length) {
        throw new ReferenceFailureError(
          "invalid_range",
          `Cannot select ${what} of ${record.id}: it has ${ends.length} lines and a range needs 1 <= start <= end <= line count`,
        );
      }
      const from = start === 1 ? 0 : ends[start - 2]!;
      return { start: from, end: ends[end - 1]!, render: "text", what };
    }
    case "json_pointer":
      return pointerSpan(record, sel.pointer, ref.rendering ?? "text");
  }
}

function pointerSpan(
  record: SelectableRecord,
  pointer: string,
  rendering: "text" | "json",
): SelectionSpan {
  const what = `pointer ${JSON.stringify(clipped(pointer))}`;
  let tokens: string[];
  try {
    tokens = parsePointer(pointer);
  } catch (error) {
    throw translate(error, record, what);
  }
  const index = jsonIndex(record.bytes);
  if (index instanceof JsonScanError) {
    throw new ReferenceFailureError(
      index.code as ReferenceFailureError["code"],
      `Cannot resolve ${what} in ${record.id}: the content is not strict JSON (${index.message})`,
    );
  }
  let span;
  try {
    span = index.resolve(tokens);
  } catch (error) {
    throw translate(error, record, what);
  }
  if (rendering === "json") {
    return { start: span.start, end: span.end, render: "json", what };
  }
  if (span.kind !== "string") {
    throw new ReferenceFailureError(
      "not_a_string",
      `Cannot render ${what} of ${record.id} as text: it is ${
        span.kind === "array" || span.kind === "object" ? "an" : "a"
      } ${span.kind}, not a string; ask for json rendering`,
    );
  }
  return { start: span.start, end: span.end, render: "string", what };
}

function translate(
  error: unknown,
  record: SelectableRecord,
  what: string,
): unknown {
  if (error instanceof PointerError) {
    return new ReferenceFailureError(
      error.code as ReferenceFailureError["code"],
      `Cannot resolve ${what} in ${record.id}: ${error.message}`,
    );
  }
  return error;
}

function cut(
  record: SelectableRecord,
  bytes: Uint8Array,
  start: number,
  end: number,
  maxBytes: number,
  what: string,
): string {
  if (end - start > maxBytes) {
    throw tooLarge(record, what, end - start, maxBytes);
  }
  return decoder.decode(bytes.subarray(start, end));
}

function tooLarge(
  record: SelectableRecord,
  what: string,
  size: number,
  maxBytes: number,
): ReferenceFailureError {
  return new ReferenceFailureError(
    "answer_too_large",
    `Cannot return ${what} of ${record.id}: ${size} bytes exceed the ${maxBytes}-byte answer limit; select a smaller part`,
  );
}

/** A model-given id or pointer shortened to 64 characters for a message. */
export function clipped(text: string): string {
  return text.length > 64 ? text.slice(0, 64) + "…" : text;
}

/**
 * The JSON index of some content, scanned once and kept while it is among
 * the most recently used indexes within {@link JSON_INDEX_BUDGET}.
 *
 * @param bytes Stored content.
 * @returns The index, or the scan error (kept too).
 */
export function jsonIndex(bytes: Uint8Array): JsonIndex | JsonScanError {
  return jsonCache.get(bytes, (content) => {
    try {
      return scanJson(content);
    } catch (error) {
      if (!(error instanceof JsonScanError)) throw error;
      return error;
    }
  });
}

/**
 * Offsets just past each line (after its `\n`, or the end of the content for
 * an unterminated last line), computed once and kept like JSON indexes
 * (within {@link LINE_INDEX_BUDGET}).
 *
 * @param bytes Stored content.
 * @returns One end offset per line; empty content has no lines.
 */
export function lineEnds(bytes: Uint8Array): Uint32Array {
  return lineCache.get(bytes, findLineEnds);
}

function findLineEnds(bytes: Uint8Array): Uint32Array {
  let count = 0;
  for (
    let at = bytes.indexOf(10);
    at !== -1;
    at = bytes.indexOf(10, at + 1)
  ) {
    count++;
  }
  const last = bytes.length > 0 && bytes[bytes.length - 1] !== 10;
  const ends = new Uint32Array(count + (last ? 1 : 0));
  let i = 0;
  for (
    let at = bytes.indexOf(10);
    at !== -1;
    at = bytes.indexOf(10, at + 1)
  ) {
    ends[i++] = at + 1;
  }
  if (last) ends[i] = bytes.length;
  return ends;
}
