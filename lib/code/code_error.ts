/**
 * The error a `run_code` run ends with when it does not answer.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/** What a failed run had done when it ended. */
export interface CodeErrorDetails {
  /** Its console output so far, one entry per call of `console.*`. */
  readonly logs: readonly string[];
  /** Tool calls it made. */
  readonly calls: number;
  /** Milliseconds since it started. */
  readonly ms: number;
}

/**
 * A run of model-written code ended without an answer: `code_timeout` (its
 * deadline passed), `code_memory` (its heap limit was reached), `code_calls`
 * (more calls than allowed, or more at once), `code_output` (more than 1 MiB
 * of logs), `code_error` (an uncaught exception, a value that is not JSON,
 * or a broken frame). It carries the logs so far.
 *
 * @example
 * ```ts
 * import { CodeError } from "./code_error.ts";
 * import assert from "node:assert/strict";
 * const error = new CodeError("code_timeout", "The run passed its 30,000 ms deadline", { logs: ["step 1"], calls: 2, ms: 30000 });
 * assert.equal(error.code, "code_timeout");
 * assert.deepEqual(error.logs, ["step 1"]);
 * ```
 */
export class CodeError extends LoomError.Error<"CodeError", CodeErrorDetails> {}
