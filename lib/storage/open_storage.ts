/**
 * Opening a store by its URL: the one place that knows every back-end
 * (each back-end knows only the interface), so the interface imports none
 * of them.
 *
 * @module
 */
import type { Storage } from "./storage.ts";
import { StorageError } from "./storage_error.ts";
import { redactUrl } from "./location.ts";
import { readOnlyStorage } from "./read_only.ts";

/** Options of {@linkcode openStorage}. */
export interface OpenStorageOptions {
  /**
   * Open for reading only (`loom view`, `loom session show`): nothing is
   * created or changed — no database file, schema or table; a database
   * connection refuses writes. A database that holds no Loom tables is
   * refused (`storage_unreachable`): there is nothing to read.
   */
  readonly readOnly?: boolean;
  /**
   * The longest a database operation may take before it fails with
   * `storage_unavailable` (default 10,000 ms): a server that stopped
   * answering fails the call that needed it within this, never hangs it.
   * The folder back-end ignores it.
   */
  readonly timeoutMs?: number;
}

/**
 * Opens a store by URL: `file:DIR` (a folder holding one folder per
 * session), `sqlite:PATH` (one database file, created when missing) or
 * `postgres://user:password@host:port/db` (also `postgresql://`; one
 * schema, `loom`, created on first use and versioned). A bare path is not
 * a store URL: write `file:` before it.
 *
 * @param url The store URL.
 * @param options Read-only or not (default: read and write); how long a
 *   database operation may take.
 * @returns The open store; call {@linkcode Storage.close}.
 * @throws {StorageError} `storage_url_invalid`; `storage_unreachable`
 *   when the database cannot be opened or reached (naming its host, never
 *   the password); `storage_schema_newer`.
 *
 * @example
 * ```ts
 * import { openStorage } from "./open_storage.ts";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const store = await openStorage(`sqlite:${dir}/loom.db`);
 * const slot = store.session("demo");
 * await slot.journal.append(0, ['{"seq":0}']);
 * assert.deepEqual((await slot.journal.read()).records, ['{"seq":0}']);
 * assert.deepEqual(await store.listSessions(), ["demo"]);
 * await store.close();
 * ```
 */
export async function openStorage(
  url: string,
  options: OpenStorageOptions = {},
): Promise<Storage> {
  const readOnly = options.readOnly === true;
  if (typeof url !== "string") {
    throw new StorageError(
      "storage_url_invalid",
      "Cannot open a store: its URL must be a string",
    );
  }
  const guard = (store: Storage) => readOnly ? readOnlyStorage(store) : store;
  if (url.startsWith("file:")) {
    const dir = url.slice("file:".length).replace(/^\/\/(?=\/)/, "");
    const { FileStorage } = await import("./file_storage.ts");
    return guard(await FileStorage.open(required(dir, url)));
  }
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    const { SqliteStorage } = await import("./sqlite_storage.ts");
    return guard(SqliteStorage.open(required(path, url), { readOnly }));
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    const { PostgresStorage } = await import("./postgres_storage.ts");
    return guard(await PostgresStorage.open(url, { ...options, readOnly }));
  }
  throw new StorageError(
    "storage_url_invalid",
    `Cannot open the store ${
      redactUrl(url)
    }: a store URL is file:DIR, sqlite:PATH or postgres://user:password@host:port/database`,
    { location: redactUrl(url) },
  );
}

function required(path: string, url: string): string {
  if (path === "") {
    throw new StorageError(
      "storage_url_invalid",
      `Cannot open the store ${redactUrl(url)}: it names no path`,
      { location: redactUrl(url) },
    );
  }
  return path;
}
