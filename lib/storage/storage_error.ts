/**
 * The typed error of the storage layer: a journal append that lost a race,
 * a lease another process holds or that was lost, a store that cannot be
 * reached or was lost mid-run, a URL or name that cannot be used. Messages
 * name a store only by its redacted location: never a password or a secret
 * of the URL's query.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

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
