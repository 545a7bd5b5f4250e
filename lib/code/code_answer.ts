/**
 * What a run answers the model: `{result, logs, calls, ms}`. A result whose
 * JSON passes the face's offload threshold is stored and answered by its
 * descriptor (`result_stored`), so a large computed value is read back by
 * pointer, lines and `find_in_result` like any offloaded tool result; logs
 * past 8 KiB are answered up to 8 KiB and stored whole (`logs_stored`). The
 * store and its descriptors are the face's own (the gateway's offload path,
 * the adapters'): this module only decides what is stored.
 *
 * @module
 */
import { cutUtf8 } from "../store/preview.ts";
import type { CodeOutcome } from "./_bridge.ts";
import type { CodeError } from "./code_error.ts";

/** Logs answered inline, in UTF-8 bytes; the rest is stored. */
export const INLINE_LOG_BYTES = 8192;

/** How a face stores what does not fit in an answer. */
export interface AnswerStore {
  /** `--offload-bytes`: a result whose JSON is longer is stored. */
  readonly offloadBytes: number;
  /**
   * Stores a text (JSON or not; `loom.store` may name its media type) and
   * resolves to its descriptor.
   */
  store(
    text: string,
    json: boolean,
    mediaType?: string,
  ): Promise<Record<string, unknown>>;
}

/** Logs as answered: up to 8 KiB inline, the whole stored beyond that. */
export interface AnsweredLogs {
  /** The logs, or their first 8 KiB (the last entry cut on a character). */
  readonly logs: readonly string[];
  /** Set when `logs` holds only the first 8 KiB. */
  readonly logs_truncated?: true;
  /** The descriptor of all logs, one entry a line, when they were cut. */
  readonly logs_stored?: Record<string, unknown>;
}

/** A run's answer (wire format of `run_code`). */
export type CodeAnswer = AnsweredLogs & {
  /** The returned value, when small enough to answer. */
  readonly result?: unknown;
  /** The descriptor of the stored value, when too large to answer. */
  readonly result_stored?: Record<string, unknown>;
  /** Tool calls made. */
  readonly calls: number;
  /** Wall time in milliseconds. */
  readonly ms: number;
};

/**
 * The answer to a run that returned.
 *
 * @param outcome What the run returned.
 * @param store The face's store and threshold.
 * @returns `{result | result_stored, logs, calls, ms}`.
 *
 * @example
 * ```ts
 * import { codeAnswer } from "./code_answer.ts";
 * import assert from "node:assert/strict";
 * const store = { offloadBytes: 16, store: (text: string) => Promise.resolve({ utf8_bytes: text.length }) };
 * const outcome = { result: [1, 2, 3], resultJson: "[1,2,3]", logs: ["hi"], logBytes: 2, calls: 0, called: [], ms: 40 };
 * assert.deepEqual(await codeAnswer(outcome, store), { result: [1, 2, 3], logs: ["hi"], calls: 0, ms: 40 });
 * const big = { ...outcome, result: "x".repeat(20), resultJson: `"${"x".repeat(20)}"` };
 * assert.deepEqual((await codeAnswer(big, store)).result_stored, { utf8_bytes: 22 });
 * ```
 */
export async function codeAnswer(
  outcome: CodeOutcome,
  store: AnswerStore,
): Promise<CodeAnswer> {
  const size = new TextEncoder().encode(outcome.resultJson).length;
  const value = size <= store.offloadBytes ? { result: outcome.result } : {
    result_stored: await store.store(
      JSON.stringify(outcome.result, null, 2),
      true,
    ),
  };
  return {
    ...value,
    ...await answeredLogs(outcome.logs, store),
    calls: outcome.calls,
    ms: outcome.ms,
  };
}

/**
 * The text of a failed run's tool error: its code and message, then its
 * logs so far (up to 8 KiB inline, all of them stored beyond that).
 *
 * @param error How the run ended.
 * @param store The face's store.
 * @returns The error text and the structured logs.
 *
 * @example
 * ```ts
 * import { codeFailure } from "./code_answer.ts";
 * import { CodeError } from "./code_error.ts";
 * import assert from "node:assert/strict";
 * const error = new CodeError("code_timeout", "The run passed its deadline of 10 ms and was stopped", { logs: ["step 1"], calls: 0, ms: 10 });
 * const failure = await codeFailure(error, { offloadBytes: 8192, store: () => Promise.reject(new Error("unused")) });
 * assert.match(failure.text, /^code_timeout: The run passed its deadline/);
 * assert.match(failure.text, /step 1/);
 * ```
 */
export async function codeFailure(
  error: CodeError,
  store: AnswerStore,
): Promise<
  { readonly text: string; readonly details: Record<string, unknown> }
> {
  const logs = await answeredLogs(error.logs, store);
  const details = {
    error: { code: error.code, message: error.message },
    ...logs,
    calls: error.calls,
    ms: error.ms,
  };
  return {
    text: `${error.code}: ${error.message}${
      logs.logs.length === 0
        ? ""
        : `\n\nLogs so far:\n${JSON.stringify(logs, null, 2)}`
    }`,
    details,
  };
}

async function answeredLogs(
  logs: readonly string[],
  store: AnswerStore,
): Promise<AnsweredLogs> {
  const encoder = new TextEncoder();
  let left = INLINE_LOG_BYTES;
  const kept: string[] = [];
  for (const entry of logs) {
    const bytes = encoder.encode(entry).length;
    if (bytes <= left) {
      kept.push(entry);
      left -= bytes;
      continue;
    }
    if (left > 0) kept.push(cutUtf8(entry, left).text);
    return {
      logs: kept,
      logs_truncated: true,
      logs_stored: await store.store(logs.join("\n"), false),
    };
  }
  return { logs: kept };
}
