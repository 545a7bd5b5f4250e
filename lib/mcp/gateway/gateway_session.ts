/**
 * The gateway's `--session DIR`: its stored results kept across restarts in
 * an {@linkcode McpSession} (the same HMAC-chained journal and digest-named
 * bodies as `loom mcp`), under the seeds' tool-result persistence rule. The
 * body of a result is written only when the configuration opts its tool in
 * (`"persist": true`) and the tool is not self-reading (`"selfReading":
 * true` is checked first and wins); otherwise only the descriptor and the
 * call are kept, and on resume the gateway may call the tool again (only a
 * read-only, idempotent one) and keeps the answer only when its digest
 * matches. Results older than `--max-age` are not restored: a reference to
 * one with a body answers `result_evicted`.
 *
 * @module
 */
import { McpSession } from "../../persist/mcp_session.ts";
import type { ResultStore, StoredResult } from "../../store/result_store.ts";
import type { GatewayPersistence, RecordedCall } from "./gateway.ts";
import type { MediaTemplate } from "./offload.ts";

/** Options of {@linkcode GatewaySession.open}. */
export interface GatewaySessionOptions {
  /** The folder the session must lie outside of (the root, or the servers file's folder). */
  readonly root: string;
  /** Results older than this are not restored. */
  readonly maxAgeMs?: number;
  /** The session key file (default: the sessions' key). */
  readonly keyFile?: string;
}

/** Largest arguments kept to call a tool again, in characters of JSON. */
const MAX_ARGUMENTS_CHARS = 65_536;

/**
 * The gateway's persistence over one MCP session folder.
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
 * const store = new ResultStore();
 * const d = await store.put("secret", { origin: "fs/read_file content[0]", capture: "complete" });
 * const call = { server: "fs", tool: "read_file", arguments: { path: "a" }, part: "content[0]", sha256: d.sha256! };
 * await first.saved(store.get(d.result!)!, call, false);
 * await first.close();
 * const again = await GatewaySession.open(dir, { root, keyFile });
 * const restored = new ResultStore();
 * assert.equal(again.restore(restored), 0);
 * assert.equal(again.missing("result-1")?.tool, "read_file");
 * await again.close();
 * ```
 */
export class GatewaySession implements GatewayPersistence {
  readonly #session: McpSession;
  readonly #maxAgeMs: number;
  readonly #missing = new Map<string, RecordedCall>();
  /** Media templates of restored results. */
  readonly media: Map<string, MediaTemplate> = new Map();

  private constructor(session: McpSession, maxAgeMs: number) {
    this.#session = session;
    this.#maxAgeMs = maxAgeMs;
  }

  /**
   * Opens (or creates) the session folder and takes its lock.
   *
   * @param dir The session folder.
   * @param options The root, `--max-age`, the key file.
   * @returns The session; call {@linkcode GatewaySession.close}.
   * @throws {SessionError} As {@linkcode McpSession.open}.
   */
  static async open(
    dir: string,
    options: GatewaySessionOptions,
  ): Promise<GatewaySession> {
    const session = await McpSession.open(dir, {
      root: options.root,
      ...(options.keyFile === undefined ? {} : { keyFile: options.keyFile }),
    });
    return new GatewaySession(session, options.maxAgeMs ?? Infinity);
  }

  /** The session folder. */
  get dir(): string {
    return this.#session.dir;
  }

  /**
   * Restores the session's results into the store: bodies kept are
   * re-admitted (digest-checked), descriptor-only results are remembered for
   * {@linkcode GatewaySession.missing}, and expired ones are evicted.
   *
   * @param store The gateway's store.
   * @returns How many bodies were restored.
   */
  restore(store: ResultStore): number {
    const now = Date.now();
    const bodies = new Map(this.#session.results.map((r) => [r.id, r]));
    let restored = 0;
    for (const record of this.#session.records) {
      store.advancePast(record.id);
      const expired = record.stored_at !== undefined &&
        now - record.stored_at > this.#maxAgeMs;
      if (record.media !== undefined) {
        this.media.set(record.id, record.media as MediaTemplate);
      }
      if (record.recall !== undefined) {
        const { server, tool, part, arguments: args } = record.recall;
        if (!expired && args !== undefined) {
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
        continue;
      }
      const body = bodies.get(record.id);
      if (body === undefined || store.get(record.id) !== undefined) continue;
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
   * Records a stored result (the seeds' rule decided `persist`).
   *
   * @param result The stored result.
   * @param call The call that produced it.
   * @param persist Whether its body is written.
   */
  async saved(
    result: StoredResult,
    call: RecordedCall,
    persist: boolean,
  ): Promise<void> {
    const small = JSON.stringify(call.arguments).length <= MAX_ARGUMENTS_CHARS;
    await this.#session.save(result, {
      stamped: true,
      ...(call.media === undefined ? {} : { media: call.media }),
      ...(persist ? {} : {
        recall: {
          server: call.server,
          tool: call.tool,
          part: call.part,
          ...(small ? { arguments: call.arguments } : {}),
        },
      }),
    });
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

  /** Closes the journal and releases the lock. */
  async close(): Promise<void> {
    await this.#session.close();
  }
}
