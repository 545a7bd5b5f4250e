/**
 * The one SQL implementation behind the SQLite and PostgreSQL back-ends:
 * journals as rows keyed by (session, position), bodies as rows keyed by
 * digest (cut into parts where the dialect says so) and linked to the
 * sessions that stored them, and the session listing. Each back-end gives
 * only its driver and its dialect ({@linkcode SqlBackend}): how a statement
 * runs, how tables are named, how a journal's write lock is taken, how a
 * body is laid out, and its lease.
 *
 * @module
 */
import type {
  BodyStore,
  Collected,
  Journal,
  JournalExtension,
  JournalRead,
  JournalTail,
  Lease,
  LeaseOptions,
  SessionSlot,
  Storage,
} from "./storage.ts";
import { sessionName } from "./storage.ts";
import { journalConflict } from "./storage_error.ts";

/** A value a statement takes. */
export type SqlValue = string | number | Uint8Array | null;

/** Runs statements (`$1`, `$2`, … for parameters) on one connection. */
export interface SqlRunner {
  /** Runs a statement and answers its rows. */
  rows<T>(text: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** Runs a statement and answers how many rows it changed. */
  run(text: string, params?: readonly SqlValue[]): Promise<number>;
}

/** The tables every SQL store has. */
export type SqlTable = "journal" | "bodies" | "session_bodies" | "leases";

/** A body row as the dialect's `selectBody` answers it. */
interface BodyRow {
  readonly part: number;
  readonly size: number | string;
  readonly data: Uint8Array;
}

/** What a back-end gives the shared implementation. */
export interface SqlBackend extends SqlRunner {
  /** The store's redacted URL. */
  readonly location: string;
  /** Local paths a slice's model must never touch (the database file). */
  readonly paths: readonly string[];
  /** A table's name in this dialect. */
  table(name: SqlTable): string;
  /** Runs `fn` in one write transaction: all of it commits or none. */
  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T>;
  /**
   * Inside a transaction: waits for the journal's write lock of `session`,
   * held until the transaction ends.
   */
  lockJournal(tx: SqlRunner, session: string): Promise<void>;
  /** Largest part a body is cut into (`Infinity`: one row per body). */
  readonly bodyPartBytes: number;
  /** Inserts one part unless present: `$1` sha256, `$2` part, `$3` size, `$4` data. */
  readonly insertBodyPart: string;
  /** The parts of a body in order (`part`, `size`, `data`): `$1` sha256. */
  readonly selectBody: string;
  /** Whether an error is a duplicate key (another writer's row). */
  isDuplicate(error: unknown): boolean;
  /** Takes the lease of a session. */
  acquireLease(
    session: string,
    where: string,
    options: LeaseOptions,
  ): Promise<Lease>;
}

/** One session's rows. */
class SqlSlot implements SessionSlot {
  readonly name: string;
  readonly where: string;
  readonly paths: readonly string[];
  readonly journal: Journal;
  readonly bodies: BodyStore;
  readonly #backend: SqlBackend;

  constructor(backend: SqlBackend, name: string) {
    this.#backend = backend;
    this.name = name;
    this.where = `${backend.location}#${name}`;
    this.paths = backend.paths;
    this.journal = new SqlJournal(backend, name, this.where);
    this.bodies = new SqlBodies(backend, name);
  }

  outdated(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  prepare(): Promise<void> {
    return Promise.resolve();
  }

  acquireLease(options: LeaseOptions = {}): Promise<Lease> {
    return this.#backend.acquireLease(this.name, this.where, options);
  }
}

interface JournalRow {
  readonly seq: number | string;
  readonly record: string;
}

class SqlJournal implements Journal {
  readonly where: string;
  readonly #backend: SqlBackend;
  readonly #session: string;
  readonly #table: string;

  constructor(backend: SqlBackend, session: string, where: string) {
    this.#backend = backend;
    this.#session = session;
    this.where = where;
    this.#table = backend.table("journal");
  }

  async exists(): Promise<boolean> {
    const rows = await this.#backend.rows(
      `SELECT 1 AS one FROM ${this.#table} WHERE session = $1 AND seq = 0`,
      [this.#session],
    );
    return rows.length > 0;
  }

  read(from = 0): Promise<JournalRead> {
    return this.#readFrom(this.#backend, from).then((tail) => ({
      records: tail.records,
      end: tail.end,
      torn: 0,
    }));
  }

  /**
   * The records from `from` on and the end, in one statement: the record
   * before `from` comes too, so an empty answer still tells where the end is.
   */
  async #readFrom(
    runner: SqlRunner,
    from: number,
  ): Promise<{ records: string[]; end: number }> {
    const rows = await runner.rows<JournalRow>(
      `SELECT seq, record FROM ${this.#table}
       WHERE session = $1 AND seq >= $2 ORDER BY seq`,
      [this.#session, Math.max(0, from - 1)],
    );
    const records: string[] = [];
    let end = 0;
    for (const row of rows) {
      const seq = Number(row.seq);
      // A gap can only be made by hand: the chain check reports it.
      if (seq >= from) records.push(row.record);
      end = seq + 1;
    }
    return { records, end };
  }

  async append(position: number, records: readonly string[]): Promise<void> {
    if (records.length === 0) return;
    try {
      await this.#backend.transaction(async (tx) => {
        const { end } = await this.#readFrom(tx, position);
        if (end !== position) throw journalConflict(this.where, position);
        await this.#insert(tx, position, records);
      });
    } catch (error) {
      if (this.#backend.isDuplicate(error)) {
        throw journalConflict(this.where, position);
      }
      throw error;
    }
  }

  async extend(
    from: number,
    build: (tail: JournalTail) => readonly string[],
  ): Promise<JournalExtension> {
    return await this.#backend.transaction(async (tx) => {
      await this.#backend.lockJournal(tx, this.#session);
      const { records, end } = await this.#readFrom(tx, from);
      if (end < from) throw journalConflict(this.where, from);
      const tail = { from, records };
      const appended = build(tail);
      await this.#insert(tx, end, appended);
      return { tail, appended, end: end + appended.length };
    });
  }

  /** Inserts records from `position` on, in one statement. */
  async #insert(
    tx: SqlRunner,
    position: number,
    records: readonly string[],
  ): Promise<void> {
    if (records.length === 0) return;
    const params: SqlValue[] = [this.#session];
    const rows = records.map((record, i) => {
      params.push(position + i, record);
      return `($1, $${params.length - 1}, $${params.length})`;
    });
    await tx.run(
      `INSERT INTO ${this.#table} (session, seq, record) VALUES ${
        rows.join(", ")
      }`,
      params,
    );
  }

  cutTorn(): Promise<number> {
    return Promise.resolve(0);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

class SqlBodies implements BodyStore {
  readonly #backend: SqlBackend;
  readonly #session: string;

  constructor(backend: SqlBackend, session: string) {
    this.#backend = backend;
    this.#session = session;
  }

  async put(sha256: string, bytes: Uint8Array): Promise<boolean> {
    const backend = this.#backend;
    const size = bytes.length;
    const part = Math.min(backend.bodyPartBytes, Math.max(1, size));
    return await backend.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO ${backend.table("session_bodies")} (session, sha256)
         VALUES ($1, $2) ON CONFLICT DO NOTHING`,
        [this.#session, sha256],
      );
      let fresh = false;
      for (let index = 0; index === 0 || index * part < size; index += 1) {
        const data = bytes.subarray(
          index * part,
          Math.min(size, (index + 1) * part),
        );
        const changed = await tx.run(backend.insertBodyPart, [
          sha256,
          index,
          size,
          data,
        ]);
        if (index === 0) fresh = changed > 0;
      }
      return fresh;
    });
  }

  async get(sha256: string): Promise<Uint8Array | undefined> {
    const rows = await this.#backend.rows<BodyRow>(
      this.#backend.selectBody,
      [sha256],
    );
    const first = rows[0];
    if (first === undefined) return undefined;
    if (rows.length === 1) return new Uint8Array(first.data);
    const size = Number(first.size);
    const out = new Uint8Array(size);
    let offset = 0;
    for (const row of rows) {
      if (offset + row.data.length > size) break;
      out.set(row.data, offset);
      offset += row.data.length;
    }
    // Parts missing or of the wrong size: the caller's digest check refuses it.
    return offset === size ? out : out.subarray(0, offset);
  }

  async has(sha256: string): Promise<boolean> {
    const rows = await this.#backend.rows(
      `SELECT 1 AS one FROM ${this.#backend.table("bodies")}
       WHERE sha256 = $1 LIMIT 1`,
      [sha256],
    );
    return rows.length > 0;
  }

  async delete(sha256: string): Promise<boolean> {
    return await this.#backend.transaction(async (tx) => {
      const gone = await tx.run(
        `DELETE FROM ${this.#backend.table("session_bodies")}
         WHERE session = $1 AND sha256 = $2`,
        [this.#session, sha256],
      );
      await dropOrphans(this.#backend, tx, [sha256]);
      return gone > 0;
    });
  }

  async collect(
    keep: ReadonlySet<string>,
    dryRun: boolean,
  ): Promise<Collected> {
    const backend = this.#backend;
    return await backend.transaction(async (tx) => {
      const linked = await tx.rows<{ sha256: string; size: string | null }>(
        `SELECT l.sha256 AS sha256, max(b.size) AS size
         FROM ${backend.table("session_bodies")} l
         LEFT JOIN ${backend.table("bodies")} b ON b.sha256 = l.sha256
         WHERE l.session = $1
         GROUP BY l.sha256 ORDER BY l.sha256`,
        [this.#session],
      );
      const doomed = linked.filter((row) => !keep.has(row.sha256));
      if (!dryRun) {
        for (const row of doomed) {
          await tx.run(
            `DELETE FROM ${backend.table("session_bodies")}
             WHERE session = $1 AND sha256 = $2`,
            [this.#session, row.sha256],
          );
        }
        await dropOrphans(backend, tx, doomed.map((row) => row.sha256));
      }
      return {
        deleted: doomed.map((row) => `tool-results/${row.sha256}.txt`),
        freedBytes: doomed.reduce((sum, row) => sum + Number(row.size ?? 0), 0),
        kept: linked.length - doomed.length,
        ignored: [],
      };
    });
  }
}

/** Deletes the bodies among `digests` that no session links to any more. */
async function dropOrphans(
  backend: SqlBackend,
  tx: SqlRunner,
  digests: readonly string[],
): Promise<void> {
  for (const sha256 of digests) {
    await tx.run(
      `DELETE FROM ${backend.table("bodies")} WHERE sha256 = $1
       AND NOT EXISTS (SELECT 1 FROM ${backend.table("session_bodies")}
                       WHERE sha256 = $1)`,
      [sha256],
    );
  }
}

/**
 * The sessions of a SQL store: slots over the back-end, the listing, and
 * deleting a session with the bodies only it used.
 */
export class SqlSessions
  implements Pick<Storage, "session" | "listSessions" | "deleteSession"> {
  readonly #backend: SqlBackend;

  /**
   * The sessions of one back-end.
   *
   * @param backend Its driver and dialect.
   */
  constructor(backend: SqlBackend) {
    this.#backend = backend;
  }

  /**
   * One session's slot.
   *
   * @param name The session name.
   * @returns Its slot.
   * @throws {StorageError} `storage_name_invalid`.
   */
  session(name: string): SessionSlot {
    return new SqlSlot(this.#backend, sessionName(name));
  }

  /**
   * The sessions whose journal holds a record, sorted.
   *
   * @returns Their names.
   */
  async listSessions(): Promise<string[]> {
    const rows = await this.#backend.rows<{ session: string }>(
      `SELECT session FROM ${
        this.#backend.table("journal")
      } WHERE seq = 0 ORDER BY session`,
    );
    return rows.map((row) => row.session);
  }

  /**
   * Deletes a session: its journal, its lease and the bodies only it used.
   *
   * @param name The session name.
   */
  async deleteSession(name: string): Promise<void> {
    const session = sessionName(name);
    const backend = this.#backend;
    await backend.transaction(async (tx) => {
      const linked = await tx.rows<{ sha256: string }>(
        `SELECT sha256 FROM ${backend.table("session_bodies")}
         WHERE session = $1`,
        [session],
      );
      for (const table of ["session_bodies", "journal", "leases"] as const) {
        await tx.run(
          `DELETE FROM ${backend.table(table)} WHERE session = $1`,
          [session],
        );
      }
      await dropOrphans(backend, tx, linked.map((row) => row.sha256));
    });
  }
}
