/**
 * The SQLite back-end, `sqlite:PATH`: every session of a store in one
 * database file through the runtime's built-in `node:sqlite` (no flag, no
 * native download), laid out and used by the shared SQL implementation
 * (`_sql_storage.ts`); this file holds only the driver and the dialect.
 * WAL mode, `synchronous=FULL`: a committed append survives a crash, an
 * interrupted one leaves nothing. A write transaction (`BEGIN IMMEDIATE`)
 * holds the database's write lock, which is also the journals' lock. The
 * connection is synchronous, so this process runs one statement or
 * transaction at a time on a file, in turn. A lease is a row with an
 * expiry; a holder whose process is gone from this machine is taken over
 * at once.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { dirname, resolve } from "node:path";
import type { Lease, LeaseOptions, Storage } from "./storage.ts";
import { isNoRoom, StorageError, storeFull } from "./storage_error.ts";
import {
  leaseLost,
  leaseTtlMs,
  newHolder,
  renewing,
  takeOver,
} from "./_lease.ts";
import {
  type SqlBackend,
  type SqlRunner,
  SqlSessions,
  type SqlTable,
  type SqlValue,
} from "./_sql_storage.ts";
import { messageOf } from "../errors.ts";

/** The schema version this Loom writes and reads. */
export const SQLITE_SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS loom_meta (
  key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS loom_journal (
  session TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL,
  PRIMARY KEY (session, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_bodies (
  sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS loom_session_bodies (
  session TEXT NOT NULL, sha256 TEXT NOT NULL,
  PRIMARY KEY (session, sha256)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loom_leases (
  session TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL);
`;

type Db = DatabaseSync;

/**
 * Turns per database file in this process. The connection is synchronous:
 * a transaction that waits for anything (the caller's code runs inside it)
 * would, if another connection of this process began one meanwhile, block
 * the whole process on the file's lock. So every statement and transaction
 * on a file takes its turn, whichever connection runs it.
 */
const TURNS = new Map<string, { last: Promise<unknown> }>();

/** `$1` placeholders as SQLite numbers them (`?1`). */
function sqliteText(text: string): string {
  return text.replace(/\$(\d+)/g, "?$1");
}

/** Runs `fn` in a write transaction (`BEGIN IMMEDIATE`). */
function transactionSync<T>(db: Db, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const value = fn();
    db.exec("COMMIT");
    return value;
  } catch (error) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // Already rolled back.
    }
    throw error;
  }
}

/**
 * A store in one SQLite file (see the module doc).
 *
 * @example
 * ```ts
 * import { SqliteStorage } from "./sqlite_storage.ts";
 * import assert from "node:assert/strict";
 * const store = SqliteStorage.open(`${await Deno.makeTempDir()}/loom.db`);
 * const bodies = store.session("a").bodies;
 * const digest = "0".repeat(64);
 * assert.equal(await bodies.put(digest, new Uint8Array([1])), true);
 * assert.equal(await bodies.put(digest, new Uint8Array([1])), false);
 * await store.close();
 * ```
 */
export class SqliteStorage extends SqlSessions implements Storage {
  readonly kind: "sqlite" = "sqlite";
  readonly location: string;

  private constructor(backend: SqliteBackend) {
    super(backend);
    this.location = backend.location;
    this.#backend = backend;
  }

  readonly #backend: SqliteBackend;

  /**
   * Opens (or creates) the database file and its tables.
   *
   * @param path The database file.
   * @param options `readOnly`: open an existing file read-only and create
   *   nothing.
   * @returns The store.
   * @throws {StorageError} `storage_unreachable` when the file cannot be
   *   opened (or, read-only, does not exist); `storage_schema_newer`.
   */
  static open(
    path: string,
    options: { readonly readOnly?: boolean } = {},
  ): SqliteStorage {
    const file = resolve(path);
    if (options.readOnly === true) return SqliteStorage.#openReadOnly(file);
    let db: Db;
    try {
      Deno.mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      db = new DatabaseSync(file);
      db.exec("PRAGMA busy_timeout = 10000");
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = FULL");
      transactionSync(db, () => {
        db.exec(SCHEMA);
        const row = db.prepare(
          "SELECT value FROM loom_meta WHERE key = 'schema_version'",
        ).get() as { value: string } | undefined;
        if (row === undefined) {
          db.prepare(
            "INSERT INTO loom_meta (key, value) VALUES ('schema_version', ?)",
          ).run(String(SQLITE_SCHEMA_VERSION));
        } else if (Number(row.value) > SQLITE_SCHEMA_VERSION) {
          throw new StorageError(
            "storage_schema_newer",
            `Cannot use the store sqlite:${file}: its schema version ${row.value} was written by a newer Loom (this one knows version ${SQLITE_SCHEMA_VERSION})`,
            { location: `sqlite:${file}` },
          );
        }
      });
    } catch (error) {
      if (error instanceof StorageError) throw error;
      throw new StorageError(
        "storage_unreachable",
        `Cannot open the store sqlite:${file}: ${messageOf(error)}`,
        { location: `sqlite:${file}`, cause: error },
      );
    }
    try {
      Deno.chmodSync(file, 0o600);
    } catch {
      // Not ours to change (another user's file we may use): leave it.
    }
    return new SqliteStorage(new SqliteBackend(file, db));
  }

  static #openReadOnly(file: string): SqliteStorage {
    let db: Db;
    try {
      db = new DatabaseSync(file, { readOnly: true });
      db.exec("PRAGMA busy_timeout = 10000");
      const table = db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'loom_meta'",
      ).get();
      const row = table === undefined ? undefined : db.prepare(
        "SELECT value FROM loom_meta WHERE key = 'schema_version'",
      ).get() as { value: string } | undefined;
      if (row !== undefined && Number(row.value) > SQLITE_SCHEMA_VERSION) {
        throw new StorageError(
          "storage_schema_newer",
          `Cannot use the store sqlite:${file}: its schema version ${row.value} was written by a newer Loom (this one knows version ${SQLITE_SCHEMA_VERSION})`,
          { location: `sqlite:${file}` },
        );
      }
      if (table === undefined) {
        throw new StorageError(
          "storage_unreachable",
          `Cannot read the store sqlite:${file}: it holds no Loom tables (nothing was ever stored there)`,
          { location: `sqlite:${file}` },
        );
      }
    } catch (error) {
      if (error instanceof StorageError) throw error;
      throw new StorageError(
        "storage_unreachable",
        `Cannot open the store sqlite:${file} to read it: ${messageOf(error)}`,
        { location: `sqlite:${file}`, cause: error },
      );
    }
    return new SqliteStorage(new SqliteBackend(file, db));
  }

  close(): Promise<void> {
    return this.#backend.close();
  }
}

/** The driver and dialect of a SQLite file. */
class SqliteBackend implements SqlBackend {
  readonly location: string;
  readonly paths: readonly string[];
  readonly bodyPartBytes = Infinity;
  readonly insertBodyPart =
    "INSERT INTO loom_bodies (sha256, size, data) VALUES (?1, ?3, ?4) ON CONFLICT DO NOTHING";
  readonly selectBody =
    "SELECT 0 AS part, size, data FROM loom_bodies WHERE sha256 = $1";
  readonly #db: Db;
  /** Whose turn it is on this database file, in this process. */
  readonly #turns: { last: Promise<unknown> };

  constructor(file: string, db: Db) {
    this.#db = db;
    this.location = `sqlite:${file}`;
    this.paths = [file, `${file}-wal`, `${file}-shm`, `${file}-journal`];
    let turns = TURNS.get(file);
    if (turns === undefined) {
      turns = { last: Promise.resolve() };
      TURNS.set(file, turns);
    }
    this.#turns = turns;
  }

  table(name: SqlTable): string {
    return `loom_${name}`;
  }

  /** Runs `fn` now, mapping database failures to typed errors. */
  #sync<T>(fn: (db: Db) => T): T {
    try {
      return fn(this.#db);
    } catch (error) {
      if (error instanceof StorageError || error instanceof TypeError) {
        throw error;
      }
      if (this.isDuplicate(error)) throw error;
      if (isNoRoom(error)) throw storeFull(this.location, error);
      throw new StorageError(
        "storage_unavailable",
        `The store ${this.location} failed: ${messageOf(error)}`,
        { location: this.location, cause: error },
      );
    }
  }

  /** Runs `fn` once no transaction of this process is open. */
  #inTurn<T>(fn: () => Promise<T> | T): Promise<T> {
    const next = this.#turns.last.then(fn);
    this.#turns.last = next.catch(() => {});
    return next;
  }

  #runner(): SqlRunner {
    return {
      rows: <T>(text: string, params: readonly SqlValue[] = []) =>
        Promise.resolve(
          this.#sync((db) =>
            db.prepare(sqliteText(text)).all(...params) as T[]
          ),
        ),
      run: (text: string, params: readonly SqlValue[] = []) =>
        Promise.resolve(
          this.#sync((db) =>
            Number(db.prepare(sqliteText(text)).run(...params).changes)
          ),
        ),
    };
  }

  rows<T>(text: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.#inTurn(() => this.#runner().rows<T>(text, params));
  }

  run(text: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.#inTurn(() => this.#runner().run(text, params));
  }

  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.#inTurn(async () => {
      this.#sync((db) => db.exec("BEGIN IMMEDIATE"));
      try {
        const value = await fn(this.#runner());
        this.#sync((db) => db.exec("COMMIT"));
        return value;
      } catch (error) {
        try {
          this.#db.exec("ROLLBACK");
        } catch {
          // Already rolled back.
        }
        throw error;
      }
    });
  }

  lockJournal(): Promise<void> {
    // BEGIN IMMEDIATE took the database's write lock already.
    return Promise.resolve();
  }

  isDuplicate(error: unknown): boolean {
    const text = messageOf(error);
    return /UNIQUE constraint failed|constraint failed: .*PRIMARY/i.test(text);
  }

  async acquireLease(
    session: string,
    where: string,
    options: LeaseOptions,
  ): Promise<Lease> {
    const ttlMs = leaseTtlMs(options);
    const holder = newHolder();
    const tookOver = await this.transaction(async (tx) => {
      const now = Date.now();
      const [held] = await tx.rows<{ holder: string; expires_at: number }>(
        "SELECT holder, expires_at FROM loom_leases WHERE session = $1",
        [session],
      );
      const tookOver = takeOver(
        held === undefined ? undefined : {
          holder: held.holder,
          expiresAt: new Date(held.expires_at),
          expired: held.expires_at <= now,
        },
        where,
      );
      await tx.run(
        `INSERT INTO loom_leases (session, holder, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (session) DO UPDATE
           SET holder = excluded.holder, expires_at = excluded.expires_at`,
        [session, holder, now + ttlMs],
      );
      return tookOver;
    });
    return renewing({
      holder,
      tookOver,
      renew: async () => {
        const expires = Date.now() + ttlMs;
        const changed = await this.run(
          "UPDATE loom_leases SET expires_at = $1 WHERE session = $2 AND holder = $3",
          [expires, session, holder],
        );
        if (changed === 0) throw leaseLost(where);
        return expires;
      },
      release: () =>
        this.run(
          "DELETE FROM loom_leases WHERE session = $1 AND holder = $2",
          [session, holder],
        ).then(() => {}, () => {}),
    }, options);
  }

  close(): Promise<void> {
    return this.#inTurn(() => {
      try {
        this.#db.close();
      } catch {
        // Already closed.
      }
    });
  }
}
