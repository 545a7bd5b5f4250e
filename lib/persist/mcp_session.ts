/**
 * The session of an MCP server (`loom mcp --session NAME`, the gateway):
 * its stored results, kept across restarts in the one journal format every
 * session uses — a header of kind `mcp` naming the server's root, then one
 * `results` record per stored result with its catalogue entry, the whole
 * HMAC-chained under the per-user session key and checked the same way on
 * load (`session_tampered`, `session_invalid`); result bodies through the
 * store (`tool-results/<sha256>.txt` in a folder), digest-checked on load
 * (`result_missing`, `result_corrupted`). `loom session ls|show|gc` read
 * these sessions like a slice's.
 *
 * One server holds a session through its lease; servers started `shared`
 * (several gateway instances on one store) hold none. Either way a result
 * is recorded by one `extend` of the journal: under the journal's write
 * lock the server reads what others appended since it last looked,
 * verifies it, gives the new results the next free ids and appends one
 * record after it — so ids are assigned once across every server, with no
 * conflict to retry. Results stored at the same moment go in one record
 * (group commit), so one append serves as many calls as arrived while the
 * one before was being written. A shared session reads the journal only
 * from where it stopped, and a body only when a result is read (verified
 * against its digest then), so a call costs the same whether the session
 * holds a hundred results or ten thousand. A folder or database file must lie
 * outside the server's root, and so must the key, so no tool can read or
 * forge either. A session opened without a root (the SDK adapters' store,
 * which serves no workspace) records `root: null`; a server refuses it and
 * it refuses a server's. Sessions of the older `loom-mcp-session/1` header
 * are refused with `session_outdated`.
 *
 * @module
 */
import type { ResultBacking, StoredResult } from "../store/result_store.ts";
import type { Lease, SessionSlot, Storage } from "../storage/storage.ts";
import { StorageError } from "../storage/storage_error.ts";
import { parseAnySession } from "./_read_session.ts";
import type { CatalogueEntry } from "./_schema.ts";
import { openingAt, placeSession } from "./_session_place.ts";
import { verifyResult } from "./_session_results.ts";
import {
  createHeader,
  entryOf,
  type McpSaveOptions,
  mcpSession,
  type McpSessionRecord,
  recordOf,
  verified,
} from "./_mcp_records.ts";
import { refuseOverlap } from "./_session_util.ts";
import { sessionKeyFor } from "./_session_key.ts";
import { SessionError } from "./session_error.ts";
import type { McpCatalogue } from "./_mcp_catalogue.ts";
import { GroupCommit } from "./_group_commit.ts";

/**
 * The journal header's format of MCP sessions before one format served
 * every session (now refused with `session_outdated`).
 */
export const MCP_SESSION_FORMAT = "loom-mcp-session/1";

/** What a server did with its session's journal since it opened it. */
export interface McpJournalStats {
  /** Results it recorded. */
  readonly results: number;
  /** Records it appended (results stored at once share one). */
  readonly appends: number;
  /** Appends tried again after another writer got in first. */
  readonly conflicts: number;
  /** Reads of what others appended. */
  readonly reads: number;
}

/** Options of {@linkcode McpSession.open}. */
export interface McpSessionOptions {
  /**
   * The server's root; the session folder and the key must lie outside it.
   * Omitted for a store that serves no workspace (the SDK adapters).
   */
  readonly root?: string;
  /** The session key file (default: the slice sessions' key). */
  readonly keyFile?: string;
  /**
   * The store (a URL or an open store); `dir` then names a session in it.
   * Default: `dir` is a session folder.
   */
  readonly store?: string | Storage;
  /**
   * Share the session with other servers (no lease; ids are assigned
   * through the journal). Default `false`: one server holds it.
   */
  readonly shared?: boolean;
  /**
   * When result bodies are read: `open` (default) reads and verifies every
   * one at open ({@linkcode McpSession.results}); `read` only catalogues
   * them, and reads (and verifies) a body when its result is first read
   * ({@linkcode McpSession.load}) — what a server of a large shared session
   * wants, so that opening it and every call cost the same at ten thousand
   * results as at a hundred.
   */
  readonly bodies?: "open" | "read";
  /**
   * The longest one operation of a database store may take before it
   * fails with `storage_unavailable` (default 10,000 ms).
   */
  readonly timeoutMs?: number;
}

export type {
  McpMedia,
  McpRecall,
  McpSaveOptions,
  McpSessionRecord,
} from "./_mcp_records.ts";

/** The most results one journal record carries. */
const BATCH = 64;

/** How often an append is tried again after another writer got in first. */
const CONFLICT_RETRIES = 3;

/**
 * The stored results of an MCP server, persisted after each one is stored.
 *
 * @example
 * ```ts
 * import { McpSession } from "./mcp_session.ts";
 * import { ResultStore } from "../store/result_store.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * const dir = await Deno.makeTempDir();
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * const first = await McpSession.open(`${dir}/s`, { root, keyFile });
 * const store = new ResultStore();
 * const d = await store.put("kept", { origin: "inspect_files a.txt", capture: "complete" });
 * await first.save(store.get(d.result!)!);
 * await first.close();
 * const again = await McpSession.open(`${dir}/s`, { root, keyFile });
 * assert.deepEqual(again.results.map((r) => [r.id, r.origin]), [["result-1", "inspect_files a.txt"]]);
 * await again.close();
 * ```
 */
export class McpSession {
  /** The session folder (real path), or where it lives in a store. */
  readonly dir: string;
  /**
   * The verified results of earlier runs, in id order (none when opened
   * with `bodies: "read"`: each body is read when its result is, through
   * {@linkcode McpSession.load}).
   */
  readonly results: readonly StoredResult[];
  readonly #slot: SessionSlot;
  readonly #root: string | null;
  readonly #lease: Lease | undefined;
  readonly #owned: Storage | undefined;
  readonly #catalogue: McpCatalogue;
  /** Bodies written (or being written) by this server, by digest. */
  readonly #written = new Map<string, Promise<void>>();
  readonly #commits: GroupCommit<
    readonly [string | undefined, CatalogueEntry],
    string
  >;
  /** Records handed out by {@linkcode McpSession.refresh} so far. */
  #delivered: number;
  #stats = { results: 0, appends: 0, conflicts: 0, reads: 0 };
  /** The read of the journal under way, and the one queued after it. */
  #reading: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  private constructor(
    at: {
      slot: SessionSlot;
      root: string | null;
      lease: Lease | undefined;
      owned: Storage | undefined;
      catalogue: McpCatalogue;
      results: readonly StoredResult[];
      lazy: boolean;
    },
  ) {
    this.dir = at.slot.where;
    this.#slot = at.slot;
    this.#root = at.root;
    this.#lease = at.lease;
    this.#owned = at.owned;
    this.#catalogue = at.catalogue;
    this.results = at.results;
    // Bodies read at open are handed over as `results`; otherwise the
    // whole catalogue goes out on the first refresh.
    this.#delivered = at.lazy ? 0 : at.catalogue.size;
    for (const result of at.results) {
      this.#written.set(result.sha256, Promise.resolve());
    }
    this.#commits = new GroupCommit((entries) => this.#append(entries), BATCH);
  }

  /**
   * Every catalogued result as this server has read the journal, bodies
   * kept or not, in the journal's order (= id order): those of earlier
   * runs, then those stored since, by this server or — as
   * {@linkcode McpSession.refresh} reads them — by others.
   */
  get records(): readonly McpSessionRecord[] {
    return this.recordsFrom(0);
  }

  /**
   * The catalogued results from the `start`-th on (see
   * {@linkcode McpSession.records}).
   *
   * @param start How many to skip.
   * @returns The records.
   */
  recordsFrom(start: number): McpSessionRecord[] {
    const catalogue = this.#catalogue;
    return catalogue.idsFrom(start).map((id) =>
      recordOf(id, catalogue.entry(id)!)
    );
  }

  /** How many results are catalogued (see {@linkcode McpSession.records}). */
  get recordCount(): number {
    return this.#catalogue.size;
  }

  /** What this server did with the journal since it opened the session. */
  get stats(): McpJournalStats {
    return { ...this.#stats };
  }

  /**
   * The catalogued result with that id, as far as this server has read the
   * journal.
   *
   * @param id The result id.
   * @returns Its record, or `undefined`.
   */
  record(id: string): McpSessionRecord | undefined {
    const entry = this.#catalogue.entry(id);
    return entry === undefined ? undefined : recordOf(id, entry);
  }

  /**
   * Opens the session in `dir` (or named `dir` in a store), creating it
   * when there is none, and takes its lease unless `shared`. An existing
   * journal is verified record by record against the key and its chain;
   * in a session one server holds, each result body against its digest.
   *
   * @param dir The session folder (or name, with a store).
   * @param options The server's root, the key file, the store, `shared`.
   * @returns The session; call {@linkcode McpSession.close}.
   * @throws {SessionError} `session_inside_workspace` (the folder overlaps
   *   the root), `session_key_invalid` (also when the key lies inside the
   *   root), `session_locked`, `session_tampered`, `session_invalid` (not an
   *   MCP session, or one of another root), `session_outdated` (the old
   *   MCP header), `result_missing`, `result_corrupted`.
   * @throws {StorageError} When the store cannot be reached.
   */
  static async open(
    dir: string,
    options: McpSessionOptions,
  ): Promise<McpSession> {
    const root = options.root === undefined
      ? null
      : await Deno.realPath(options.root);
    const place = await placeSession(
      dir,
      options.store,
      options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
    );
    const { slot } = place;
    return await openingAt(place, async (take) => {
      if (root !== null) {
        for (const path of place.forbidden) refuseOverlap(path, root);
      }
      const key = await sessionKeyFor(
        options.keyFile,
        root === null ? place.forbidden : [root, ...place.forbidden],
      );
      await slot.prepare();
      const lease = options.shared === true ? undefined : await take();
      if (
        !(await slot.journal.exists()) && (await slot.outdated()) === undefined
      ) {
        await createHeader(slot, key, root);
      }
      const parsed = mcpSession(await parseAnySession(slot, key), slot, root);
      const lazy = options.bodies === "read";
      const results = lazy
        ? []
        : await verified(slot, root, parsed.file, parsed.catalogue);
      return new McpSession({
        slot,
        root,
        lease,
        owned: place.owned,
        catalogue: parsed.folded,
        results,
        lazy,
      });
    });
  }

  /**
   * Verifies an MCP session's chain and every body without taking its
   * lease or writing anything (`loom session show --verify`).
   *
   * @param dir The session folder (or name, with a store).
   * @param options The server's root (from the session's header), the
   *   key file, the store.
   * @returns The verified results, in id order.
   * @throws {SessionError} As {@linkcode McpSession.open}, except
   *   `session_locked`.
   */
  static async verify(
    dir: string,
    options: Omit<McpSessionOptions, "shared">,
  ): Promise<StoredResult[]> {
    const place = await placeSession(dir, options.store);
    try {
      const key = await sessionKeyFor(options.keyFile, []);
      const parsed = mcpSession(
        await parseAnySession(place.slot, key),
        place.slot,
        options.root ?? null,
      );
      return await verified(
        place.slot,
        options.root ?? null,
        parsed.file,
        parsed.catalogue,
      );
    } finally {
      await place.owned?.close();
    }
  }

  /**
   * Persists one stored result under its own id (one server holds the
   * session): its body (once per digest), then its journal record,
   * durable before this returns.
   *
   * @param result A result of the server's store.
   * @param options The gateway's: keep only the call (`recall`), the media
   *   block, a time stamp.
   * @throws {StorageError} `lease_lost`, `storage_unavailable`; nothing
   *   half-written.
   * @throws {SessionError} When the journal no longer verifies.
   */
  async save(
    result: StoredResult,
    options: McpSaveOptions = {},
  ): Promise<void> {
    await this.#lease?.check();
    if (options.recall === undefined) await this.#putBody(result);
    await this.#commits.add([result.id, entryOf(result, options)]);
  }

  /**
   * Stores a new result and gives it the next free id of the session (a
   * shared session, or one whose store assigns ids through it): its body
   * first (unless `recall`), then its record, appended after whatever the
   * other servers appended, durable before this returns.
   *
   * @param result The result without an id (its digest verified by the caller).
   * @param options As {@linkcode McpSession.save}: with `recall` the body
   *   is not written.
   * @returns The result with its id.
   * @throws {StorageError} `storage_unavailable`; `lease_lost`.
   * @throws {SessionError} When the journal no longer verifies.
   */
  async admit(
    result: Omit<StoredResult, "id">,
    options: McpSaveOptions = {},
  ): Promise<StoredResult> {
    await this.#lease?.check();
    if (options.recall === undefined) await this.#putBody(result);
    const id = await this.#commits.add([undefined, entryOf(result, options)]);
    return Object.freeze({ id, ...result });
  }

  /**
   * Reads what was appended since this server last looked (verified, and
   * only that) and answers the results catalogued since the last call —
   * by other servers, and by this one — without their bodies.
   *
   * @returns The new records, in id order.
   * @throws {SessionError} When what was appended does not verify.
   */
  async refresh(): Promise<McpSessionRecord[]> {
    await this.sync();
    const fresh = this.recordsFrom(this.#delivered);
    this.#delivered += fresh.length;
    return fresh;
  }

  /**
   * Reads what was appended since this server last looked, verified, and
   * takes it into {@linkcode McpSession.records}. Calls at the same time
   * share reads; each sees everything appended before it was called.
   *
   * @throws {SessionError} When what was appended does not verify.
   * @throws {StorageError} When the store cannot be reached.
   */
  sync(): Promise<void> {
    return this.#read();
  }

  /**
   * The body of a catalogued result, read from the store and verified
   * against its digest (a result another server stored, or one a store
   * dropped from memory); reads the journal first when the id is not
   * catalogued yet.
   *
   * @param id The result id.
   * @returns The result, or `undefined` when it is not catalogued or was
   *   kept as its call only.
   * @throws {SessionError} `result_missing`, `result_corrupted`.
   * @throws {StorageError} When the store cannot be reached.
   */
  async load(id: string): Promise<StoredResult | undefined> {
    if (this.#catalogue.entry(id) === undefined) await this.#read();
    const entry = this.#catalogue.entry(id);
    if (entry === undefined || !("persisted" in entry.source)) return undefined;
    const result = await verifyResult(
      {
        slot: this.#slot,
        workspace: this.#root ?? this.#slot.where,
        file: this.#catalogue.file,
      },
      id,
      entry,
    );
    if (typeof result === "string") {
      throw new SessionError("result_corrupted", result, {
        file: this.#catalogue.file,
      });
    }
    return result;
  }

  /**
   * This session as the backing of a `ResultStore`: new results get their
   * ids here, results of other servers come in on refresh (their
   * catalogue entries) and their bodies on load.
   *
   * @returns The backing.
   */
  backing(): ResultBacking {
    return {
      admit: (result) => this.admit(result),
      // A record carries what a store catalogues (and more, ignored).
      refresh: () => this.refresh(),
      load: (id) => this.load(id),
    };
  }

  /**
   * Closes the journal, releases the lease and the store, after the writes
   * already handed in.
   */
  async close(): Promise<void> {
    await this.#commits.settled();
    await Promise.allSettled(this.#written.values());
    await this.#reading?.catch(() => {});
    await this.#slot.journal.close().catch(() => {});
    await this.#lease?.release();
    await this.#owned?.close();
  }

  /** Writes a body once per digest, also when two calls store it at once. */
  async #putBody(result: Omit<StoredResult, "id">): Promise<void> {
    let written = this.#written.get(result.sha256);
    if (written === undefined) {
      written = this.#slot.bodies.put(result.sha256, result.bytes).then(
        () => {},
      );
      this.#written.set(result.sha256, written);
      written.catch(() => this.#written.delete(result.sha256));
    }
    await written;
  }

  /**
   * Appends one record with a batch of entries after whatever the journal
   * holds: under its lock, verifies what others appended since, gives the
   * entries without an id the next free ids, seals the record on the last
   * MAC; once committed, folds both. Answers the ids.
   */
  async #append(
    entries: readonly (readonly [string | undefined, CatalogueEntry])[],
  ): Promise<string[]> {
    const catalogue = this.#catalogue;
    for (let attempt = 0;; attempt += 1) {
      let sealed: ReturnType<McpCatalogue["seal"]> | undefined;
      let before: ReturnType<McpCatalogue["verify"]> | undefined;
      try {
        await this.#slot.journal.extend(catalogue.position, (tail) => {
          before = catalogue.verify(tail.from, tail.records);
          sealed = catalogue.seal(before, entries);
          return [sealed.text];
        });
      } catch (error) {
        if (
          error instanceof StorageError &&
          error.code === "journal_conflict" && attempt < CONFLICT_RETRIES
        ) {
          // A writer outside the lock (an older Loom) got in: read, retry.
          this.#stats.conflicts += 1;
          await this.#read();
          continue;
        }
        throw error;
      }
      catalogue.apply(before!);
      catalogue.apply(sealed!.tail);
      this.#stats.appends += 1;
      this.#stats.results += entries.length;
      return sealed!.ids;
    }
  }

  /**
   * Reads the journal from where this server stopped and folds what is
   * new. A read asked for while one is under way waits for the next one
   * (which starts after it), so concurrent callers share reads and each
   * sees everything appended before it asked.
   */
  #read(): Promise<void> {
    if (this.#queued !== undefined) return this.#queued;
    if (this.#reading !== undefined) {
      const queued = this.#reading.catch(() => {}).then(() => {
        this.#queued = undefined;
        return this.#startRead();
      });
      this.#queued = queued;
      return queued;
    }
    return this.#startRead();
  }

  #startRead(): Promise<void> {
    const reading = this.#readOnce();
    this.#reading = reading;
    reading.catch(() => {}).finally(() => {
      if (this.#reading === reading) this.#reading = undefined;
    });
    return reading;
  }

  async #readOnce(): Promise<void> {
    this.#stats.reads += 1;
    const catalogue = this.#catalogue;
    const from = catalogue.position;
    let records: readonly string[];
    try {
      records = (await this.#slot.journal.read(from)).records;
    } catch (error) {
      if (error instanceof SyntaxError) {
        throw new SessionError(
          "session_invalid",
          `Session journal ${catalogue.file} is not valid UTF-8`,
          { file: catalogue.file, cause: error },
        );
      }
      throw error;
    }
    catalogue.apply(catalogue.verify(from, records));
  }
}
