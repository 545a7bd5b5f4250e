/**
 * The one storage interface for what Loom keeps beyond one process: result
 * bodies by SHA-256, each session's journal (its catalogue is folded from
 * it) and the lease naming the session's one writer. Three back-ends sit
 * behind it, chosen by a URL: `file:DIR` (a folder per session, today's
 * format and the default), `sqlite:PATH` (one file, the runtime's built-in
 * `node:sqlite`) and `postgres://…` (the `postgres` npm client).
 *
 * The storage layer moves bytes and records; it knows nothing of what they
 * mean. Sealing records into the HMAC chain, checking the chain, the schema
 * and every digest stays in `lib/persist`, the same on every back-end.
 *
 * @module
 */
import { StorageError } from "./storage_error.ts";
import { redactUrl } from "./location.ts";

/** Which back-end a store is. */
export type StorageKind = "file" | "sqlite" | "postgres";

/**
 * Result bodies by SHA-256: immutable, so a body put twice is kept once.
 * The storage layer does not hash: callers pass the digest they computed,
 * and verify what they get back.
 */
export interface BodyStore {
  /**
   * Stores a body under its digest; returns `false` when it was already
   * there (nothing is written). A crash leaves the whole body or none.
   */
  put(sha256: string, bytes: Uint8Array): Promise<boolean>;
  /** The body, or `undefined` when none is stored under the digest. */
  get(sha256: string): Promise<Uint8Array | undefined>;
  /** Whether a body is stored under the digest. */
  has(sha256: string): Promise<boolean>;
  /** Removes the body from this session; returns whether it was there. */
  delete(sha256: string): Promise<boolean>;
  /**
   * Removes every body of this session whose digest is not in `keep`, and
   * what an interrupted write left behind; with `dryRun`, only reports.
   */
  collect(keep: ReadonlySet<string>, dryRun: boolean): Promise<Collected>;
}

/** What {@linkcode BodyStore.collect} removed (or would remove). */
export interface Collected {
  /** Names of what was removed, relative to the session. */
  readonly deleted: readonly string[];
  /** Bytes those held. */
  readonly freedBytes: number;
  /** Bodies kept because they are in `keep`. */
  readonly kept: number;
  /** Names of things Loom did not write, left alone. */
  readonly ignored: readonly string[];
}

/** Complete records of a journal from some position on. */
export interface JournalRead {
  /** The records' texts (one JSON line each, without the newline). */
  readonly records: readonly string[];
  /** The position after the last complete record (= how many there are). */
  readonly end: number;
  /**
   * Bytes of a torn last line, a write interrupted by a crash (the folder
   * back-end only; databases commit whole records or none).
   */
  readonly torn: number;
}

/**
 * A session's append-only journal. Records are addressed by position
 * (0 for the header); an append names the position it expects to write
 * at and fails with `journal_conflict` when another writer got there first.
 */
export interface Journal {
  /** Where the journal lives, for messages (a path or a redacted URL). */
  readonly where: string;
  /** Whether the journal holds at least one record (or a torn one). */
  exists(): Promise<boolean>;
  /** Complete records from `from` (default 0) to the end. */
  read(from?: number): Promise<JournalRead>;
  /**
   * Appends records at `position`, durably, all or none.
   *
   * @throws {StorageError} `journal_conflict` when the journal does not end
   *   at `position` (another writer appended first); nothing was written.
   */
  append(position: number, records: readonly string[]): Promise<void>;
  /** Cuts a torn last line off; returns the bytes cut (0 for databases). */
  cutTorn(): Promise<number>;
  /** Releases what the journal holds open. */
  close(): Promise<void>;
}

/** Options of {@linkcode SessionSlot.acquireLease}. */
export interface LeaseOptions {
  /** How long the lease lasts without renewal, ms (default 60,000). */
  readonly ttlMs?: number;
  /** Renew in the background every third of the ttl (default `true`). */
  readonly autoRenew?: boolean;
}

/**
 * The lease of a session's one writer: it expires, so a crashed holder
 * does not block the session forever; renewal and loss are explicit.
 */
export interface Lease {
  /** Who holds it: this process's id and a random token. */
  readonly holder: string;
  /** The stale or expired lease this one took over, described, or `null`. */
  readonly tookOver: string | null;
  /** When the lease expires unless renewed (ms since the epoch, local clock). */
  readonly expiresAt: number;
  /**
   * Extends the lease by its ttl.
   *
   * @throws {StorageError} `lease_lost` when it expired and another holder
   *   took it, or its record is gone.
   */
  renew(): Promise<void>;
  /**
   * Throws when the lease was found lost (by a background renewal), so the
   * step that needs it stops before writing.
   *
   * @throws {StorageError} `lease_lost`.
   */
  check(): Promise<void>;
  /** Gives the lease up if this holder still has it. */
  release(): Promise<void>;
}

/** One session's place in a store: its journal, bodies and lease. */
export interface SessionSlot {
  /** The session's name in the store. */
  readonly name: string;
  /** Where the session lives, for messages (a path or redacted URL#name). */
  readonly where: string;
  /**
   * Local paths a slice's model must never touch (the session folder, the
   * database file); empty for a server.
   */
  readonly paths: readonly string[];
  /** The journal. */
  readonly journal: Journal;
  /** The result bodies. */
  readonly bodies: BodyStore;
  /**
   * Describes a session of an older format found where this one would
   * be, or returns `undefined` (the folder back-end's `session.json`).
   */
  outdated(): Promise<string | undefined>;
  /** Creates what the session needs before its first write (a folder). */
  prepare(): Promise<void>;
  /**
   * Takes the session's lease.
   *
   * @throws {StorageError} `lease_held` when another live holder has it.
   */
  acquireLease(options?: LeaseOptions): Promise<Lease>;
}

/**
 * A store: sessions by name, each with its journal, bodies and lease.
 * Open one with {@linkcode openStorage}; close it when done.
 */
export interface Storage {
  /** The back-end. */
  readonly kind: StorageKind;
  /** The store's URL with its secrets masked. */
  readonly location: string;
  /**
   * One session's slot (nothing is read or written yet).
   *
   * @throws {StorageError} `storage_name_invalid`.
   */
  session(name: string): SessionSlot;
  /** The names of the sessions whose journal holds a record, sorted. */
  listSessions(): Promise<string[]>;
  /** Deletes a session: its journal, lease and the bodies only it used. */
  deleteSession(name: string): Promise<void>;
  /** Closes connections and files. */
  close(): Promise<void>;
}

/** The longest session name. */
const NAME_MAX = 128;

/**
 * Checks a session name: `[A-Za-z0-9][A-Za-z0-9._-]*`, at most 128
 * characters (it becomes a folder name on the folder back-end).
 *
 * @param name The name.
 * @returns The name.
 * @throws {StorageError} `storage_name_invalid`.
 *
 * @example
 * ```ts
 * import { sessionName } from "./storage.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sessionName("ci-run.7"), "ci-run.7");
 * assert.throws(() => sessionName("../x"), /session name/);
 * ```
 */
export function sessionName(name: string): string {
  if (
    typeof name !== "string" || name.length > NAME_MAX ||
    !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)
  ) {
    throw new StorageError(
      "storage_name_invalid",
      `Cannot use ${
        JSON.stringify(String(name).slice(0, NAME_MAX))
      } as a session name: a session name is a letter or digit followed by letters, digits, '.', '_' or '-', at most ${NAME_MAX} characters`,
    );
  }
  return name;
}

/** Options of {@linkcode openStorage}. */
export interface OpenStorageOptions {
  /**
   * Open for reading only (`loom view`, `loom session show`): nothing is
   * created or changed — no database file, schema or table; a database
   * connection refuses writes. A database that holds no Loom tables is
   * refused (`storage_unreachable`): there is nothing to read.
   */
  readonly readOnly?: boolean;
}

/**
 * Opens a store by URL: `file:DIR` (a folder holding one folder per
 * session), `sqlite:PATH` (one database file, created when missing) or
 * `postgres://user:password@host:port/db` (also `postgresql://`; one
 * schema, `loom`, created on first use and versioned). A bare path is not
 * a store URL: write `file:` before it.
 *
 * @param url The store URL.
 * @param options Read-only or not (default: read and write).
 * @returns The open store; call {@linkcode Storage.close}.
 * @throws {StorageError} `storage_url_invalid`; `storage_unreachable`
 *   when the database cannot be opened or reached (naming its host, never
 *   the password); `storage_schema_newer`.
 *
 * @example
 * ```ts
 * import { openStorage } from "./storage.ts";
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
    return guard(await PostgresStorage.open(url, { readOnly }));
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
 * import { openStorage, readOnlyStorage } from "./storage.ts";
 * import assert from "node:assert/strict";
 * const store = readOnlyStorage(await openStorage(`file:${await Deno.makeTempDir()}`));
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
 * import { readOnlySlot } from "./storage.ts";
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
