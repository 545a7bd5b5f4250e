/**
 * The typed error of a bounded request whose mandatory content cannot fit
 * the request ceiling even with every event retired and every lookup answer
 * dropped.
 *
 * @module
 */

/**
 * Raised when the mandatory content of a bounded request (instructions,
 * intent, checkpoint line, working state, candidates, notes, tool schema)
 * does not fit the request ceiling. Records are never cut to fit.
 *
 * @example
 * ```ts
 * import { RequestCeilingError } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const err = new RequestCeilingError(70_000, 65_536);
 * assert.equal(err.code, "request_too_large");
 * assert.ok(err instanceof RangeError);
 * ```
 */
export class RequestCeilingError extends RangeError {
  /** Always `"request_too_large"`. */
  readonly code: "request_too_large" = "request_too_large";
  /** Bytes of the smallest request that could be built. */
  readonly bytes: number;
  /** The ceiling in bytes. */
  readonly limit: number;

  /**
   * Creates the error.
   *
   * @param bytes Bytes of the smallest request that could be built.
   * @param limit The ceiling in bytes.
   */
  constructor(bytes: number, limit: number) {
    super(
      `Cannot build a bounded request within ${limit} bytes: its mandatory content alone takes ${bytes} bytes with every event retired and every lookup answer dropped`,
    );
    this.name = "RequestCeilingError";
    this.bytes = bytes;
    this.limit = limit;
  }
}
