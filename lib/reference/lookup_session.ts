/**
 * Lookups: the model asks for part of a stored result (or, under the bounded
 * policy, of an archived event) and gets the answer appended to its next
 * request, within the per-stage budgets of wire-formats.md.
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import type {
  CataloguePage,
  ResultReference,
  ResultStore,
} from "../store/result_store.ts";
import { utf8Length } from "../store/utf8.ts";
import {
  clipped,
  parseReference,
  ReferenceFailureError,
  select,
  type SelectableRecord,
} from "./selection.ts";
import { describeIssue, listOffsetSchema } from "./schema.ts";

/** One archived event in a `$list_history` page. */
export interface HistoryItem {
  /** `event-<n>`, n the event's sequence number. */
  event: string;
  /** The action the event records, e.g. `tests.run`. */
  action: string;
  /** Size of the event's serialized JSON in UTF-8 bytes. */
  utf8_bytes: number;
  /** A whole/text reference to the event. */
  reference: ResultReference;
}

/** One page of the event archive. */
export interface HistoryPage {
  /** Items in sequence order. */
  events: HistoryItem[];
  /** Offset of the next page, or `null` on the last page. */
  next_offset: number | null;
}

/** Where `$read_history` and `$list_history` look (the bounded policy's archive). */
export interface HistorySource {
  /** The archived event with id `event-<n>`, or `undefined`. */
  record(id: string): SelectableRecord | undefined;
  /** One page of the archive from `offset`. */
  list(offset: number): HistoryPage;
}

/**
 * The two model-facing stages of a step, each a forced tool call:
 * `selection` (choose an action) and `arguments` (fill in its arguments).
 * Lookups are budgeted per stage.
 */
export type StepPhase = "selection" | "arguments";

/** An answer of wire-formats.md "Lookup requests and responses". */
export type LookupAnswer =
  | { selected_text: string }
  | { selected_json: string }
  | { lookup_failed: string }
  | CataloguePage
  | HistoryPage;

/** Options of {@link LookupSession}. */
export interface LookupSessionOptions {
  /** The run's result store. */
  results: ResultStore;
  /** The event archive; without it history lookups fail with `not_available`. */
  history?: HistorySource;
  /** Which stage the session serves (budgets are per stage). */
  stage: StepPhase;
}

/** Most lookups per stage. */
export const MAX_LOOKUPS = 8;
/** Largest raw selected data per answer, in UTF-8 bytes. */
export const MAX_ANSWER_BYTES = 8192;
/**
 * Largest total of the data all answers of a stage return, after JSON
 * escaping (see {@link LookupSession.dataBytes} for what counts).
 */
export const MAX_STAGE_ANSWER_BYTES = 65536;
/** Largest encoded lookup request. */
export const MAX_REQUEST_BYTES = 4096;
/**
 * Largest failure answer after JSON escaping. A failure returns no data, so
 * it does not count towards {@link MAX_STAGE_ANSWER_BYTES}; eight of them
 * add at most 2,560 bytes to a request.
 */
export const MAX_FAILURE_ANSWER_BYTES = 320;

const LOOKUP_KEYS = new Set([
  "$read_result",
  "$list_results",
  "$read_history",
  "$list_history",
]);

/**
 * Tells whether tool-call arguments are a lookup request: an object with
 * exactly one key, which is `$read_result`, `$list_results`, `$read_history`
 * or `$list_history`. The value is not checked here.
 *
 * @param args Tool-call arguments.
 * @returns `true` for a lookup request.
 *
 * @example
 * ```ts
 * import { isLookupRequest } from "./lookup_session.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isLookupRequest({ $list_results: 0 }), true);
 * assert.equal(isLookupRequest({ paths: ["a.ts"] }), false);
 * assert.equal(isLookupRequest({ $list_results: 0, paths: [] }), false);
 * ```
 */
export function isLookupRequest(args: unknown): boolean {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return false;
  }
  const keys = Object.keys(args);
  return keys.length === 1 && LOOKUP_KEYS.has(keys[0]!);
}

/**
 * A ninth lookup in one stage: the step is refused (argument generation) or
 * the run is suspended (selection).
 *
 * @example
 * ```ts
 * import { LookupBudgetError, LookupSession, ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const session = new LookupSession({ results: new ResultStore(), stage: "selection" });
 * for (let i = 0; i < 8; i++) await session.answer({ $list_results: 0 });
 * await assert.rejects(
 *   session.answer({ $list_results: 0 }),
 *   (error: unknown) => error instanceof LookupBudgetError && error.stage === "selection",
 * );
 * ```
 */
export class LookupBudgetError
  extends LoomError.RangeError<"LookupBudgetError", {
    /** The stage whose budget ran out. */
    readonly stage: StepPhase;
  }> {}

/**
 * Answers the lookups of one stage, enforcing its budgets: at most 8
 * lookups, at most 8 KiB of raw selected data per answer, at most 64 KiB of
 * data for all answers together after JSON escaping (so eight plain 8 KiB
 * reads fit exactly), at most 4,096 bytes per request. A lookup that fails
 * or would pass a limit is answered with `lookup_failed` and still counts;
 * the ninth throws {@link LookupBudgetError}.
 *
 * @example
 * ```ts
 * import { LookupSession, ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const results = new ResultStore();
 * const d = await results.put("alpha\nbeta\ngamma\n", {
 *   origin: "repository.inspect words.txt",
 *   capture: "complete",
 * });
 * const session = new LookupSession({ results, stage: "arguments" });
 * const answer = await session.answer({
 *   $read_result: { result: d.result, sha256: d.sha256, select: { kind: "lines", start: 2, end: 2 } },
 * });
 * assert.deepEqual(answer, { selected_text: "beta\n" });
 * const failed = await session.answer({ $read_history: d.reference });
 * assert.match((failed as { lookup_failed: string }).lookup_failed, /^not_available: /);
 * assert.equal(session.used, 2);
 * ```
 */
export class LookupSession {
  #results: ResultStore;
  #history: HistorySource | undefined;
  #stage: StepPhase;
  #used = 0;
  #dataBytes = 0;
  #retrievals = 0;

  /**
   * Starts a session with a fresh budget.
   *
   * @param options The store, the optional history source and the stage.
   * @throws {TypeError} When the stage is unknown or the store is missing.
   */
  constructor(options: LookupSessionOptions) {
    if (options?.stage !== "selection" && options?.stage !== "arguments") {
      throw new TypeError(
        "Cannot start a lookup session: stage must be 'selection' or 'arguments'",
      );
    }
    if (options.results === undefined || options.results === null) {
      throw new TypeError("Cannot start a lookup session: results is missing");
    }
    this.#results = options.results;
    this.#history = options.history;
    this.#stage = options.stage;
  }

  /** The stage this session serves. */
  get stage(): StepPhase {
    return this.#stage;
  }

  /** Lookups answered so far, failures included. */
  get used(): number {
    return this.#used;
  }

  /**
   * The data the answers so far returned, in UTF-8 bytes after JSON
   * escaping: for `selected_text` and `selected_json` the escaped string
   * without its two quotes, for a catalogue or history page its whole JSON.
   * The `{"selected_text":…}` wrapper and `lookup_failed` answers carry no
   * data and do not count. At most {@link MAX_STAGE_ANSWER_BYTES}.
   */
  get dataBytes(): number {
    return this.#dataBytes;
  }

  /** Lookups answered with data (not `lookup_failed`). */
  get retrievals(): number {
    return this.#retrievals;
  }

  /**
   * Answers one lookup request.
   *
   * @param request The tool-call arguments (untrusted JSON).
   * @returns The answer JSON; failures are `{lookup_failed: "<code>: <message>"}`.
   * @throws {LookupBudgetError} On the ninth lookup of the stage.
   */
  answer(request: unknown): Promise<LookupAnswer> {
    try {
      return Promise.resolve(this.#answer(request));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #answer(request: unknown): LookupAnswer {
    if (this.#used >= MAX_LOOKUPS) {
      const stage = this.#stage;
      throw new LookupBudgetError(
        "budget_exhausted",
        `Cannot answer a ninth lookup in the ${stage} stage: ${MAX_LOOKUPS} lookups is the limit, so the ${
          stage === "arguments" ? "step is refused" : "run is suspended"
        }`,
        { stage },
      );
    }
    this.#used++;
    let answer: LookupAnswer;
    try {
      answer = this.#resolve(request);
    } catch (error) {
      if (!(error instanceof ReferenceFailureError)) throw error;
      return failureAnswer(error.code, error.message);
    }
    const size = dataBytes(answer);
    if (this.#dataBytes + size > MAX_STAGE_ANSWER_BYTES) {
      return failureAnswer(
        "budget_exhausted",
        `The answer needs ${size} bytes but only ${
          MAX_STAGE_ANSWER_BYTES - this.#dataBytes
        } of the stage's ${MAX_STAGE_ANSWER_BYTES} data bytes are left; select less`,
      );
    }
    this.#dataBytes += size;
    this.#retrievals++;
    return answer;
  }

  #resolve(request: unknown): LookupAnswer {
    let encoded: string | undefined;
    try {
      encoded = JSON.stringify(request);
    } catch {
      encoded = undefined;
    }
    if (encoded === undefined) {
      throw new ReferenceFailureError(
        "invalid_reference",
        "The lookup request is not JSON",
      );
    }
    const requestBytes = utf8Length(encoded);
    if (requestBytes > MAX_REQUEST_BYTES) {
      throw new ReferenceFailureError(
        "request_too_large",
        `The lookup request has ${requestBytes} bytes; the limit is ${MAX_REQUEST_BYTES}`,
      );
    }
    if (!isLookupRequest(request)) {
      throw new ReferenceFailureError(
        "invalid_reference",
        "A lookup request is an object with exactly one of $read_result, $list_results, $read_history or $list_history",
      );
    }
    const [key, value] = Object.entries(request as object)[0]!;
    switch (key) {
      case "$read_result": {
        const ref = parseReference(value);
        const record = this.#results.get(ref.result);
        if (record === undefined) {
          throw new ReferenceFailureError(
            "unknown_result",
            `No stored result has the id ${clipped(ref.result)}`,
          );
        }
        return rendered(select(record, ref, { maxBytes: MAX_ANSWER_BYTES }));
      }
      case "$list_results":
        return this.#page(this.#results.list(offsetOf(value)), "results");
      case "$read_history": {
        const history = this.#requireHistory();
        const ref = parseReference(value);
        const record = history.record(ref.result);
        if (record === undefined) {
          throw new ReferenceFailureError(
            "unknown_result",
            `No archived event has the id ${clipped(ref.result)}`,
          );
        }
        return rendered(select(record, ref, { maxBytes: MAX_ANSWER_BYTES }));
      }
      default: {
        const history = this.#requireHistory();
        return this.#page(history.list(offsetOf(value)), "events");
      }
    }
  }

  #page<T extends CataloguePage | HistoryPage>(page: T, what: string): T {
    const size = utf8Length(JSON.stringify(page));
    if (size > MAX_ANSWER_BYTES) {
      throw new ReferenceFailureError(
        "answer_too_large",
        `The ${what} page has ${size} bytes; the limit is ${MAX_ANSWER_BYTES}`,
      );
    }
    return page;
  }

  #requireHistory(): HistorySource {
    if (this.#history === undefined) {
      throw new ReferenceFailureError(
        "not_available",
        "History lookups need the bounded policy; this run keeps no event archive",
      );
    }
    return this.#history;
  }
}

function offsetOf(value: unknown): number {
  const parsed = listOffsetSchema.safeParse(value);
  if (!parsed.success) {
    const code = typeof value === "number"
      ? "invalid_range"
      : "invalid_reference";
    throw new ReferenceFailureError(
      code,
      `The list offset is malformed: ${describeIssue(parsed.error)}`,
    );
  }
  return parsed.data;
}

function rendered(
  selection: { text: string } | { json: string },
): LookupAnswer {
  return "text" in selection
    ? { selected_text: selection.text }
    : { selected_json: selection.json };
}

/** The data an answer returns after JSON escaping (see `dataBytes`). */
function dataBytes(answer: LookupAnswer): number {
  if ("selected_text" in answer) {
    return utf8Length(JSON.stringify(answer.selected_text)) - 2;
  }
  if ("selected_json" in answer) {
    return utf8Length(JSON.stringify(answer.selected_json)) - 2;
  }
  return utf8Length(JSON.stringify(answer));
}

/**
 * A `lookup_failed` answer, its message shortened so the answer stays within
 * {@link MAX_FAILURE_ANSWER_BYTES} after JSON escaping.
 *
 * @param code The failure code.
 * @param message What failed and why.
 * @returns `{lookup_failed: "<code>: <message>"}`.
 */
export function failureAnswer(
  code: ReferenceFailureError["code"],
  message: string,
): { lookup_failed: string } {
  const full = `${code}: ${message}`;
  const size = (text: string) =>
    utf8Length(JSON.stringify({ lookup_failed: text }));
  if (size(full) <= MAX_FAILURE_ANSWER_BYTES) return { lookup_failed: full };
  const chars = [...full];
  let keep = chars.length;
  let text = full;
  for (let over = size(full) - MAX_FAILURE_ANSWER_BYTES + 3; over > 0;) {
    keep -= Math.max(1, Math.ceil(over / 6));
    text = chars.slice(0, Math.max(0, keep)).join("") + "…";
    over = size(text) - MAX_FAILURE_ANSWER_BYTES;
  }
  return { lookup_failed: text };
}
