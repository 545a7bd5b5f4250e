/**
 * Composed edit contents: new literal text and selections of stored results,
 * expanded into the file body before commission (wire-formats.md "Edit
 * arguments").
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import type { ResultStore } from "../store/result_store.ts";
import { utf8Length } from "../store/utf8.ts";
import { parseReference, ReferenceFailureError, select } from "./selection.ts";
import {
  describeIssue,
  segmentedContentsSchema,
  segmentSchema,
} from "./schema.ts";

/** Most segments in one file's contents. */
export const MAX_SEGMENTS = 256;
/** Largest expanded contents, in UTF-8 bytes. */
export const MAX_EXPANDED_BYTES = 16 * 1024 * 1024;

/** Options of {@link expandEditContents}. */
export interface ExpandEditContentsOptions {
  /** The store references resolve against. */
  results: ResultStore;
  /**
   * Largest expanded size in UTF-8 bytes (default 16 MiB); pass what is left
   * of the 16 MiB when expanding several files of one edit.
   */
  maxBytes?: number;
}

/**
 * Edit contents that do not expand: malformed contents or segments, too many
 * segments, too much text, or a reference that does not resolve. The step is
 * refused; nothing is written. Its code is `invalid_contents`,
 * `too_many_segments`, `too_large`, or the wire-format failure code of the
 * reference ({@linkcode ReferenceFailureError}).
 *
 * @example
 * ```ts
 * import { EditExpansionError, expandEditContents, ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const results = new ResultStore();
 * await assert.rejects(
 *   expandEditContents({ segments: [{ literal: "a" }, { ref: { result: "result-7", sha256: "0".repeat(64), select: { kind: "whole" } } }] }, { results }),
 *   (error: unknown) => error instanceof EditExpansionError && error.segment === 1 && error.code === "unknown_result",
 * );
 * ```
 */
export class EditExpansionError extends LoomError.RangeError<
  "EditExpansionError" | "ReferenceFailureError",
  {
    /** Index of the failing segment, or `null` when the contents as a whole are malformed. */
    readonly segment: number | null;
  }
> {}

/**
 * Expands edit contents: a literal string stays as it is; `{segments: [...]}`
 * concatenates each `{literal}` and the text each `{ref}` selects. At most
 * 256 segments and 16 MiB of expanded text.
 *
 * @param contents The `contents` of one file of a `repository.edit` (untrusted JSON).
 * @param options The store to resolve references against, and a size limit.
 * @returns The expanded file body.
 * @throws {EditExpansionError} Naming the segment index and the failure code.
 *
 * @example
 * ```ts
 * import { expandEditContents, ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const results = new ResultStore();
 * const d = await results.put("one\ntwo\nthree\n", { origin: "a.txt", capture: "complete" });
 * const body = await expandEditContents({
 *   segments: [
 *     { ref: { result: d.result, sha256: d.sha256, select: { kind: "lines", start: 1, end: 1 } } },
 *     { literal: "TWO\n" },
 *     { ref: { result: d.result, sha256: d.sha256, select: { kind: "lines", start: 3, end: 3 } } },
 *   ],
 * }, { results });
 * assert.equal(body, "one\nTWO\nthree\n");
 * ```
 */
export function expandEditContents(
  contents: unknown,
  options: ExpandEditContentsOptions,
): Promise<string> {
  try {
    return Promise.resolve(expand(contents, options));
  } catch (error) {
    return Promise.reject(error);
  }
}

function expand(contents: unknown, options: ExpandEditContentsOptions): string {
  const maxBytes = options.maxBytes ?? MAX_EXPANDED_BYTES;
  if (typeof contents === "string") {
    const size = utf8Length(contents);
    if (size > maxBytes) {
      throw new EditExpansionError(
        "too_large",
        `The contents have ${size} bytes; the limit is ${maxBytes}`,
        { segment: null },
      );
    }
    return contents;
  }
  const parsed = segmentedContentsSchema.safeParse(contents);
  if (!parsed.success) {
    throw new EditExpansionError(
      "invalid_contents",
      `Edit contents are a string or {"segments": [...]}; these are malformed ${
        describeIssue(parsed.error)
      }`,
      { segment: null },
    );
  }
  const segments = parsed.data.segments;
  if (segments.length > MAX_SEGMENTS) {
    throw new EditExpansionError(
      "too_many_segments",
      `The contents have ${segments.length} segments; the limit is ${MAX_SEGMENTS}`,
      { segment: MAX_SEGMENTS },
    );
  }
  const parts: string[] = [];
  let total = 0;
  for (let i = 0; i < segments.length; i++) {
    const segment = segmentSchema.safeParse(segments[i]);
    if (!segment.success) {
      throw new EditExpansionError(
        "invalid_reference",
        `Segment ${i} is not {"literal": "…"} or {"ref": <reference>}: ${
          describeIssue(segment.error)
        }`,
        { segment: i },
      );
    }
    const left = maxBytes - total;
    let text: string;
    if ("literal" in segment.data) {
      text = segment.data.literal;
      const size = utf8Length(text);
      if (size > left) throw tooLarge(i, maxBytes);
      total += size;
    } else {
      try {
        const ref = parseReference(segment.data.ref);
        const record = options.results.get(ref.result);
        if (record === undefined) {
          throw new ReferenceFailureError(
            "unknown_result",
            `No stored result has the id ${ref.result.slice(0, 64)}`,
          );
        }
        const selection = select(record, ref, { maxBytes: left });
        text = "text" in selection ? selection.text : selection.json;
      } catch (error) {
        if (!(error instanceof ReferenceFailureError)) throw error;
        if (error.code === "answer_too_large") throw tooLarge(i, maxBytes);
        throw new EditExpansionError(
          error.code,
          `Segment ${i} does not resolve: ${error.message}`,
          { segment: i },
        );
      }
      total += utf8Length(text);
    }
    parts.push(text);
  }
  return parts.join("");
}

function tooLarge(segment: number, maxBytes: number): EditExpansionError {
  return new EditExpansionError(
    "too_large",
    `Segment ${segment} takes the expanded contents past the limit of ${maxBytes} bytes`,
    { segment: segment },
  );
}
