/**
 * The one storage interface for what Loom keeps beyond one process: result
 * bodies by SHA-256, each session's journal (its catalogue is folded from
 * it) and the lease naming the session's one writer. Three back-ends sit
 * behind it, chosen by a URL (`open_storage.ts`): `file:DIR` (a folder per
 * session, today's format and the default), `sqlite:PATH` (one file, the
 * runtime's built-in `node:sqlite`) and `postgres://…` (the `postgres` npm
 * client). This module is the interface only: it imports no back-end.
 *
 * The storage layer moves bytes and records; it knows nothing of what they
 * mean. Sealing records into the HMAC chain, checking the chain, the schema
 * and every digest stays in `lib/persist`, the same on every back-end.
 *
 * @module
 */
import { StorageError } from "./storage_error.ts";

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
 * What {@linkcode Journal.extend} read under the journal's write lock: the
 * records other writers appended since the caller last looked.
 */
export interface JournalTail {
  /** The position of the first record read (the `from` asked for). */
  readonly from: number;
  /** The records from `from` to the end (one JSON line each). */
  readonly records: readonly string[];
}

/** What {@linkcode Journal.extend} did. */
export interface JournalExtension {
  /** The tail it read before appending. */
  readonly tail: JournalTail;
  /** The records it appended, right after the tail. */
  readonly appended: readonly string[];
  /** The position after the appended records (= how many there are). */
  readonly end: number;
}

/**
 * A session's append-only journal. Records are addressed by position
 * (0 for the header). A writer appends in one of two ways: `append` names
 * the position it expects to write at and fails with `journal_conflict`
 * when another writer got there first (one writer holding the lease);
 * `extend` appends after whatever is there, under the journal's write lock,
 * having shown the writer what others appended since it last looked (many
 * writers on one session: no conflict, no retry).
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
  /**
   * Appends after the end, under the journal's write lock: reads the
   * records from `from` to the end, hands them to `build`, and appends
   * what it returns right after them, durably, all or none. `build` runs
   * while the lock is held: it must be quick and must not wait for
   * anything; what it throws aborts the append (nothing is written) and is
   * thrown here. A torn last line (a writer that died mid-append, the folder
   * back-end only) was never acknowledged: it is cut off first.
   *
   * @param from The position the caller has read up to.
   * @param build What to append, given the tail; `[]` appends nothing.
   * @returns The tail read and what was appended.
   * @throws {StorageError} `storage_unavailable`; `journal_conflict` when
   *   `from` lies past the end (the caller saw records that are gone).
   */
  extend(
    from: number,
    build: (tail: JournalTail) => readonly string[],
  ): Promise<JournalExtension>;
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
 * The lease of a session's one writer. A holder that is provably gone is
 * taken over at once: on PostgreSQL its session-level advisory lock died
 * with its connection; on SQLite and in a folder its process no longer
 * exists on this machine. A holder that cannot be proven gone (another
 * machine's process, a reused pid) blocks the session until its lease
 * expires; renewal and loss are explicit.
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
 * Open one with `openStorage` (`open_storage.ts`); close it when done.
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
