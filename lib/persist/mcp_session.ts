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
 * (several gateway instances on one PostgreSQL store) hold none: each
 * appends at the position it last saw, and an append another instance got
 * to first is retried after reading what that instance stored, so ids are
 * assigned once across all of them. A folder or database file must lie
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
import { JournalWriter, readJournal } from "./_journal.ts";
import { type AnySession, parseAnySession } from "./_read_session.ts";
import { type CatalogueEntry, JOURNAL_FORMAT } from "./_schema.ts";
import { placeSession, takeLease } from "./_session_place.ts";
import { verifyBody } from "./_session_results.ts";
import { isWithin, realish, refuseOverlap } from "./_session_util.ts";
import { loadSessionKey, sessionKeyPath } from "./_session_key.ts";
import { SessionError } from "./session_error.ts";
import { Serial } from "./_serial.ts";

/**
 * The journal header's format of MCP sessions before one format served
 * every session (now refused with `session_outdated`).
 */
export const MCP_SESSION_FORMAT = "loom-mcp-session/1";

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
}

/** How many times a shared append is retried after losing a race. */
const SHARED_RETRIES = 50;

/** The call behind a gateway result whose body was not persisted. */
export interface McpRecall {
  /** The upstream server's entry name. */
  readonly server: string;
  /** The upstream tool. */
  readonly tool: string;
  /** The part of the answer the result holds, e.g. `content[0]`. */
  readonly part: string;
  /** The call's arguments, when they were small enough to keep. */
  readonly arguments?: Readonly<Record<string, unknown>>;
}

/** A media result's content block, without its data. */
export interface McpMedia {
  /** The block. */
  readonly block: Readonly<Record<string, unknown>>;
  /** Where the data goes back. */
  readonly field: "data" | "resource.blob";
}

/** One catalogued result of an MCP session, its body kept or not. */
export interface McpSessionRecord {
  /** The result id. */
  readonly id: string;
  /** Its digest. */
  readonly sha256: string;
  /** What produced it. */
  readonly origin: string;
  /** `complete` or `partial`. */
  readonly capture: "complete" | "partial";
  /** Its size. */
  readonly utf8_bytes: number;
  /** When it was stored (ms since the epoch), for a gateway result. */
  readonly stored_at?: number;
  /** The content block of a media result. */
  readonly media?: McpMedia;
  /** Set when only the descriptor was kept: the call to make again. */
  readonly recall?: McpRecall;
}

/** What {@linkcode McpSession.save} records besides the result (the gateway). */
export interface McpSaveOptions {
  /** Keep only the descriptor and this call, not the body. */
  readonly recall?: McpRecall;
  /** The content block of a media result. */
  readonly media?: McpMedia;
  /** Record when the result was stored. */
  readonly stamped?: boolean;
}

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
  /** The verified results of earlier runs, in id order. */
  readonly results: readonly StoredResult[];
  readonly #slot: SessionSlot;
  readonly #key: Uint8Array;
  readonly #root: string | null;
  readonly #lease: Lease | undefined;
  readonly #owned: Storage | undefined;
  readonly #written = new Set<string>();
  /** Journal writes and re-reads, one at a time (see `_serial.ts`). */
  readonly #serial = new Serial();
  #writer: JournalWriter;
  #mac: string;
  #position: number;
  #nextId: number;
  /** Results other servers stored that the caller has not taken yet. */
  #undelivered: StoredResult[] = [];
  readonly #records: McpSessionRecord[];

  private constructor(
    at: {
      slot: SessionSlot;
      key: Uint8Array;
      root: string | null;
      lease: Lease | undefined;
      owned: Storage | undefined;
      writer: JournalWriter;
      mac: string;
      results: readonly StoredResult[];
      records: readonly McpSessionRecord[];
    },
  ) {
    this.dir = at.slot.where;
    this.#slot = at.slot;
    this.#key = at.key;
    this.#root = at.root;
    this.#lease = at.lease;
    this.#owned = at.owned;
    this.#writer = at.writer;
    this.#mac = at.mac;
    this.#position = at.writer.position;
    this.results = at.results;
    this.#records = [...at.records];
    this.#nextId = nextAfter(at.records);
    for (const result of at.results) this.#written.add(result.sha256);
  }

  /**
   * Every catalogued result, bodies kept or not: those of earlier runs, in
   * id order, then those other servers stored, as {@linkcode McpSession.refresh}
   * reads them (a shared session). This server's own are not added.
   */
  get records(): readonly McpSessionRecord[] {
    return this.#records;
  }

  /**
   * Opens the session in `dir` (or named `dir` in a store), creating it
   * when there is none, and takes its lease unless `shared`. An existing
   * journal is verified record by record against the key and its chain,
   * and each result body against its digest.
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
    const place = await placeSession(dir, options.store);
    const { slot } = place;
    let lease: Lease | undefined;
    try {
      if (root !== null) {
        for (const path of place.forbidden) refuseOverlap(path, root);
      }
      const keyFile = realish(options.keyFile ?? sessionKeyPath());
      if (
        (root !== null && isWithin(keyFile, root)) ||
        place.forbidden.some((path) => isWithin(keyFile, path))
      ) {
        throw new SessionError(
          "session_key_invalid",
          `Cannot use the session key ${keyFile}: it lies inside the server's root or the session, where it could be read`,
          { file: keyFile },
        );
      }
      const key = await loadSessionKey(keyFile);
      await slot.prepare();
      if (options.shared !== true) lease = await takeLease(slot);
      const session = await McpSession.#openOrCreate(slot, key, root);
      return new McpSession({
        slot,
        key,
        root,
        lease,
        owned: place.owned,
        ...session,
      });
    } catch (error) {
      await lease?.release();
      await place.owned?.close();
      throw error;
    }
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
      const keyFile = realish(options.keyFile ?? sessionKeyPath());
      const key = await loadSessionKey(keyFile);
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

  static async #openOrCreate(
    slot: SessionSlot,
    key: Uint8Array,
    root: string | null,
  ): Promise<
    {
      writer: JournalWriter;
      mac: string;
      results: StoredResult[];
      records: McpSessionRecord[];
    }
  > {
    if (
      !(await slot.journal.exists()) && (await slot.outdated()) === undefined
    ) {
      const writer = JournalWriter.create(slot.journal, key);
      try {
        await writer.append({
          seq: 0,
          type: "header",
          format: JOURNAL_FORMAT,
          kind: "mcp",
          id: crypto.randomUUID(),
          session: slot.name,
          root,
        });
      } catch (error) {
        // Another shared server created it first: read theirs.
        if (
          !(error instanceof StorageError && error.code === "journal_conflict")
        ) {
          throw error;
        }
        return await McpSession.#openOrCreate(slot, key, root);
      }
      const read = await readJournal(slot.journal, key);
      return { writer, mac: read.mac, results: [], records: [] };
    }
    const parsed = mcpSession(await parseAnySession(slot, key), slot, root);
    const results = await verified(slot, root, parsed.file, parsed.catalogue);
    const writer = await JournalWriter.continue(slot.journal, key, parsed.text);
    return {
      writer,
      mac: parsed.text.mac,
      results,
      records: recordsOf(parsed.catalogue),
    };
  }

  /**
   * Persists one stored result (one server holds the session): its body
   * (once per digest), then its journal record, durable before this
   * returns.
   *
   * @param result A result of the server's store.
   * @param options The gateway's: keep only the call (`recall`), the media
   *   block, a time stamp.
   * @throws {StorageError} `lease_lost`, `journal_conflict`,
   *   `storage_unavailable`; nothing half-written.
   */
  save(
    result: StoredResult,
    options: McpSaveOptions = {},
  ): Promise<void> {
    return this.#serial.run(() => this.#save(result, options));
  }

  async #save(result: StoredResult, options: McpSaveOptions): Promise<void> {
    await this.#lease?.check();
    if (options.recall === undefined) await this.#putBody(result);
    await this.#appendResult(result.id, result, options);
    this.#nextId = Math.max(this.#nextId, idNumber(result.id) + 1);
  }

  /**
   * Stores a new result and assigns its id (a shared session, or one whose
   * store assigns ids through it): reads
   * what other servers stored first, then appends at the end it saw,
   * retrying after a lost race. Results of others read on the way are
   * handed out by {@linkcode McpSession.refresh}.
   *
   * @param result The result without an id (its digest verified by the caller).
   * @param options As {@linkcode McpSession.save}: with `recall` the body
   *   is not written.
   * @returns The result with its id.
   * @throws {StorageError} `journal_conflict` after many lost races in a
   *   row; `storage_unavailable`; `lease_lost`.
   */
  admit(
    result: Omit<StoredResult, "id">,
    options: McpSaveOptions = {},
  ): Promise<StoredResult> {
    return this.#serial.run(() => this.#admit(result, options));
  }

  async #admit(
    result: Omit<StoredResult, "id">,
    options: McpSaveOptions,
  ): Promise<StoredResult> {
    await this.#lease?.check();
    if (options.recall === undefined) await this.#putBody(result);
    for (let attempt = 0;; attempt += 1) {
      const id = `result-${this.#nextId}`;
      try {
        await this.#appendResult(id, result, options);
      } catch (error) {
        if (
          error instanceof StorageError && error.code === "journal_conflict" &&
          attempt < SHARED_RETRIES
        ) {
          await this.#sync();
          continue;
        }
        throw error;
      }
      this.#nextId += 1;
      return Object.freeze({ id, ...result });
    }
  }

  /**
   * Results other servers stored since the last call (a shared session),
   * verified, in id order; none, without reading, for a server holding the
   * session's lease.
   *
   * @returns The new results.
   * @throws {SessionError} When what they appended does not verify.
   */
  refresh(): Promise<StoredResult[]> {
    // A server holding the lease is the session's only writer.
    if (this.#lease !== undefined) return Promise.resolve([]);
    return this.#serial.run(() => this.#refresh());
  }

  async #refresh(): Promise<StoredResult[]> {
    await this.#sync();
    const out = this.#undelivered;
    this.#undelivered = [];
    return out;
  }

  /**
   * This session as the backing of a shared `ResultStore`: new results
   * get their ids here, results of other servers come in on refresh.
   *
   * @returns The backing.
   */
  backing(): ResultBacking {
    return {
      admit: (result) => this.admit(result),
      refresh: () => this.refresh(),
    };
  }

  /**
   * Closes the journal, releases the lease and the store, after the writes
   * already handed in.
   */
  close(): Promise<void> {
    return this.#serial.run(() => this.#close());
  }

  async #close(): Promise<void> {
    await this.#writer.close();
    await this.#lease?.release();
    await this.#owned?.close();
  }

  async #putBody(result: Omit<StoredResult, "id">): Promise<void> {
    if (this.#written.has(result.sha256)) return;
    await this.#slot.bodies.put(result.sha256, result.bytes);
    this.#written.add(result.sha256);
  }

  async #appendResult(
    id: string,
    result: Omit<StoredResult, "id">,
    options: McpSaveOptions = {},
  ): Promise<void> {
    const entry: CatalogueEntry = {
      sha256: result.sha256,
      origin: result.origin,
      capture: result.capture,
      utf8_bytes: result.bytes.length,
      tool: toolOf(result.origin),
      source: options.recall === undefined
        ? { persisted: `tool-results/${result.sha256}.txt` }
        : {
          recall: {
            ...options.recall,
            ...(options.recall.arguments === undefined
              ? {}
              : { arguments: { ...options.recall.arguments } }),
          },
        },
      ...(options.stamped ? { stored_at: Date.now() } : {}),
      ...(options.media === undefined ? {} : {
        media: {
          block: { ...options.media.block },
          field: options.media.field,
        },
      }),
    };
    await this.#writer.append({
      seq: this.#position,
      type: "results",
      results: { [id]: entry },
    });
    this.#position = this.#writer.position;
  }

  /** Reads and verifies what others appended; a new writer continues there. */
  async #sync(): Promise<void> {
    const read = await readJournal(this.#slot.journal, this.#key, {
      position: this.#position,
      mac: this.#writer.mac,
    });
    if (read.lines.length === 0) return;
    const catalogue = new Map<string, CatalogueEntry>();
    for (const { value, line } of read.lines) {
      const results = value.type === "results" &&
          typeof value.results === "object" && value.results !== null
        ? value.results as Record<string, CatalogueEntry>
        : undefined;
      if (results === undefined) {
        throw new SessionError(
          "session_invalid",
          `Session journal ${this.#slot.journal.where} is invalid at line ${line}: it is not a results record`,
          { file: this.#slot.journal.where, line },
        );
      }
      for (const [id, entry] of Object.entries(results)) {
        catalogue.set(id, entry);
      }
    }
    // The whole journal passes the schema once more before anything is used.
    const parsed = mcpSession(
      await parseAnySession(this.#slot, this.#key),
      this.#slot,
      this.#root,
    );
    const fresh = new Map(
      [...parsed.catalogue].filter(([id]) => catalogue.has(id)),
    );
    const results = await verified(
      this.#slot,
      this.#root,
      parsed.file,
      fresh,
    );
    const added = recordsOf(fresh);
    this.#records.push(...added);
    // Ids of results kept as their call only are taken too.
    this.#nextId = Math.max(this.#nextId, nextAfter(added));
    for (const result of results) {
      this.#written.add(result.sha256);
      this.#undelivered.push(result);
    }
    this.#writer = await JournalWriter.continue(
      this.#slot.journal,
      this.#key,
      parsed.text,
    );
    this.#position = this.#writer.position;
  }
}

/** The MCP session of a parsed journal, refusing a slice's or another root's. */
function mcpSession(
  parsed: AnySession,
  slot: SessionSlot,
  root: string | null,
): Extract<AnySession, { kind: "mcp" }> {
  if (parsed.kind !== "mcp") {
    throw new SessionError(
      "session_invalid",
      `Session journal ${parsed.file} is not the session of an MCP server (it is a slice's, written by loom run); give loom mcp its own --session`,
      { file: parsed.file, line: 1 },
    );
  }
  if (parsed.header.root !== root) {
    const named = (r: string | null) =>
      r === null ? "no root (an SDK adapter's store)" : `the root ${r}`;
    throw new SessionError(
      "session_invalid",
      `Session ${slot.where} belongs to ${named(parsed.header.root)}, not ${
        named(root)
      }; give each its own session`,
      { file: parsed.file, line: 1 },
    );
  }
  return parsed;
}

/** The catalogued results, each body verified against its digest. */
async function verified(
  slot: SessionSlot,
  root: string | null,
  file: string,
  catalogue: ReadonlyMap<string, CatalogueEntry>,
): Promise<StoredResult[]> {
  const results: StoredResult[] = [];
  for (const [id, entry] of catalogue) {
    // A gateway result kept as its call only has no body to verify.
    if ("recall" in entry.source) continue;
    if (!("persisted" in entry.source)) {
      throw new SessionError(
        "session_invalid",
        `Session journal ${file} is invalid: ${id} of an MCP session must be persisted`,
        { file },
      );
    }
    // Only a re-read source reads the workspace, and an MCP session's
    // results are all persisted (checked above).
    const workspace = root ?? slot.where;
    const bytes = await verifyBody({ slot, workspace, file }, id, entry);
    if (typeof bytes === "string") {
      throw new SessionError("result_corrupted", bytes, { file });
    }
    results.push(Object.freeze({
      id,
      bytes,
      sha256: entry.sha256,
      origin: entry.origin,
      capture: entry.capture,
    }));
  }
  return results;
}

/** The tool of an origin such as `inspect_files a.txt`: its first word. */
function toolOf(origin: string): string {
  return origin.split(/\s/, 1)[0] || "mcp";
}

function idNumber(id: string): number {
  return Number(id.slice("result-".length));
}

function recallOf(
  source: Extract<CatalogueEntry["source"], { recall: unknown }>,
): McpRecall {
  const { server, tool, part, arguments: args } = source.recall;
  return {
    server,
    tool,
    part,
    ...(args === undefined ? {} : { arguments: args }),
  };
}

/** The catalogue as records, in id order. */
function recordsOf(
  catalogue: ReadonlyMap<string, CatalogueEntry>,
): McpSessionRecord[] {
  const records: McpSessionRecord[] = [];
  for (const [id, entry] of catalogue) {
    records.push({
      id,
      sha256: entry.sha256,
      origin: entry.origin,
      capture: entry.capture,
      utf8_bytes: entry.utf8_bytes,
      ...(entry.stored_at === undefined ? {} : { stored_at: entry.stored_at }),
      ...(entry.media === undefined ? {} : { media: entry.media }),
      ...("recall" in entry.source ? { recall: recallOf(entry.source) } : {}),
    });
  }
  return records.sort((a, b) => idNumber(a.id) - idNumber(b.id));
}

function nextAfter(results: readonly { id: string }[]): number {
  let next = 1;
  for (const result of results) next = Math.max(next, idNumber(result.id) + 1);
  return next;
}
