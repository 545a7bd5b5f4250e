/**
 * The PostgreSQL back-end, `postgres://user:password@host:port/db`: every
 * session of a store in one schema, `loom`, created on first use and
 * versioned in `loom.meta`, through the `postgres` npm client, laid out
 * and used by the shared SQL implementation (`_sql_storage.ts`); this file
 * holds only the driver and the dialect. Bodies are `bytea` rows cut into
 * parts of 4 MiB. A journal's write lock is a transaction-level advisory
 * lock. A lease is a row whose expiry the server's clock decides, backed by
 * a session-level advisory lock held on a connection of its own: when the
 * holder dies, its connection closes and the lock goes with it, so the
 * next holder takes over at once. Every operation is bounded by a timeout:
 * a server that stopped answering fails the call with
 * `storage_unavailable`, naming the host and never the password.
 *
 * @module
 */
import postgres from "postgres";
import type { Lease, LeaseOptions, Storage } from "./storage.ts";
import { isNoRoom, StorageError, storeFull } from "./storage_error.ts";
import { redactUrl, scrubSecrets } from "./location.ts";
import {
  type HeldLease,
  holderGone,
  leaseHeld,
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
import { isLoomError, messageOf } from "../errors.ts";

/** The schema version this Loom writes and reads. */
export const POSTGRES_SCHEMA_VERSION = 1;

/** Bodies are stored in parts of at most this many bytes. */
export const BODY_PART_BYTES = 4 * 1024 * 1024;

/** Default bound of one operation, in milliseconds. */
export const POSTGRES_TIMEOUT_MS = 10_000;

const SCHEMA = [
  "CREATE SCHEMA IF NOT EXISTS loom",
  "CREATE TABLE IF NOT EXISTS loom.meta (key text PRIMARY KEY, value text NOT NULL)",
  "CREATE TABLE IF NOT EXISTS loom.journal (session text NOT NULL, seq integer NOT NULL, record text NOT NULL, PRIMARY KEY (session, seq))",
  "CREATE TABLE IF NOT EXISTS loom.bodies (sha256 text NOT NULL, part integer NOT NULL, size bigint NOT NULL, data bytea NOT NULL, PRIMARY KEY (sha256, part))",
  "CREATE TABLE IF NOT EXISTS loom.session_bodies (session text NOT NULL, sha256 text NOT NULL, PRIMARY KEY (session, sha256))",
  "CREATE TABLE IF NOT EXISTS loom.leases (session text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL)",
];

// An arbitrary key for the advisory lock that serialises schema creation.
const SCHEMA_LOCK = 7_497_880_029;

/** A lease holder backed by a session-level advisory lock ends with this. */
const LOCKED = " (advisory lock)";

type Sql = postgres.Sql;

/** Error codes of the client and the socket that mean "the server is gone". */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : "";
}

/** Options of {@linkcode PostgresStorage.open}. */
export interface PostgresOptions {
  /** The longest one operation may take, ms (default 10,000). */
  readonly timeoutMs?: number;
  /**
   * Every transaction read-only, and the schema only checked (a database
   * without it is refused).
   */
  readonly readOnly?: boolean;
}

/**
 * A store in a PostgreSQL database (see the module doc).
 *
 * @example Unreachable at start: a typed error naming the host, not the password
 * ```ts
 * import { PostgresStorage } from "./postgres_storage.ts";
 * import { isNoRoom, StorageError, storeFull } from "./storage_error.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   PostgresStorage.open("postgres://loom:s3cret-pw@127.0.0.1:1/loom?connect_timeout=2"),
 *   (e: unknown) =>
 *     e instanceof StorageError && e.code === "storage_unreachable" &&
 *     e.message.includes("127.0.0.1:1") && !e.message.includes("s3cret-pw"),
 * );
 * ```
 */
export class PostgresStorage extends SqlSessions implements Storage {
  readonly kind: "postgres" = "postgres";
  readonly location: string;
  readonly #backend: PostgresBackend;

  private constructor(backend: PostgresBackend) {
    super(backend);
    this.#backend = backend;
    this.location = backend.location;
  }

  /**
   * Connects, then creates the schema on first use (serialised by an
   * advisory lock, so two first users cannot race) or checks its version.
   *
   * @param url The store URL.
   * @param options The bound of one operation; read-only.
   * @returns The store.
   * @throws {StorageError} `storage_url_invalid`, `storage_unreachable`
   *   (naming the host and the cause, never the password),
   *   `storage_schema_newer`.
   */
  static async open(
    url: string,
    options: PostgresOptions = {},
  ): Promise<PostgresStorage> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new StorageError(
        "storage_url_invalid",
        `Cannot open the store ${
          redactUrl(url)
        }: it is not a URL of the form postgres://user:password@host:port/database`,
        { location: redactUrl(url) },
      );
    }
    const host = `${parsed.hostname || "localhost"}:${parsed.port || "5432"}`;
    const readOnly = options.readOnly === true;
    const timeoutMs = options.timeoutMs ?? POSTGRES_TIMEOUT_MS;
    const given = Number(parsed.searchParams.get("connect_timeout") ?? NaN);
    const connectSeconds = Number.isFinite(given) && given > 0
      ? given
      : Math.max(1, Math.ceil(timeoutMs / 1000));
    let sql: Sql;
    try {
      sql = postgres(url, {
        max: 10,
        onnotice: () => {},
        connect_timeout: connectSeconds,
        idle_timeout: 30,
        connection: readOnly
          ? { application_name: "loom", default_transaction_read_only: true }
          : { application_name: "loom" },
      });
    } catch (error) {
      throw new StorageError(
        "storage_url_invalid",
        `Cannot open the store ${redactUrl(url)}: ${
          scrubSecrets(messageOf(error), url)
        }`,
        { location: redactUrl(url) },
      );
    }
    const backend = new PostgresBackend(url, sql, host, timeoutMs);
    const location = backend.location;
    try {
      await sql.begin(async (tx) => {
        if (readOnly) {
          const [found] = await tx<{ present: boolean }[]>`
            SELECT to_regclass('loom.meta') IS NOT NULL AS present`;
          if (found?.present !== true) {
            throw new StorageError(
              "storage_unreachable",
              `Cannot read the store ${location}: it holds no Loom schema (nothing was ever stored there)`,
              { location },
            );
          }
        } else {
          await tx`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK})`;
          for (const statement of SCHEMA) await tx.unsafe(statement);
        }
        const rows = await tx<{ value: string }[]>`
          SELECT value FROM loom.meta WHERE key = 'schema_version'`;
        const found = rows[0]?.value;
        if (found === undefined) {
          if (readOnly) return;
          await tx`INSERT INTO loom.meta (key, value)
                   VALUES ('schema_version', ${
            String(POSTGRES_SCHEMA_VERSION)
          })`;
        } else if (Number(found) > POSTGRES_SCHEMA_VERSION) {
          throw new StorageError(
            "storage_schema_newer",
            `Cannot use the store ${location}: its schema version ${found} was written by a newer Loom (this one knows version ${POSTGRES_SCHEMA_VERSION})`,
            { location },
          );
        }
      });
    } catch (error) {
      await sql.end({ timeout: 1 }).catch(() => {});
      if (error instanceof StorageError) throw error;
      throw new StorageError(
        "storage_unreachable",
        `Cannot reach the PostgreSQL server at ${host} (store ${location}): ${
          scrubSecrets(causeOf(error), url)
        }`,
        { location },
      );
    }
    return new PostgresStorage(backend);
  }

  async close(): Promise<void> {
    await this.#backend.close();
  }
}

/** The driver and dialect of a PostgreSQL database. */
class PostgresBackend implements SqlBackend {
  readonly location: string;
  readonly paths: readonly string[] = [];
  readonly bodyPartBytes = BODY_PART_BYTES;
  readonly insertBodyPart =
    "INSERT INTO loom.bodies (sha256, part, size, data) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
  readonly selectBody =
    "SELECT part, size, data FROM loom.bodies WHERE sha256 = $1 ORDER BY part";
  readonly #sql: Sql;
  readonly #url: string;
  readonly #host: string;
  readonly #timeoutMs: number;

  constructor(url: string, sql: Sql, host: string, timeoutMs: number) {
    this.#url = url;
    this.#sql = sql;
    this.#host = host;
    this.#timeoutMs = timeoutMs;
    this.location = redactUrl(url);
  }

  table(name: SqlTable): string {
    return `loom.${name}`;
  }

  /**
   * Runs `fn` within the timeout, mapping a lost or silent server to
   * `storage_unavailable` (naming the host, never the password). Loom's
   * own errors (thrown by the caller's code inside a transaction) and a
   * duplicate key pass unchanged.
   */
  async #call<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const work = fn(this.#sql);
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(
          new StorageError(
            "storage_unavailable",
            `The PostgreSQL server at ${this.#host} (store ${this.location}) did not answer within ${this.#timeoutMs} ms; nothing of this call was committed: retry once it answers`,
            { location: this.location },
          ),
        );
      }, this.#timeoutMs);
    });
    // What finishes after the timeout is nobody's concern any more.
    work.catch(() => {});
    try {
      return await Promise.race([work, late]);
    } catch (error) {
      if (isLoomError(error) || this.isDuplicate(error)) throw error;
      if (isNoRoom(error)) throw storeFull(this.location, error);
      throw new StorageError(
        "storage_unavailable",
        `${
          CONNECTION_CODES.has(codeOf(error))
            ? `Lost the PostgreSQL server at ${this.#host}`
            : `The PostgreSQL store at ${this.#host} failed`
        } (store ${this.location}): ${
          scrubSecrets(causeOf(error), this.#url)
        }; nothing of this call was committed: retry once the server answers`,
        { location: this.location },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  #runner(sql: Sql | postgres.TransactionSql): SqlRunner {
    return {
      rows: async <T>(text: string, params: readonly SqlValue[] = []) =>
        // deno-lint-ignore no-explicit-any
        (await sql.unsafe(text, params as any[])) as unknown as T[],
      run: async (text: string, params: readonly SqlValue[] = []) =>
        // deno-lint-ignore no-explicit-any
        (await sql.unsafe(text, params as any[])).count,
    };
  }

  rows<T>(text: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.#call((sql) => this.#runner(sql).rows<T>(text, params));
  }

  run(text: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.#call((sql) => this.#runner(sql).run(text, params));
  }

  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.#call((sql) =>
      sql.begin((tx) => fn(this.#runner(tx))) as Promise<T>
    );
  }

  async lockJournal(tx: SqlRunner, session: string): Promise<void> {
    await tx.rows("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
      `loom.journal:${session}`,
    ]);
  }

  isDuplicate(error: unknown): boolean {
    return codeOf(error) === "23505";
  }

  /**
   * Takes the lease: first the session's advisory lock on a connection of
   * the lease's own (refused at once while a live holder's connection has
   * it), then the row. A row whose holder held the lock is stale the moment
   * the lock is free; a row of an older Loom, which held none, only once it
   * expired (or its process is gone from this machine).
   */
  async acquireLease(
    session: string,
    where: string,
    options: LeaseOptions,
  ): Promise<Lease> {
    const ttlMs = leaseTtlMs(options);
    const holder = `${newHolder()}${LOCKED}`;
    const lock = new SessionLock(this.#url, session, this.#timeoutMs);
    if (!await this.#call(() => lock.take())) {
      const [held] = await this.#leaseRow(session);
      // A holder whose process is gone from this machine: the server has
      // yet to see its connection close; wait for that, briefly. A holder
      // whose connection lives on but which stopped renewing (a hung
      // process) loses the session when its lease expires: its connection
      // is ended, and the lock with it.
      const dead = held !== undefined && holderGone(held.holder) !== null;
      const taken = dead
        ? await this.#call(() => lock.waitFor(this.#timeoutMs / 2))
        : held?.expired === true &&
          await this.#call(() => lock.takeFromHung());
      if (!taken) {
        throw leaseHeld(
          where,
          held?.holder,
          held?.expiresAt,
          ", whose connection to the server holds the session's lock",
        );
      }
    }
    let tookOver: string | null;
    try {
      tookOver = await this.transaction(async (tx) => {
        const [held] = await tx.rows<HeldLease>(LEASE_ROW, [session]);
        const tookOver = takeOver(
          held,
          where,
          (holder) =>
            holder.endsWith(LOCKED)
              ? "its connection, and the session's lock with it, are gone"
              : holderGone(holder),
        );
        await tx.run(
          `INSERT INTO loom.leases (session, holder, expires_at)
           VALUES ($1, $2, now() + make_interval(secs => $3))
           ON CONFLICT (session) DO UPDATE
             SET holder = excluded.holder, expires_at = excluded.expires_at`,
          [session, holder, ttlMs / 1000],
        );
        return tookOver;
      });
    } catch (error) {
      await lock.release();
      throw error;
    }
    return renewing({
      holder,
      tookOver,
      renew: async () => {
        // The lock dies with its connection (a restarted server): take it
        // again unless another holder got it meanwhile.
        if (!await this.#call(() => lock.keep())) throw leaseLost(where);
        const renewed = await this.run(
          `UPDATE loom.leases
           SET expires_at = now() + make_interval(secs => $1)
           WHERE session = $2 AND holder = $3`,
          [ttlMs / 1000, session, holder],
        );
        if (renewed === 0) throw leaseLost(where);
        return Date.now() + ttlMs;
      },
      release: async () => {
        await this.run(
          "DELETE FROM loom.leases WHERE session = $1 AND holder = $2",
          [session, holder],
        ).catch(() => {});
        await lock.release();
      },
    }, options);
  }

  #leaseRow(session: string): Promise<HeldLease[]> {
    return this.rows<HeldLease>(LEASE_ROW, [session]);
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 }).catch(() => {});
  }
}

const LEASE_ROW =
  `SELECT holder, expires_at AS "expiresAt", expires_at <= now() AS expired FROM loom.leases WHERE session = $1`;

/**
 * A session-level advisory lock on a connection of its own (a client of
 * one connection that is never recycled): held until it is released or
 * the connection ends (the holder died, the server restarted).
 */
class SessionLock {
  readonly #url: string;
  readonly #key: string;
  readonly #timeoutSeconds: number;
  #sql: Sql | undefined;

  constructor(url: string, session: string, timeoutMs: number) {
    this.#url = url;
    this.#key = `loom.lease:${session}`;
    this.#timeoutSeconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  }

  #client(): Sql {
    // No idle timeout and no lifetime (0: never): the lock lives with it.
    this.#sql ??= postgres(this.#url, {
      max: 1,
      max_lifetime: 0,
      onnotice: () => {},
      connect_timeout: this.#timeoutSeconds,
      connection: { application_name: "loom lease" },
    });
    return this.#sql;
  }

  /** Takes the lock; `false` when another connection holds it. */
  async take(): Promise<boolean> {
    const [row] = await this.#client().unsafe(
      "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got",
      [this.#key],
    );
    return row?.got === true;
  }

  /** Waits up to `ms` for the lock; `false` when it is still held then. */
  async waitFor(ms: number): Promise<boolean> {
    const sql = this.#client();
    try {
      await sql.unsafe("SELECT set_config('lock_timeout', $1, false)", [
        `${Math.max(1, Math.floor(ms))}ms`,
      ]);
      await sql.unsafe("SELECT pg_advisory_lock(hashtextextended($1, 0))", [
        this.#key,
      ]);
      return true;
    } catch (error) {
      if ((error as { code?: unknown })?.code === "55P03") return false;
      throw error;
    } finally {
      await sql.unsafe("SELECT set_config('lock_timeout', '0', false)")
        .catch(() => {});
    }
  }

  /**
   * Ends the connection that holds the lock (its holder's lease expired),
   * then takes the lock; `false` when that fails.
   */
  async takeFromHung(): Promise<boolean> {
    await this.#client().unsafe(
      `SELECT pg_terminate_backend(pid, 5000) FROM pg_locks
       WHERE locktype = 'advisory' AND granted AND objsubid = 1
         AND pid <> pg_backend_pid()
         AND classid::bigint = (hashtextextended($1, 0) >> 32) & 4294967295
         AND objid::bigint = hashtextextended($1, 0) & 4294967295`,
      [this.#key],
    );
    return await this.take();
  }

  /**
   * Whether this connection still holds the lock; a connection that died
   * (and the lock with it) is replaced and the lock taken again, unless
   * another holder has it now.
   */
  async keep(): Promise<boolean> {
    const [row] = await this.#client().unsafe(
      `SELECT count(*)::int AS held FROM pg_locks
       WHERE locktype = 'advisory' AND granted AND objsubid = 1
         AND pid = pg_backend_pid()
         AND classid::bigint = (hashtextextended($1, 0) >> 32) & 4294967295
         AND objid::bigint = hashtextextended($1, 0) & 4294967295`,
      [this.#key],
    );
    return Number(row?.held) > 0 || await this.take();
  }

  /** Gives the lock up and closes its connection. */
  async release(): Promise<void> {
    const sql = this.#sql;
    this.#sql = undefined;
    if (sql === undefined) return;
    // Closing the connection ends the lock with it.
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** The cause of a client error in words: its code and message. */
function causeOf(error: unknown): string {
  const code = codeOf(error);
  const message = messageOf(error);
  return code !== "" && !message.includes(code)
    ? `${code}: ${message}`
    : message;
}
