/**
 * The typed error of the storage layer: a journal append that lost a race,
 * a lease another process holds or that was lost, a store that cannot be
 * reached or was lost mid-run, a URL or name that cannot be used. Messages
 * name a store only by its redacted location: never a password or a secret
 * of the URL's query.
 *
 * @module
 */
import { LoomError, messageOf } from "../errors.ts";

/**
 * Raised by the storage layer. Its codes:
 * - `storage_url_invalid`: The store URL is not `file:DIR`, `sqlite:PATH` or `postgres://…`.
 * - `storage_unreachable`: The store cannot be reached or opened at start.
 * - `storage_unavailable`: The store was lost mid-run; nothing committed is lost or half-written.
 * - `storage_schema_newer`: The database was set up by a newer Loom (a later schema version).
 * - `storage_read_only`: A write to a store opened read-only (`loom view`).
 * - `storage_name_invalid`: A session name that is not `[A-Za-z0-9][A-Za-z0-9._-]*` (at most 128).
 * - `journal_conflict`: Another writer appended to the journal first; nothing was written.
 * - `lease_held`: Another live holder has the session's lease.
 * - `lease_lost`: This holder's lease expired and was taken, or its record is gone.
 * - `store_full`: The store has no room (its disk or its database is full); nothing was written, nothing stored before was touched.
 *
 * @example
 * ```ts
 * import { StorageError } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const error = new StorageError("journal_conflict", "Another writer appended first", { location: "sqlite:/tmp/s.db" });
 * assert.equal(error.code, "journal_conflict");
 * assert.equal(error.location, "sqlite:/tmp/s.db");
 * ```
 */
export class StorageError extends LoomError.Error<"StorageError", {
  /** The store (redacted URL) or folder the error is about, when known. */
  readonly location?: string;
}> {}

/**
 * The `journal_conflict` every back-end raises when an append does not find
 * the journal ending where the writer expected.
 *
 * @param where The journal's redacted location.
 * @param position The record number the writer meant to append at.
 * @returns The error; nothing was written.
 */
export function journalConflict(where: string, position: number): StorageError {
  return new StorageError(
    "journal_conflict",
    `Cannot append record ${position} to ${where}: another writer appended to the journal first; nothing was written`,
    { location: where },
  );
}

/**
 * Whether an error of a file system or a database says it has no room:
 * `ENOSPC`/`EDQUOT` (os errors 28 and 122), SQLite's `SQLITE_FULL`,
 * PostgreSQL's `53100`.
 *
 * @param error What was thrown.
 * @returns `true` for "no room".
 */
export function isNoRoom(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (code === "ENOSPC" || code === "EDQUOT" || code === "53100") return true;
  const message = messageOf(error);
  return /os error (28|122)\b|No space left on device|Disk quota exceeded|database or disk is full/i
    .test(message);
}

/**
 * The `store_full` error of a store with no room left.
 *
 * @param where The store (a path or a redacted URL).
 * @param cause What the file system or database said.
 * @returns The error; nothing was written.
 */
export function storeFull(where: string, cause: unknown): StorageError {
  return new StorageError(
    "store_full",
    `Cannot write to the store ${where}: it has no room left (${
      messageOf(cause)
    }); nothing was written and nothing stored before was touched: free space, then retry`,
    { location: where, cause },
  );
}
