/**
 * The typed error of session storage: what went wrong, which file (and
 * line of the journal), and a stable machine `code`. Loading a session never
 * repairs or overwrites anything; it fails with one of these instead.
 *
 * @module
 */

/** Machine codes of {@linkcode SessionError}. */
export type SessionErrorCode =
  /** The session root is the workspace, inside it, or contains it. */
  | "session_inside_workspace"
  /** The directory holds no `journal.jsonl`. */
  | "session_missing"
  /** A session is already stored where a new one was to be created. */
  | "session_exists"
  /** The directory holds a `session.json` of the unauthenticated old format. */
  | "session_outdated"
  /** A journal line is unreadable, not JSON, or breaks the closed schema. */
  | "session_invalid"
  /** A journal record does not verify against the key and the chain. */
  | "session_tampered"
  /** Another process holds the session's lock. */
  | "session_locked"
  /** The session key file cannot be read, created or trusted. */
  | "session_key_invalid"
  /** A persisted result file named by the catalogue does not exist. */
  | "result_missing"
  /** A persisted result file or inline body does not match its SHA-256 digest. */
  | "result_corrupted";

/** What a {@linkcode SessionError} is about, besides its message. */
export interface SessionErrorDetails {
  /** The file concerned. */
  readonly file?: string;
  /** The 1-based line of the journal concerned. */
  readonly line?: number;
  /** The underlying error. */
  readonly cause?: unknown;
}

/**
 * Raised by session storage. Nothing in the session is changed when it is
 * thrown by a load.
 *
 * @example
 * ```ts
 * import { SessionError } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const error = new SessionError("session_tampered", "Record 3 does not verify", { file: "/s/journal.jsonl", line: 4 });
 * assert.equal(error.code, "session_tampered");
 * assert.equal(error.line, 4);
 * assert.ok(error instanceof Error);
 * ```
 */
export class SessionError extends Error {
  /** Stable machine code. */
  readonly code: SessionErrorCode;
  /** The file the error is about, when there is one. */
  readonly file: string | undefined;
  /** The 1-based journal line the error is about, when there is one. */
  readonly line: number | undefined;

  /**
   * Creates the error.
   *
   * @param code Machine code.
   * @param message Sentence-case explanation naming the file.
   * @param details The file and line concerned and the underlying cause.
   */
  constructor(
    code: SessionErrorCode,
    message: string,
    details: SessionErrorDetails = {},
  ) {
    super(message, { cause: details.cause });
    this.name = "SessionError";
    this.code = code;
    this.file = details.file;
    this.line = details.line;
  }
}
