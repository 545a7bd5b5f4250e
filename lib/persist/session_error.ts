/**
 * The typed error of session storage: what went wrong, which file (and
 * line of the journal), and a stable machine `code`. Loading a session never
 * repairs or overwrites anything; it fails with one of these instead.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * Raised by session storage. Nothing in the session is changed when it is
 * thrown by a load. Its codes:
 * - `session_inside_workspace`: The session root is the workspace, inside it, or contains it.
 * - `session_missing`: The directory holds no `journal.jsonl`.
 * - `session_exists`: A session is already stored where a new one was to be created.
 * - `session_outdated`: The directory holds a `session.json` of the unauthenticated old format.
 * - `session_invalid`: A journal line is unreadable, not JSON, or breaks the closed schema.
 * - `session_tampered`: A journal record does not verify against the key and the chain.
 * - `session_locked`: Another process holds the session's lock.
 * - `session_key_invalid`: The session key file cannot be read, created or trusted.
 * - `result_missing`: A persisted result file named by the catalogue does not exist.
 * - `result_corrupted`: A persisted result file or inline body does not match its SHA-256 digest.
 *
 * @example
 * ```ts
 * import { SessionError } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const error = new SessionError("session_tampered", "Record 3 does not verify", { file: "/s/journal.jsonl", line: 4 });
 * assert.equal(error.code, "session_tampered");
 * assert.equal(error.line, 4);
 * assert.ok(error instanceof Error);
 * ```
 */
export class SessionError extends LoomError.Error<"SessionError", {
  /** The file the error is about, when there is one. */
  readonly file?: string;
  /** The 1-based journal line the error is about, when there is one. */
  readonly line?: number;
}> {}
