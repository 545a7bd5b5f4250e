/**
 * The SQLite back-end, `sqlite:PATH`: every session of a store in one
 * database file through the runtime's built-in `node:sqlite` (no flag, no
 * native download). Journals are rows keyed by (session, position), so
 * two writers at one position cannot both commit; bodies are rows keyed by
 * digest, shared by every session that stored them; leases are rows with
 * an expiry. WAL mode, `synchronous=FULL`: a committed append survives a
 * crash, an interrupted one leaves nothing.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { dirname, resolve } from "node:path";
import type {
  BodyStore,
  Collected,
  Journal,
  JournalRead,
  Lease,
  LeaseOptions,
  SessionSlot,
  Storage,
} from "./storage.ts";
import { sessionName } from "./storage.ts";
import { journalConflict, StorageError } from "./storage_error.ts";
import { renewing } from "./_lease.ts";
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

/** Runs `fn` in a write transaction (`BEGIN IMMEDIATE`). */
function transaction<T>(db: Db, fn: () => T): T {
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

/** One session's rows. */
class SqliteSlot implements SessionSlot {
  readonly name: string;
  readonly where: string;
  readonly paths: readonly string[];
  readonly journal: Journal;
  readonly bodies: BodyStore;
  readonly #store: SqliteStorage;

  constructor(store: SqliteStorage, name: string, path: string) {
    this.#store = store;
    this.name = name;
    this.where = `sqlite:${path}#${name}`;
    this.paths = [path, `${path}-wal`, `${path}-shm`, `${path}-journal`];
    this.journal = new SqliteJournal(store, name, this.where);
    this.bodies = new SqliteBodies(store, name);
  }

  outdated(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  prepare(): Promise<void> {
    return Promise.resolve();
  }

  acquireLease(options: LeaseOptions = {}): Promise<Lease> {
    const ttlMs = options.ttlMs ?? 60_000;
    const holder = `pid ${Deno.pid} ${crypto.randomUUID()}`;
    const session = this.name;
    const where = this.where;
    return this.#store.run((db) => {
      const now = Date.now();
      const tookOver = transaction(db, () => {
        const held = db.prepare(
          "SELECT holder, expires_at FROM loom_leases WHERE session = ?",
        ).get(session) as { holder: string; expires_at: number } | undefined;
        if (held !== undefined && held.expires_at > now) {
          throw new StorageError(
            "lease_held",
            `Session ${where} is leased by ${held.holder} until ${
              new Date(held.expires_at).toISOString()
            }: wait for it to end or to expire`,
            { location: where },
          );
        }
        db.prepare(
          "INSERT INTO loom_leases (session, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (session) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at",
        ).run(session, holder, now + ttlMs);
        return held === undefined
          ? null
          : `took over the expired lease of ${held.holder} (expired ${
            new Date(held.expires_at).toISOString()
          })`;
      });
      return renewing({
        holder,
        tookOver,
        expiresAt: now + ttlMs,
        ttlMs,
        autoRenew: options.autoRenew ?? true,
        renew: () =>
          this.#store.run((db) => {
            const expires = Date.now() + ttlMs;
            const changed = db.prepare(
              "UPDATE loom_leases SET expires_at = ? WHERE session = ? AND holder = ?",
            ).run(expires, session, holder).changes;
            if (Number(changed) === 0) {
              throw new StorageError(
                "lease_lost",
                `Lost the lease of session ${where}: it expired and another holder took it, or it was removed; nothing more is written`,
                { location: where },
              );
            }
            return expires;
          }),
        release: () =>
          this.#store.run((db) => {
            db.prepare(
              "DELETE FROM loom_leases WHERE session = ? AND holder = ?",
            ).run(session, holder);
          }).catch(() => {}),
      });
    });
  }
}

class SqliteJournal implements Journal {
  readonly where: string;
  readonly #store: SqliteStorage;
  readonly #session: string;

  constructor(store: SqliteStorage, session: string, where: string) {
    this.#store = store;
    this.#session = session;
    this.where = where;
  }

  exists(): Promise<boolean> {
    return this.#store.run((db) =>
      db.prepare("SELECT 1 FROM loom_journal WHERE session = ? AND seq = 0")
        .get(this.#session) !== undefined
    );
  }

  read(from = 0): Promise<JournalRead> {
    return this.#store.run((db) => {
      const rows = db.prepare(
        "SELECT seq, record FROM loom_journal WHERE session = ? AND seq >= ? ORDER BY seq",
      ).all(this.#session, from) as { seq: number; record: string }[];
      const records: string[] = [];
      for (const row of rows) {
        // A gap can only be made by hand: the chain check reports it.
        records.push(row.record);
      }
      const end = rows.length === 0
        ? this.#end(db)
        : Number(rows.at(-1)!.seq) + 1;
      return { records, end, torn: 0 };
    });
  }

  #end(db: Db): number {
    const row = db.prepare(
      "SELECT max(seq) AS last FROM loom_journal WHERE session = ?",
    ).get(this.#session) as { last: number | null };
    return row.last === null ? 0 : Number(row.last) + 1;
  }

  append(position: number, records: readonly string[]): Promise<void> {
    return this.#store.run((db) => {
      transaction(db, () => {
        if (this.#end(db) !== position) {
          throw journalConflict(this.where, position);
        }
        const insert = db.prepare(
          "INSERT INTO loom_journal (session, seq, record) VALUES (?, ?, ?)",
        );
        records.forEach((record, i) =>
          insert.run(this.#session, position + i, record)
        );
      });
    });
  }

  cutTorn(): Promise<number> {
    return Promise.resolve(0);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

class SqliteBodies implements BodyStore {
  readonly #store: SqliteStorage;
  readonly #session: string;

  constructor(store: SqliteStorage, session: string) {
    this.#store = store;
    this.#session = session;
  }

  put(sha256: string, bytes: Uint8Array): Promise<boolean> {
    return this.#store.run((db) =>
      transaction(db, () => {
        db.prepare(
          "INSERT OR IGNORE INTO loom_session_bodies (session, sha256) VALUES (?, ?)",
        ).run(this.#session, sha256);
        return Number(
          db.prepare(
            "INSERT OR IGNORE INTO loom_bodies (sha256, size, data) VALUES (?, ?, ?)",
          ).run(sha256, bytes.length, bytes).changes,
        ) > 0;
      })
    );
  }

  get(sha256: string): Promise<Uint8Array | undefined> {
    return this.#store.run((db) => {
      const row = db.prepare("SELECT data FROM loom_bodies WHERE sha256 = ?")
        .get(sha256) as { data: Uint8Array } | undefined;
      return row?.data;
    });
  }

  has(sha256: string): Promise<boolean> {
    return this.#store.run((db) =>
      db.prepare("SELECT 1 FROM loom_bodies WHERE sha256 = ?").get(sha256) !==
        undefined
    );
  }

  delete(sha256: string): Promise<boolean> {
    return this.#store.run((db) =>
      transaction(db, () => {
        const unlinked = Number(
          db.prepare(
            "DELETE FROM loom_session_bodies WHERE session = ? AND sha256 = ?",
          ).run(this.#session, sha256).changes,
        ) > 0;
        dropOrphans(db, [sha256]);
        return unlinked;
      })
    );
  }

  collect(keep: ReadonlySet<string>, dryRun: boolean): Promise<Collected> {
    return this.#store.run((db) =>
      transaction(db, () => {
        const linked = db.prepare(
          "SELECT l.sha256 AS sha256, coalesce(b.size, 0) AS size FROM loom_session_bodies l LEFT JOIN loom_bodies b ON b.sha256 = l.sha256 WHERE l.session = ? ORDER BY l.sha256",
        ).all(this.#session) as { sha256: string; size: number }[];
        const doomed = linked.filter((row) => !keep.has(row.sha256));
        if (!dryRun) {
          const unlink = db.prepare(
            "DELETE FROM loom_session_bodies WHERE session = ? AND sha256 = ?",
          );
          for (const row of doomed) unlink.run(this.#session, row.sha256);
          dropOrphans(db, doomed.map((row) => row.sha256));
        }
        return {
          deleted: doomed.map((row) => `tool-results/${row.sha256}.txt`),
          freedBytes: doomed.reduce((sum, row) => sum + Number(row.size), 0),
          kept: linked.length - doomed.length,
          ignored: [],
        };
      })
    );
  }
}

/** Deletes bodies no session links to any more. */
function dropOrphans(db: Db, digests: readonly string[]): void {
  const drop = db.prepare(
    "DELETE FROM loom_bodies WHERE sha256 = ? AND NOT EXISTS (SELECT 1 FROM loom_session_bodies WHERE sha256 = ?)",
  );
  for (const sha256 of digests) drop.run(sha256, sha256);
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
export class SqliteStorage implements Storage {
  readonly kind: "sqlite" = "sqlite";
  readonly location: string;
  readonly #path: string;
  readonly #db: Db;

  private constructor(path: string, db: Db) {
    this.#path = path;
    this.#db = db;
    this.location = `sqlite:${path}`;
  }

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
      transaction(db, () => {
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
    return new SqliteStorage(file, db);
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
    return new SqliteStorage(file, db);
  }

  /** Runs a statement function, mapping database failures to typed errors. */
  run<T>(fn: (db: Db) => T): Promise<T> {
    try {
      return Promise.resolve(fn(this.#db));
    } catch (error) {
      if (error instanceof StorageError || error instanceof TypeError) {
        return Promise.reject(error);
      }
      return Promise.reject(
        new StorageError(
          "storage_unavailable",
          `The store ${this.location} failed: ${messageOf(error)}`,
          { location: this.location, cause: error },
        ),
      );
    }
  }

  session(name: string): SessionSlot {
    return new SqliteSlot(this, sessionName(name), this.#path);
  }

  listSessions(): Promise<string[]> {
    return this.run((db) =>
      (db.prepare(
        "SELECT session FROM loom_journal WHERE seq = 0 ORDER BY session",
      ).all() as { session: string }[]).map((row) => row.session)
    );
  }

  deleteSession(name: string): Promise<void> {
    const session = sessionName(name);
    return this.run((db) =>
      transaction(db, () => {
        const digests = (db.prepare(
          "SELECT sha256 FROM loom_session_bodies WHERE session = ?",
        ).all(session) as { sha256: string }[]).map((row) => row.sha256);
        db.prepare("DELETE FROM loom_journal WHERE session = ?").run(session);
        db.prepare("DELETE FROM loom_leases WHERE session = ?").run(session);
        db.prepare("DELETE FROM loom_session_bodies WHERE session = ?").run(
          session,
        );
        dropOrphans(db, digests);
      })
    );
  }

  close(): Promise<void> {
    try {
      this.#db.close();
    } catch {
      // Already closed.
    }
    return Promise.resolve();
  }
}
