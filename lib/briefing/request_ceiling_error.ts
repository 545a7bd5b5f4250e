/**
 * The typed error of a bounded request whose mandatory content cannot fit
 * the request ceiling even with every event retired and every lookup answer
 * dropped.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * Raised when the mandatory content of a bounded request (instructions,
 * intent, checkpoint line, working state, candidates, notes, tool schema)
 * does not fit the request ceiling. Records are never cut to fit.
 *
 * @example
 * ```ts
 * import { RequestCeilingError } from "./request_ceiling_error.ts";
 * import assert from "node:assert/strict";
 * const err = new RequestCeilingError("request_too_large", "Too large", {
 *   bytes: 70_000,
 *   limit: 65_536,
 * });
 * assert.equal(err.code, "request_too_large");
 * assert.ok(err instanceof RangeError);
 * ```
 */
export class RequestCeilingError
  extends LoomError.RangeError<"RequestCeilingError", {
    /** Bytes of the smallest request that could be built. */
    readonly bytes: number;
    /** The ceiling in bytes. */
    readonly limit: number;
  }> {}
