/**
 * Errors of the workspace executor other than missing confinement.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * An executor operation failed: the workspace is not a directory, the
 * executor was closed, an edit could not be written (`edit_failed`,
 * `hard_link`, `symlink_escape`, `not_a_file`: nothing changed, verified),
 * an edit's rollback failed (`rollback_failed`: the message lists the files
 * that may be changed), the tests were refused because a file is
 * hard-linked to one outside (`hard_link`) or, under Deno's confinement, a
 * symlink leads outside (`symlink_escape`), no test command is configured,
 * the test program could not be started, or the worker stopped answering.
 *
 * @example
 * ```ts
 * import { ExecutorError } from "./executor_error.ts";
 * import assert from "node:assert/strict";
 * const error = new ExecutorError("executor_closed", "The executor is closed");
 * assert.equal(error.code, "executor_closed");
 * assert.equal(error.message, "The executor is closed");
 * ```
 */
export class ExecutorError extends LoomError.Error<"ExecutorError"> {}
