/**
 * The typed error of session storage: what went wrong, which file, and a
 * stable machine `code`. Loading a session never repairs or overwrites
 * anything; it fails with one of these instead.
 *
 * @module
 */
import { brand, causeOf, type LoomErrorOptions } from "../errors.ts";

/**
 * Raised by session storage. Nothing in the session is changed when it is
 * thrown by a load.
 *
 * @example
 * ```ts
 * import { SessionError } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const error = new SessionError("result_missing", "Result file x is missing", { file: "/s/x" });
 * assert.equal(error.code, "result_missing");
 * assert.equal(error.file, "/s/x");
 * assert.ok(error instanceof Error);
 * ```
 */
export class SessionError extends Error {
  /**
   * Stable machine code:
   * - `session_inside_workspace`: The session root is the workspace, inside it, or contains it.
   * - `session_missing`: The directory holds no `session.json`.
   * - `session_exists`: A session is already stored where a new one was to be created.
   * - `session_invalid`: `session.json` is unreadable, not JSON, or breaks the closed schema.
   * - `result_missing`: A persisted result file named by the catalogue does not exist.
   * - `result_corrupted`: A persisted result file or inline body does not match its SHA-256 digest.
   * - `not_owner`: A write was attempted through a handle that does not own the root.
   */
  readonly code:
    | "session_inside_workspace"
    | "session_missing"
    | "session_exists"
    | "session_invalid"
    | "result_missing"
    | "result_corrupted"
    | "not_owner";
  /** The file the error is about, when there is one. */
  readonly file: string | undefined;

  /**
   * Creates the error.
   *
   * @param code Machine code.
   * @param message Sentence-case explanation naming the file.
   * @param options The file concerned and the underlying cause.
   */
  constructor(
    code: SessionError["code"],
    message: string,
    options: LoomErrorOptions & { readonly file?: string } = {},
  ) {
    super(message, causeOf(options));
    this.code = brand(this, "SessionError", code);
    this.file = options.file;
  }
}
