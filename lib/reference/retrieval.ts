/**
 * Retrieval outside the slice: the `read_result`, `find_in_result` and
 * `list_results` tools that `loom mcp`, the gateway and the SDK adapters all
 * offer, over one result store. Unlike the slice's lookups they have no
 * per-stage budget; instead no answer is ever cut silently: a read whose
 * selection passes 8 KiB answers its first part with `truncated: true`, the
 * selection's size and a `next` bytes reference that continues exactly
 * where it stopped (wire-formats.md "Retrieval outside the slice").
 *
 * @module
 */
import { z } from "zod";
import { isLoomError } from "../errors.ts";
import type {
  CataloguePage,
  ResultReference,
  StoredResult,
} from "../store/result_store.ts";
import { floorCharBoundary } from "../store/utf8.ts";
import { findInRecord } from "./find_in_result.ts";
import { describeIssue } from "./schema.ts";
import {
  parseReference,
  ReferenceFailureError,
  type SelectionSpan,
  selectionSpan,
} from "./selection.ts";

/** The most selected data one read answers, in UTF-8 bytes. */
export const MAX_READ_BYTES = 8192;

/** A retrieval tool's answer: structured JSON, or a failure with its code. */
export type RetrievalAnswer =
  | {
    /** Succeeded. */
    readonly ok: true;
    /** The answer JSON (wire-formats.md). */
    readonly structured: Record<string, unknown>;
  }
  | {
    /** Failed. */
    readonly ok: false;
    /** The failure code, e.g. `digest_mismatch`. */
    readonly code: string;
    /** What failed and why. */
    readonly message: string;
  };

/**
 * Where retrieval finds results: a {@linkcode ResultStore} is one.
 * `evicted` lets a store that drops old results say so, so a reference to
 * one answers `result_evicted` rather than `unknown_result`.
 */
export interface RetrievalSource {
  /** The stored result with that id, or `undefined`. */
  get(id: string): StoredResult | undefined;
  /** One catalogue page from `offset`. */
  list(offset: number): CataloguePage;
  /** Whether the result with that id was stored once and evicted since. */
  evicted?(id: string): boolean;
}

const readArgs = z.strictObject({ reference: z.unknown() });
const findArgs = z.strictObject({
  reference: z.unknown(),
  pattern: z.string(),
  regex: z.boolean().optional(),
  max_matches: z.number().int().optional(),
});
const listArgs = z.strictObject({ offset: z.unknown().optional() });

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The three retrieval tools over one source of results.
 *
 * @example
 * ```ts
 * import { ResultStore, Retrieval } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const big = JSON.stringify({ rows: Array.from({ length: 2000 }, (_, i) => ({ id: i })) });
 * const d = await store.put(big, { origin: "query", capture: "complete" });
 * const retrieval = new Retrieval(store);
 * const first = retrieval.read({ reference: d.reference });
 * assert.ok(first.ok && first.structured.truncated === true);
 * const found = retrieval.find({ reference: d.reference, pattern: '{"id":1234}' });
 * assert.ok(found.ok);
 * const [hit] = (found.structured as { matches: { pointer: string }[] }).matches;
 * assert.equal(hit!.pointer, "/rows/1234");
 * const value = retrieval.read({
 *   reference: { ...d.reference!, select: { kind: "json_pointer", pointer: hit!.pointer }, rendering: "json" },
 * });
 * assert.deepEqual(value, { ok: true, structured: { selected_json: '{"id":1234}' } });
 * ```
 */
export class Retrieval {
  readonly #source: RetrievalSource;

  /**
   * Offers the retrieval tools over one source of results.
   *
   * @param source The results to read, search and list.
   */
  constructor(source: RetrievalSource) {
    this.#source = source;
  }

  /**
   * `read_result {reference}`: the selection, or its first 8 KiB with
   * `truncated`, `total_bytes` and `next`.
   *
   * @param args The tool's arguments (untrusted JSON).
   * @returns `{selected_text}` or `{selected_json}` (plus the continuation
   *   fields when cut), or a failure with a wire-format code.
   */
  read(args: unknown): RetrievalAnswer {
    return answer(() => {
      const { reference } = parse(readArgs, args, "read_result");
      const [record, span] = this.#resolve(reference);
      return continuedRead(record, span);
    });
  }

  /**
   * What `read_result` selects, whole, for code that keeps it in memory
   * rather than in a prompt (`run_code`'s `loom.read`): the text of a whole,
   * bytes or lines selection, or the JSON value a pointer selects (whatever
   * its rendering), checked against the reference's digest like every read,
   * without the 8 KiB continuation cut. A reference without `select`
   * selects the whole result.
   *
   * @param reference The reference (untrusted JSON).
   * @returns `{value}`, or a failure with a wire-format code.
   */
  value(
    reference: unknown,
  ):
    | { readonly ok: true; readonly value: unknown }
    | { readonly ok: false; readonly code: string; readonly message: string } {
    const read = answer(() => {
      const whole = typeof reference === "object" && reference !== null &&
          !Array.isArray(reference) && !("select" in reference)
        ? { ...reference, select: { kind: "whole" } }
        : reference;
      const parsed = parseReference(whole);
      const [record, span] = this.#resolve(
        parsed.select.kind === "json_pointer"
          ? { ...parsed, rendering: "json" }
          : parsed,
      );
      const raw = decoder.decode(record.bytes.subarray(span.start, span.end));
      return { value: span.render === "text" ? raw : JSON.parse(raw) };
    });
    return read.ok ? { ok: true, value: read.structured.value } : read;
  }

  /**
   * `find_in_result {reference, pattern, regex?, max_matches?}`.
   *
   * @param args The tool's arguments (untrusted JSON).
   * @returns `{matches, total_matches, truncated}`, or a failure.
   */
  find(args: unknown): RetrievalAnswer {
    return answer(() => {
      const parsed = parse(findArgs, args, "find_in_result");
      const [record, span] = this.#resolve(parsed.reference);
      return {
        ...findInRecord(record, span, {
          pattern: parsed.pattern,
          ...(parsed.regex === undefined ? {} : { regex: parsed.regex }),
          ...(parsed.max_matches === undefined
            ? {}
            : { maxMatches: parsed.max_matches }),
        }),
      };
    });
  }

  /**
   * `list_results {offset?}`: one catalogue page.
   *
   * @param args The tool's arguments (untrusted JSON).
   * @returns `{results, next_offset}`, or a failure.
   */
  list(args: unknown): RetrievalAnswer {
    return answer(() => {
      const { offset = 0 } = parse(listArgs, args ?? {}, "list_results");
      // The lookups' rule: a number out of range, or no number at all.
      if (!Number.isSafeInteger(offset) || (offset as number) < 0) {
        throw new ReferenceFailureError(
          typeof offset === "number" ? "invalid_range" : "invalid_reference",
          `The list offset must be an integer >= 0, not ${
            String(JSON.stringify(offset)).slice(0, 32)
          }`,
        );
      }
      return { ...this.#source.list(offset as number) };
    });
  }

  #resolve(reference: unknown): [StoredResult, SelectionSpan] {
    const ref: ResultReference = parseReference(reference);
    const record = this.#source.get(ref.result);
    if (record === undefined) {
      const id = ref.result.length > 64
        ? ref.result.slice(0, 64) + "…"
        : ref.result;
      if (this.#source.evicted?.(ref.result) === true) {
        throw new ReferenceFailureError(
          "result_evicted",
          `${id} was evicted to keep the store within its limits; call the tool that produced it again`,
        );
      }
      throw new ReferenceFailureError(
        "unknown_result",
        `No stored result has the id ${id}; list_results shows the stored ones`,
      );
    }
    return [record, selectionSpan(record, ref)];
  }
}

/**
 * Reads a span, cutting it after 8 KiB on a character boundary (and, in a
 * JSON string, between two escapes) with a `next` reference to the rest.
 */
function continuedRead(
  record: StoredResult,
  span: SelectionSpan,
): Record<string, unknown> {
  const bytes = record.bytes;
  // A string renders decoded; its data is the lexeme between the quotes.
  const from = span.render === "string" ? span.start + 1 : span.start;
  const to = span.render === "string" ? span.end - 1 : span.end;
  const key = span.render === "json" ? "selected_json" : "selected_text";
  if (to - from <= MAX_READ_BYTES) {
    const raw = decoder.decode(bytes.subarray(span.start, span.end));
    return { [key]: span.render === "string" ? JSON.parse(raw) : raw };
  }
  const cut = span.render === "string"
    ? escapeBoundary(bytes, from, from + MAX_READ_BYTES)
    : floorCharBoundary(bytes, from + MAX_READ_BYTES);
  const part = decoder.decode(bytes.subarray(from, cut));
  return {
    [key]: span.render === "string" ? JSON.parse(`"${part}"`) : part,
    truncated: true,
    total_bytes: to - from,
    next: {
      result: record.id,
      sha256: record.sha256,
      select: { kind: "bytes", start: cut, end: to },
    },
  };
}

/**
 * The last offset at or before `limit` inside a string lexeme's body that
 * splits neither a UTF-8 character, an escape, nor a surrogate pair.
 */
function escapeBoundary(bytes: Uint8Array, from: number, limit: number) {
  let i = from;
  let lastSafe = from;
  while (i < limit) {
    const b = bytes[i]!;
    let length: number;
    if (b === 0x5c) {
      length = bytes[i + 1] === 0x75 ? 6 : 2;
      // \uD800–\uDBFF starts a pair: keep it with its low half.
      if (length === 6 && (bytes[i + 2]! | 0x20) === 0x64) {
        const third = bytes[i + 3]! | 0x20;
        if (
          third === 0x38 || third === 0x39 || third === 0x61 || third === 0x62
        ) {
          length = 12;
        }
      }
    } else if (b < 0x80) length = 1;
    else if (b < 0xe0) length = 2;
    else if (b < 0xf0) length = 3;
    else length = 4;
    if (i + length > limit) break;
    i += length;
    lastSafe = i;
  }
  return lastSafe;
}

function parse<T>(schema: z.ZodType<T>, args: unknown, tool: string): T {
  const parsed = schema.safeParse(args);
  if (!parsed.success) {
    throw new ReferenceFailureError(
      "invalid_arguments",
      `The arguments of ${tool} do not match its schema: ${
        describeIssue(parsed.error)
      }`,
    );
  }
  return parsed.data;
}

function answer(run: () => Record<string, unknown>): RetrievalAnswer {
  try {
    return { ok: true, structured: run() };
  } catch (error) {
    if (!isLoomError(error)) throw error;
    return { ok: false, code: error.code, message: error.message };
  }
}
