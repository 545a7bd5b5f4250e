/**
 * Stores and session slots opened for reading only (`loom view`, `loom
 * session show`): every write method refuses with `storage_read_only`
 * before it reaches the back-end — the one guarantee of a read-only store
 * whatever the back-end (a folder has no read-only mode of its own).
 *
 * @module
 */
import type { SessionSlot, Storage } from "./storage.ts";
import { StorageError } from "./storage_error.ts";

/**
 * A store whose every write method refuses with `storage_read_only`
 * before reaching the back-end: the one guarantee of a read-only store
 * whatever the back-end (a folder has no read-only mode of its own).
 *
 * @param store The store to guard.
 * @returns The same store, for reading only.
 *
 * @example
 * ```ts
 * import { FileStorage } from "./file_storage.ts";
 * import { readOnlyStorage } from "./read_only.ts";
 * import assert from "node:assert/strict";
 * const store = readOnlyStorage(await FileStorage.open(await Deno.makeTempDir()));
 * await assert.rejects(
 *   store.session("demo").journal.append(0, ["{}"]),
 *   (e: unknown) => (e as { code?: string }).code === "storage_read_only",
 * );
 * await store.close();
 * ```
 */
export function readOnlyStorage(store: Storage): Storage {
  return {
    kind: store.kind,
    location: store.location,
    session: (name: string) => readOnlySlot(store.session(name)),
    listSessions: () => store.listSessions(),
    deleteSession: (name: string) =>
      refuseWrite(store.location, `delete the session ${name}`),
    close: () => store.close(),
  };
}

/**
 * One session's slot whose every write method refuses with
 * `storage_read_only` (see {@linkcode readOnlyStorage}); for a session
 * folder given without a store.
 *
 * @param slot The slot to guard.
 * @returns The same slot, for reading only.
 *
 * @example
 * ```ts
 * import { readOnlySlot } from "./read_only.ts";
 * import { folderSession } from "./file_storage.ts";
 * import assert from "node:assert/strict";
 * const slot = readOnlySlot(folderSession(await Deno.makeTempDir()));
 * await assert.rejects(slot.prepare(), /open for reading only/);
 * ```
 */
export function readOnlySlot(slot: SessionSlot): SessionSlot {
  const { journal, bodies, name } = slot;
  const refuse = (what: string) => refuseWrite(slot.where, what);
  return {
    name,
    where: slot.where,
    paths: slot.paths,
    journal: {
      where: journal.where,
      exists: () => journal.exists(),
      read: (from?: number) => journal.read(from),
      append: () => refuse(`append to the journal of ${name}`),
      extend: () => refuse(`append to the journal of ${name}`),
      cutTorn: () => refuse(`cut the journal of ${name}`),
      close: () => journal.close(),
    },
    bodies: {
      get: (sha256: string) => bodies.get(sha256),
      has: (sha256: string) => bodies.has(sha256),
      put: () => refuse(`store a body of ${name}`),
      delete: () => refuse(`delete a body of ${name}`),
      collect: () => refuse(`collect the bodies of ${name}`),
    },
    outdated: () => slot.outdated(),
    prepare: () => refuse(`prepare the session ${name}`),
    acquireLease: () => refuse(`take the lease of ${name}`),
  };
}

function refuseWrite(where: string, what: string): Promise<never> {
  return Promise.reject(
    new StorageError(
      "storage_read_only",
      `Cannot ${what} in ${where}: it is open for reading only`,
      { location: where },
    ),
  );
}
