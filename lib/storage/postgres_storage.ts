/**
 * The PostgreSQL back-end, `postgres://user:password@host:port/db`: every
 * session of a store in one schema, `loom`, created on first use and
 * versioned in `loom.meta`, through the `postgres` npm client. Journals
 * are rows keyed by (session, position), so two writers at one position
 * cannot both commit; bodies are `bytea` rows keyed by digest, cut into
 * parts of 4 MiB, shared by every session that stored them; leases are
 * rows whose expiry the server's clock decides. Every append, body and
 * lease change is one statement or one transaction: whole or nothing.
 *
 * @module
 */
import postgres from "postgres";
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
import { redactUrl, scrubSecrets } from "./location.ts";
import { renewing } from "./_lease.ts";
import { messageOf } from "../errors.ts";

/** The schema version this Loom writes and reads. */
export const POSTGRES_SCHEMA_VERSION = 1;

/** Bodies are stored in parts of at most this many bytes. */
export const BODY_PART_BYTES = 4 * 1024 * 1024;

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

/** One session's rows. */
class PostgresSlot implements SessionSlot {
  readonly name: string;
  readonly where: string;
  readonly paths: readonly string[] = [];
  readonly journal: Journal;
  readonly bodies: BodyStore;
  readonly #store: PostgresStorage;

  constructor(store: PostgresStorage, name: string) {
    this.#store = store;
    this.name = name;
    this.where = `${store.location}#${name}`;
    this.journal = new PostgresJournal(store, name, this.where);
    this.bodies = new PostgresBodies(store, name);
  }

  outdated(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  prepare(): Promise<void> {
    return Promise.resolve();
  }

  async acquireLease(options: LeaseOptions = {}): Promise<Lease> {
    const ttlMs = options.ttlMs ?? 60_000;
    const holder = `pid ${Deno.pid} ${crypto.randomUUID()}`;
    const session = this.name;
    const where = this.where;
    const store = this.#store;
    const prior = await store.run((sql) =>
      sql<{ holder: string; expired: boolean; expires_at: Date }[]>`
        SELECT holder, expires_at, expires_at <= now() AS expired
        FROM loom.leases WHERE session = ${session}`
    );
    const won = await store.run((sql) =>
      sql`
        INSERT INTO loom.leases (session, holder, expires_at)
        VALUES (${session}, ${holder}, now() + make_interval(secs => ${
        ttlMs / 1000
      }))
        ON CONFLICT (session) DO UPDATE
          SET holder = excluded.holder, expires_at = excluded.expires_at
          WHERE loom.leases.expires_at <= now()
        RETURNING holder`
    );
    if (won.count === 0) {
      const now = await store.run((sql) =>
        sql<{ holder: string; expires_at: Date }[]>`
          SELECT holder, expires_at FROM loom.leases WHERE session = ${session}`
      );
      const held = now[0];
      throw new StorageError(
        "lease_held",
        `Session ${where} is leased by ${held?.holder ?? "another holder"}${
          held === undefined ? "" : ` until ${held.expires_at.toISOString()}`
        }: wait for it to end or to expire`,
        { location: where },
      );
    }
    const before = prior[0];
    return renewing({
      holder,
      tookOver: before === undefined
        ? null
        : `took over the expired lease of ${before.holder} (expired ${before.expires_at.toISOString()})`,
      expiresAt: Date.now() + ttlMs,
      ttlMs,
      autoRenew: options.autoRenew ?? true,
      renew: async () => {
        const renewed = await store.run((sql) =>
          sql`
            UPDATE loom.leases
            SET expires_at = now() + make_interval(secs => ${ttlMs / 1000})
            WHERE session = ${session} AND holder = ${holder}`
        );
        if (renewed.count === 0) {
          throw new StorageError(
            "lease_lost",
            `Lost the lease of session ${where}: it expired and another holder took it, or it was removed; nothing more is written`,
            { location: where },
          );
        }
        return Date.now() + ttlMs;
      },
      release: async () => {
        await store.run((sql) =>
          sql`DELETE FROM loom.leases WHERE session = ${session} AND holder = ${holder}`
        ).catch(() => {});
      },
    });
  }
}

class PostgresJournal implements Journal {
  readonly where: string;
  readonly #store: PostgresStorage;
  readonly #session: string;

  constructor(store: PostgresStorage, session: string, where: string) {
    this.#store = store;
    this.#session = session;
    this.where = where;
  }

  async exists(): Promise<boolean> {
    const rows = await this.#store.run((sql) =>
      sql`SELECT 1 FROM loom.journal WHERE session = ${this.#session} AND seq = 0`
    );
    return rows.length > 0;
  }

  async read(from = 0): Promise<JournalRead> {
    const rows = await this.#store.run((sql) =>
      sql<{ seq: number; record: string }[]>`
        SELECT seq, record FROM loom.journal
        WHERE session = ${this.#session} AND seq >= ${from} ORDER BY seq`
    );
    if (rows.length > 0) {
      return {
        records: rows.map((row) => row.record),
        end: Number(rows.at(-1)!.seq) + 1,
        torn: 0,
      };
    }
    const last = await this.#store.run((sql) =>
      sql<{ last: number | null }[]>`
        SELECT max(seq) AS last FROM loom.journal WHERE session = ${this.#session}`
    );
    const end = last[0]?.last;
    return {
      records: [],
      end: end === null || end === undefined ? 0 : Number(end) + 1,
      torn: 0,
    };
  }

  async append(position: number, records: readonly string[]): Promise<void> {
    if (records.length === 0) return;
    const session = this.#session;
    let inserted: number;
    try {
      inserted = await this.#store.run(async (sql) => {
        if (records.length === 1) {
          const result = await sql`
            INSERT INTO loom.journal (session, seq, record)
            SELECT ${session}, ${position}, ${records[0]!}
            WHERE (SELECT coalesce(max(seq) + 1, 0) FROM loom.journal
                   WHERE session = ${session}) = ${position}`;
          return result.count;
        }
        return await sql.begin(async (tx) => {
          const end = await tx<{ end: number }[]>`
            SELECT coalesce(max(seq) + 1, 0) AS end FROM loom.journal
            WHERE session = ${session}`;
          if (Number(end[0]?.end) !== position) return 0;
          for (const [i, record] of records.entries()) {
            await tx`INSERT INTO loom.journal (session, seq, record)
                     VALUES (${session}, ${position + i}, ${record})`;
          }
          return records.length;
        }) as number;
      }, true);
    } catch (error) {
      if (codeOf(error) === "23505") {
        throw journalConflict(this.where, position);
      }
      throw error;
    }
    if (inserted === 0) throw journalConflict(this.where, position);
  }

  cutTorn(): Promise<number> {
    return Promise.resolve(0);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

class PostgresBodies implements BodyStore {
  readonly #store: PostgresStorage;
  readonly #session: string;

  constructor(store: PostgresStorage, session: string) {
    this.#store = store;
    this.#session = session;
  }

  async put(sha256: string, bytes: Uint8Array): Promise<boolean> {
    const session = this.#session;
    const size = bytes.length;
    if (size <= BODY_PART_BYTES) {
      // One statement: the link and the body commit together or not at all.
      const result = await this.#store.run((sql) =>
        sql`
          WITH link AS (
            INSERT INTO loom.session_bodies (session, sha256)
            VALUES (${session}, ${sha256}) ON CONFLICT DO NOTHING)
          INSERT INTO loom.bodies (sha256, part, size, data)
          VALUES (${sha256}, 0, ${size}, ${bytes}) ON CONFLICT DO NOTHING`
      );
      return result.count > 0;
    }
    return await this.#store.run((sql) =>
      sql.begin(async (tx) => {
        await tx`INSERT INTO loom.session_bodies (session, sha256)
                 VALUES (${session}, ${sha256}) ON CONFLICT DO NOTHING`;
        let fresh = false;
        for (let part = 0; part * BODY_PART_BYTES < size; part += 1) {
          const data = bytes.subarray(
            part * BODY_PART_BYTES,
            Math.min(size, (part + 1) * BODY_PART_BYTES),
          );
          const result = await tx`
            INSERT INTO loom.bodies (sha256, part, size, data)
            VALUES (${sha256}, ${part}, ${size}, ${data}) ON CONFLICT DO NOTHING`;
          if (part === 0) fresh = result.count > 0;
        }
        return fresh;
      }) as Promise<boolean>
    );
  }

  async get(sha256: string): Promise<Uint8Array | undefined> {
    const rows = await this.#store.run((sql) =>
      sql<{ part: number; size: string; data: Uint8Array }[]>`
        SELECT part, size, data FROM loom.bodies
        WHERE sha256 = ${sha256} ORDER BY part`
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
    const rows = await this.#store.run((sql) =>
      sql`SELECT 1 FROM loom.bodies WHERE sha256 = ${sha256} AND part = 0`
    );
    return rows.length > 0;
  }

  async delete(sha256: string): Promise<boolean> {
    const session = this.#session;
    return await this.#store.run((sql) =>
      sql.begin(async (tx) => {
        const gone = await tx`DELETE FROM loom.session_bodies
          WHERE session = ${session} AND sha256 = ${sha256}`;
        await dropOrphans(tx, [sha256]);
        return gone.count > 0;
      }) as Promise<boolean>
    );
  }

  async collect(
    keep: ReadonlySet<string>,
    dryRun: boolean,
  ): Promise<Collected> {
    const session = this.#session;
    return await this.#store.run((sql) =>
      sql.begin(async (tx) => {
        const linked = await tx<{ sha256: string; size: string | null }[]>`
          SELECT l.sha256, max(b.size) AS size
          FROM loom.session_bodies l
          LEFT JOIN loom.bodies b ON b.sha256 = l.sha256
          WHERE l.session = ${session}
          GROUP BY l.sha256 ORDER BY l.sha256`;
        const doomed = linked.filter((row) => !keep.has(row.sha256));
        if (!dryRun && doomed.length > 0) {
          const digests = doomed.map((row) => row.sha256);
          await tx`DELETE FROM loom.session_bodies
            WHERE session = ${session} AND sha256 = ANY(${digests})`;
          await dropOrphans(tx, digests);
        }
        return {
          deleted: doomed.map((row) => `tool-results/${row.sha256}.txt`),
          freedBytes: doomed.reduce(
            (sum, row) => sum + Number(row.size ?? 0),
            0,
          ),
          kept: linked.length - doomed.length,
          ignored: [],
        };
      }) as Promise<Collected>
    );
  }
}

/** Deletes bodies no session links to any more. */
async function dropOrphans(
  sql: postgres.TransactionSql,
  digests: readonly string[],
): Promise<void> {
  if (digests.length === 0) return;
  await sql`DELETE FROM loom.bodies b WHERE b.sha256 = ANY(${digests as string[]})
    AND NOT EXISTS (SELECT 1 FROM loom.session_bodies l WHERE l.sha256 = b.sha256)`;
}

/**
 * A store in a PostgreSQL database (see the module doc).
 *
 * @example Unreachable at start: a typed error naming the host, not the password
 * ```ts
 * import { PostgresStorage } from "./postgres_storage.ts";
 * import { StorageError } from "./storage_error.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   PostgresStorage.open("postgres://loom:s3cret-pw@127.0.0.1:1/loom?connect_timeout=2"),
 *   (e: unknown) =>
 *     e instanceof StorageError && e.code === "storage_unreachable" &&
 *     e.message.includes("127.0.0.1:1") && !e.message.includes("s3cret-pw"),
 * );
 * ```
 */
export class PostgresStorage implements Storage {
  readonly kind: "postgres" = "postgres";
  readonly location: string;
  readonly #sql: Sql;
  readonly #url: string;
  readonly #host: string;

  private constructor(url: string, sql: Sql, host: string) {
    this.#url = url;
    this.#sql = sql;
    this.#host = host;
    this.location = redactUrl(url);
  }

  /**
   * Connects, then creates the schema on first use (serialised by an
   * advisory lock, so two first users cannot race) or checks its version.
   *
   * @param url The store URL.
   * @param options `readOnly`: every transaction read-only, and the
   *   schema only checked (a database without it is refused).
   * @returns The store.
   * @throws {StorageError} `storage_url_invalid`, `storage_unreachable`
   *   (naming the host and the cause, never the password),
   *   `storage_schema_newer`.
   */
  static async open(
    url: string,
    options: { readonly readOnly?: boolean } = {},
  ): Promise<PostgresStorage> {
    const readOnly = options.readOnly === true;
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
    const timeout = Number(parsed.searchParams.get("connect_timeout") ?? 10);
    let sql: Sql;
    try {
      sql = postgres(url, {
        max: 4,
        onnotice: () => {},
        connect_timeout: Number.isFinite(timeout) && timeout > 0 ? timeout : 10,
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
    const store = new PostgresStorage(url, sql, host);
    try {
      await sql.begin(async (tx) => {
        if (readOnly) {
          const [found] = await tx<{ present: boolean }[]>`
            SELECT to_regclass('loom.meta') IS NOT NULL AS present`;
          if (found?.present !== true) {
            throw new StorageError(
              "storage_unreachable",
              `Cannot read the store ${store.location}: it holds no Loom schema (nothing was ever stored there)`,
              { location: store.location },
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
            `Cannot use the store ${store.location}: its schema version ${found} was written by a newer Loom (this one knows version ${POSTGRES_SCHEMA_VERSION})`,
            { location: store.location },
          );
        }
      });
    } catch (error) {
      await sql.end({ timeout: 1 }).catch(() => {});
      if (error instanceof StorageError) throw error;
      throw new StorageError(
        "storage_unreachable",
        `Cannot reach the PostgreSQL server at ${host} (store ${store.location}): ${
          scrubSecrets(causeOf(error), url)
        }`,
        { location: store.location },
      );
    }
    return store;
  }

  /**
   * Runs queries, mapping a lost server to `storage_unavailable` (naming
   * the host, never the password); with `passCodes`, database errors keep
   * their own code for the caller to map.
   */
  async run<T>(
    fn: (sql: Sql) => Promise<T> | postgres.PendingQuery<postgres.Row[]>,
    passCodes = false,
  ): Promise<T> {
    try {
      return await (fn(this.#sql) as Promise<T>);
    } catch (error) {
      if (error instanceof StorageError) throw error;
      if (passCodes && /^[0-9A-Z]{5}$/.test(codeOf(error))) {
        if (!CONNECTION_CODES.has(codeOf(error))) throw error;
      }
      throw new StorageError(
        "storage_unavailable",
        `${
          CONNECTION_CODES.has(codeOf(error))
            ? `Lost the PostgreSQL server at ${this.#host}`
            : `The PostgreSQL store at ${this.#host} failed`
        } (store ${this.location}): ${
          scrubSecrets(causeOf(error), this.#url)
        }; nothing of this step was committed`,
        { location: this.location },
      );
    }
  }

  session(name: string): SessionSlot {
    return new PostgresSlot(this, sessionName(name));
  }

  async listSessions(): Promise<string[]> {
    const rows = await this.run((sql) =>
      sql<{ session: string }[]>`
        SELECT session FROM loom.journal WHERE seq = 0 ORDER BY session`
    );
    return rows.map((row) => row.session);
  }

  async deleteSession(name: string): Promise<void> {
    const session = sessionName(name);
    await this.run((sql) =>
      sql.begin(async (tx) => {
        const linked = await tx<{ sha256: string }[]>`
          DELETE FROM loom.session_bodies WHERE session = ${session}
          RETURNING sha256`;
        await tx`DELETE FROM loom.journal WHERE session = ${session}`;
        await tx`DELETE FROM loom.leases WHERE session = ${session}`;
        await dropOrphans(tx, linked.map((row) => row.sha256));
      })
    );
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 }).catch(() => {});
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
