/**
 * The gateway's session (`--session DIR`, or `--store URL` with a session
 * name): its stored results kept across restarts — and, in a store, shared
 * by every gateway instance given the same store and name — in an
 * {@linkcode McpSession} (the same HMAC-chained journal and digest-named
 * bodies as `loom mcp`), under the seeds' tool-result persistence rule.
 * The session is the backing of the gateway's {@linkcode ResultStore}: each
 * new result gets its id through the journal, with the call the gateway
 * noted for it ({@linkcode GatewayNote}). The body of a result is written
 * only when the gateway's rule allowed it — the configuration opts its tool
 * in (`"persist": true`) and the tool is not self-reading (`"selfReading":
 * true` is checked first and wins); otherwise only the descriptor and the
 * call are kept, and on resume (or on another instance) the gateway may
 * call the tool again (only a read-only, idempotent one) and keeps the
 * answer only when its digest matches. Results older than `--max-age` are
 * not restored: a reference to one with a body answers `result_evicted`.
 * In a store, the session's results are only catalogued at start and as
 * other instances store them; a body is read (and verified against its
 * digest) when its result is first read.
 *
 * @module
 */
import {
  type McpSaveOptions,
  McpSession,
  type McpSessionRecord,
} from "../../persist/mcp_session.ts";
import type {
  CataloguedResult,
  ResultBacking,
  ResultStore,
} from "../../store/result_store.ts";
import type {
  GatewayNote,
  GatewayPersistence,
  RecordedCall,
} from "./gateway_note.ts";
import type { MediaTemplate } from "./offload.ts";

/** Options of {@linkcode GatewaySession.open}. */
export interface GatewaySessionOptions {
  /** The folder the session must lie outside of (the root, or the servers file's folder). */
  readonly root: string;
  /** Results older than this are not restored. */
  readonly maxAgeMs?: number;
  /** The session key file (default: the sessions' key). */
  readonly keyFile?: string;
  /**
   * The store (a URL): the session is then the name `dir` in it, shared
   * with every gateway given the same store, name and root (no lease; ids
   * are assigned through the journal). Default: `dir` is a folder one
   * gateway holds.
   */
  readonly store?: string;
  /**
   * The longest one operation of a database store may take (the call's
   * deadline bounds it): past it the call fails with `storage_unavailable`.
   */
  readonly timeoutMs?: number;
}

/** Largest arguments kept to call a tool again, in characters of JSON. */
const MAX_ARGUMENTS_CHARS = 65_536;

/**
 * The gateway's persistence over one MCP session.
 *
 * @example
 * ```ts
 * import { GatewaySession } from "./gateway_session.ts";
 * import { ResultStore } from "../../store/result_store.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * const dir = `${await Deno.makeTempDir()}/s`;
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * const first = await GatewaySession.open(dir, { root, keyFile });
 * const store = new ResultStore({ backing: first.backing() });
 * const call = { server: "fs", tool: "read_file", arguments: { path: "a" }, part: "content[0]" };
 * const d = await store.put("secret", {
 *   origin: "fs/read_file content[0]",
 *   capture: "complete",
 *   note: { call, persist: false },
 * });
 * assert.equal(d.result, "result-1");
 * await first.close();
 * const again = await GatewaySession.open(dir, { root, keyFile });
 * const restored = new ResultStore({ backing: again.backing() });
 * assert.equal(again.restore(restored), 0);
 * assert.equal(again.missing("result-1")?.tool, "read_file");
 * await again.close();
 * ```
 */
export class GatewaySession implements GatewayPersistence {
  readonly #session: McpSession;
  readonly #maxAgeMs: number;
  readonly #missing = new Map<string, RecordedCall>();
  /** How many of the session's records have been taken in. */
  #seen = 0;
  /** Results catalogued for the store, not yet handed to it. */
  #pending: CataloguedResult[] = [];
  /** Media templates of restored results and of other instances' results. */
  readonly media: Map<string, MediaTemplate> = new Map();

  private constructor(session: McpSession, maxAgeMs: number) {
    this.#session = session;
    this.#maxAgeMs = maxAgeMs;
  }

  /**
   * Opens (or creates) the session and takes its lease (a folder) or joins
   * it (a store).
   *
   * @param dir The session folder, or its name in the store.
   * @param options The root, `--max-age`, the key file, the store.
   * @returns The session; call {@linkcode GatewaySession.close}.
   * @throws {SessionError} As {@linkcode McpSession.open}.
   * @throws {StorageError} When the store cannot be reached.
   */
  static async open(
    dir: string,
    options: GatewaySessionOptions,
  ): Promise<GatewaySession> {
    const session = await McpSession.open(dir, {
      root: options.root,
      ...(options.keyFile === undefined ? {} : { keyFile: options.keyFile }),
      ...(options.timeoutMs === undefined
        ? {}
        : { timeoutMs: options.timeoutMs }),
      ...(options.store === undefined
        ? {}
        : { store: options.store, shared: true, bodies: "read" }),
    });
    return new GatewaySession(session, options.maxAgeMs ?? Infinity);
  }

  /** The session folder, or where the session lives in its store. */
  get dir(): string {
    return this.#session.dir;
  }

  /**
   * Restores the session's results into the store: bodies kept are
   * re-admitted (digest-checked) — or, in a store, catalogued, to be read
   * when they are — descriptor-only results are remembered for
   * {@linkcode GatewaySession.missing}, and expired ones are evicted.
   *
   * @param store The gateway's store.
   * @returns How many results with a body are restored or catalogued.
   */
  restore(store: ResultStore): number {
    const bodies = new Map(this.#session.results.map((r) => [r.id, r]));
    let restored = 0;
    for (const { record, expired } of this.#take()) {
      store.advancePast(record.id);
      if (record.recall !== undefined) continue;
      const body = bodies.get(record.id);
      if (body === undefined) {
        // A shared session: the store learns of it on its first refresh.
        this.#pending.push(record);
        if (!expired) restored += 1;
        continue;
      }
      if (store.get(record.id) !== undefined) continue;
      try {
        store.restore(body);
      } catch {
        continue;
      }
      if (expired) store.evict(record.id);
      else restored += 1;
    }
    return restored;
  }

  /**
   * The session as the backing of the gateway's store: each new result is
   * recorded with the call the gateway noted ({@linkcode GatewayNote}; its
   * body only when the note allows, or when there is no note — Loom's own
   * root tools); results other instances stored come in on refresh, their
   * catalogue entries only, and their bodies on load (none for a result
   * older than `--max-age`, which then reads as evicted).
   *
   * @returns The backing.
   */
  backing(): ResultBacking {
    return {
      admit: (result, note) =>
        this.#session.admit(
          result,
          saveOptions(note as GatewayNote | undefined),
        ),
      refresh: async () => {
        await this.#session.sync();
        for (const { record } of this.#take()) {
          if (record.recall === undefined) {
            this.#pending.push(record);
          }
        }
        return this.#pending.splice(0);
      },
      load: async (id) => {
        const record = this.#session.record(id);
        if (record !== undefined && this.#expired(record)) return undefined;
        return await this.#session.load(id);
      },
    };
  }

  #expired(record: McpSessionRecord): boolean {
    return record.stored_at !== undefined &&
      Date.now() - record.stored_at > this.#maxAgeMs;
  }

  /**
   * The records not taken in yet, each remembered: its media block, and
   * for a descriptor-only one the call to make again.
   */
  #take(): { record: McpSessionRecord; expired: boolean }[] {
    const records = this.#session.recordsFrom(this.#seen);
    this.#seen += records.length;
    const taken: { record: McpSessionRecord; expired: boolean }[] = [];
    for (const record of records) {
      const expired = this.#expired(record);
      if (record.media !== undefined) {
        this.media.set(record.id, record.media as MediaTemplate);
      }
      const args = record.recall?.arguments;
      if (record.recall !== undefined && !expired && args !== undefined) {
        const { server, tool, part } = record.recall;
        this.#missing.set(record.id, {
          server,
          tool,
          part,
          arguments: { ...args },
          sha256: record.sha256,
          ...(record.media === undefined
            ? {}
            : { media: record.media as MediaTemplate }),
        });
      }
      taken.push({ record, expired });
    }
    return taken;
  }

  /**
   * The call of a result kept as a descriptor only, to bring its body back.
   *
   * @param id The result id.
   * @returns The recorded call, or `undefined`.
   */
  missing(id: string): RecordedCall | undefined {
    return this.#missing.get(id);
  }

  /**
   * One line on what this instance did with the session's journal: results
   * recorded, appends (results stored at once share one), conflicts
   * retried, reads of what other instances appended.
   *
   * @returns The line.
   */
  journalSummary(): string {
    const s = this.#session.stats;
    return `session ${this.dir}: ${s.results} results recorded in ${s.appends} appends, ${s.conflicts} journal conflicts retried, ${s.reads} reads of other instances' records`;
  }

  /** Closes the journal and releases the lease. */
  async close(): Promise<void> {
    await this.#session.close();
  }
}

/** What the session records with a result the gateway noted. */
function saveOptions(note: GatewayNote | undefined): McpSaveOptions {
  if (note === undefined) return { stamped: true };
  const { call, persist } = note;
  const small = JSON.stringify(call.arguments ?? {}).length <=
    MAX_ARGUMENTS_CHARS;
  return {
    stamped: true,
    ...(call.media === undefined ? {} : { media: call.media }),
    ...(persist ? {} : {
      recall: {
        server: call.server,
        tool: call.tool,
        part: call.part,
        ...(small && call.arguments !== undefined
          ? { arguments: call.arguments }
          : {}),
      },
    }),
  };
}
