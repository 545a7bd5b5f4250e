/**
 * `find_in_result`: search a stored result for a literal or a regular
 * expression and answer where each match is — its line, its byte range and,
 * in a JSON document, the RFC 6901 pointer of the innermost value holding it
 * — so a model goes from a search hit to an exact read in one step
 * (wire-formats.md "Retrieval outside the slice").
 *
 * Regular expressions run on RE2 semantics (`re2js`), which match in time
 * linear in the input: a pattern from a hostile model cannot make the search
 * backtrack for ever.
 *
 * @module
 */
import { RE2JS } from "re2js";
import { floorCharBoundary } from "../store/utf8.ts";
import { JsonScanError } from "./json_scanner.ts";
import { formatPointer } from "./pointer.ts";
import { mapError, messageOf } from "../errors.ts";
import {
  jsonIndex,
  lineEnds,
  ReferenceFailureError,
  type SelectableRecord,
  type SelectionSpan,
} from "./selection.ts";

/** One match of {@linkcode findInRecord}. */
export interface FindMatch {
  /** One-based line of the match's first byte. */
  line: number;
  /** Offset of the match's first byte in the whole result. */
  start_byte: number;
  /** Offset just past the match's last byte. */
  end_byte: number;
  /** In a JSON document: the innermost value whose lexeme holds the match. */
  pointer?: string;
  /** The matching line, at most 200 bytes around the match. */
  text: string;
}

/** The answer of `find_in_result`. */
export interface FindAnswer {
  /** The first matches, in order. */
  matches: FindMatch[];
  /** How many matches the selection holds in all. */
  total_matches: number;
  /** Whether `matches` leaves some out. */
  truncated: boolean;
}

/** What to look for. */
export interface FindOptions {
  /** A literal, or with `regex` an RE2 regular expression. */
  readonly pattern: string;
  /** Whether `pattern` is a regular expression (default a literal). */
  readonly regex?: boolean;
  /** The most matches to answer, 1..200 (default 20). */
  readonly maxMatches?: number;
}

/** Default of `max_matches`. */
export const DEFAULT_MAX_MATCHES = 20;
/** Largest `max_matches`. */
export const MAX_MATCHES = 200;
/** Longest pattern, in UTF-16 code units. */
export const MAX_PATTERN_LENGTH = 1024;
/** Longest `text` of a match, in UTF-8 bytes. */
export const MATCH_TEXT_BYTES = 200;
/** The most bytes of matches one answer holds (JSON, before escaping). */
const ANSWER_BYTES = 32 * 1024;

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Searches the span of a record (already resolved and digest-checked by
 * `selectionSpan`) for a pattern.
 *
 * @param record The stored result.
 * @param span The part to search.
 * @param options The pattern, whether it is a regex, and `maxMatches`.
 * @returns The first matches and the total count.
 * @throws {ReferenceFailureError} `invalid_pattern` for an empty, too long
 *   or unparsable pattern; `invalid_arguments` for a bad `maxMatches`.
 *
 * @example
 * ```ts
 * import { findInRecord } from "./find_in_result.ts";
 * import { selectionSpan } from "./selection.ts";
 * import { ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put('{"files": [{"name": "a.ts"}, {"name": "b.ts"}]}', { origin: "x", capture: "complete" });
 * const record = store.get(d.result!)!;
 * const found = findInRecord(record, selectionSpan(record, d.reference), { pattern: "b.ts" });
 * assert.equal(found.total_matches, 1);
 * assert.equal(found.matches[0]!.pointer, "/files/1/name");
 * ```
 */
export function findInRecord(
  record: SelectableRecord,
  span: SelectionSpan,
  options: FindOptions,
): FindAnswer {
  const { pattern } = options;
  const maxMatches = options.maxMatches ?? DEFAULT_MAX_MATCHES;
  if (
    !Number.isSafeInteger(maxMatches) || maxMatches < 1 ||
    maxMatches > MAX_MATCHES
  ) {
    throw new ReferenceFailureError(
      "invalid_arguments",
      `max_matches must be an integer from 1 to ${MAX_MATCHES}, not ${
        String(maxMatches).slice(0, 32)
      }`,
    );
  }
  if (
    typeof pattern !== "string" || pattern.length === 0 ||
    pattern.length > MAX_PATTERN_LENGTH || !pattern.isWellFormed()
  ) {
    throw new ReferenceFailureError(
      "invalid_pattern",
      `The pattern must be a non-empty string of at most ${MAX_PATTERN_LENGTH} characters`,
    );
  }
  const bytes = record.bytes;
  const text = decoder.decode(bytes.subarray(span.start, span.end));
  const next = matcherOf(text, pattern, options.regex === true);
  const index = jsonIndex(bytes);
  const json = index instanceof JsonScanError ? undefined : index;
  const ends = lineEnds(bytes);
  const matches: FindMatch[] = [];
  let answerBytes = 0;
  let total = 0;
  // UTF-16 index → byte offset, advanced monotonically (linear in all).
  let unit = 0;
  let byte = span.start;
  const toByte = (at: number) => {
    byte += utf8Bytes(text, unit, at);
    unit = at;
    return byte;
  };
  for (let found = next(); found !== undefined; found = next()) {
    total++;
    if (matches.length >= maxMatches || answerBytes > ANSWER_BYTES) continue;
    const start = toByte(found[0]);
    const end = toByte(found[1]);
    const match: FindMatch = {
      line: lineOf(ends, start),
      start_byte: start,
      end_byte: end,
      text: lineWindow(bytes, ends, start),
    };
    if (json !== undefined) {
      match.pointer = formatPointer(json.locate(start, end));
    }
    answerBytes += JSON.stringify(match).length;
    matches.push(match);
  }
  return { matches, total_matches: total, truncated: total > matches.length };
}

/** A function that answers the next match's UTF-16 range, or undefined. */
function matcherOf(
  text: string,
  pattern: string,
  regex: boolean,
): () => [number, number] | undefined {
  if (!regex) {
    let from = 0;
    return () => {
      const at = text.indexOf(pattern, from);
      if (at < 0) return undefined;
      from = at + pattern.length;
      return [at, from];
    };
  }
  const compiled = mapError(
    () => RE2JS.compile(pattern),
    (error) =>
      new ReferenceFailureError(
        "invalid_pattern",
        `The regular expression does not parse (RE2 syntax): ${
          messageOf(error).slice(0, 160)
        }`,
      ),
  );
  const matcher = compiled.matcher(text);
  return () => {
    // Empty matches locate nothing; step over them.
    while (matcher.find()) {
      if (matcher.end() > matcher.start()) {
        return [matcher.start(), matcher.end()];
      }
    }
    return undefined;
  };
}

/** UTF-8 bytes of `text[from, to)`, without slicing it. */
function utf8Bytes(text: string, from: number, to: number): number {
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** One-based line of the byte at `offset`. */
function lineOf(ends: Uint32Array, offset: number): number {
  // The first line whose end lies past offset.
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ends[mid]! <= offset) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}

/** The line holding `offset`, at most 200 bytes of it around the offset. */
function lineWindow(bytes: Uint8Array, ends: Uint32Array, offset: number) {
  const line = lineOf(ends, offset) - 1;
  const lineStart = line === 0 ? 0 : ends[line - 1]!;
  let lineEnd = line < ends.length ? ends[line]! : bytes.length;
  while (
    lineEnd > lineStart &&
    (bytes[lineEnd - 1] === 0x0a || bytes[lineEnd - 1] === 0x0d)
  ) lineEnd--;
  let start = lineStart;
  if (lineEnd - lineStart > MATCH_TEXT_BYTES) {
    start = floorCharBoundary(bytes, Math.max(lineStart, offset - 60));
  }
  const end = floorCharBoundary(
    bytes,
    Math.min(lineEnd, start + MATCH_TEXT_BYTES),
  );
  return decoder.decode(bytes.subarray(start, end));
}
