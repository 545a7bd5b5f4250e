/**
 * A result store that outlives one request: the adapters'
 * {@linkcode ResultStore}, kept in a session — the HMAC-chained journal and
 * digest-checked result bodies `loom mcp --session` keeps, in a folder or
 * in a storage back-end (`sqlite:PATH`, `postgres://…`) — opened shared and
 * without a workspace root, so a result stored while answering one request
 * reads back by the same reference and digest in a later request, in
 * another process, or on another instance, even while both are open.
 *
 * @module
 */
import {
  type PutOptions,
  type ResultDescriptor,
  ResultStore,
  type ResultStoreOptions,
} from "../store/result_store.ts";
import { McpSession } from "../persist/mcp_session.ts";
import { SessionError } from "../persist/session_error.ts";

/**
 * A {@linkcode ResultStore} kept in a session: it opens holding every
 * result stored there before (each verified against the key and its
 * digest); each new result gets its id from the session's journal and is
 * durable before `put` answers; what other processes stored since comes in
 * as the adapters' retrieval tools need it — a list takes in the catalogue
 * ({@linkcode ResultStore.refresh}), a read loads the body it names
 * ({@linkcode ResultStore.load}), verified against its digest. Several
 * processes may hold it at once. Close it, or let `await using` close it,
 * when the request is answered.
 */
export class SessionStore extends ResultStore implements AsyncDisposable {
  /** Where the session lives: its folder (real path), or its name in a store. */
  readonly dir: string;
  readonly #session: McpSession;
  #closed = false;

  /**
   * Use {@linkcode sessionStore}.
   *
   * @param session The open session.
   * @param options The store's limits.
   */
  private constructor(
    session: McpSession,
    options: Omit<ResultStoreOptions, "backing">,
  ) {
    // The session runs its journal writes one at a time itself.
    super({ ...options, backing: session.backing() });
    this.dir = session.dir;
    this.#session = session;
    for (const result of session.results) this.restore(result);
  }

  /**
   * Opens the session `dir`, creating it when there is none.
   *
   * @param dir The session folder, or the session's name in `store`.
   * @param options The key file, the storage back-end and the limits.
   * @returns The open store.
   * @throws {SessionError} As {@linkcode sessionStore}.
   */
  static async open(
    dir: string,
    options: Omit<ResultStoreOptions, "backing"> & {
      readonly keyFile?: string;
      readonly store?: string;
    } = {},
  ): Promise<SessionStore> {
    const { keyFile, store, ...limits } = options;
    const session = await McpSession.open(dir, {
      shared: true,
      ...(keyFile === undefined ? {} : { keyFile }),
      ...(store === undefined ? {} : { store }),
    });
    try {
      return new SessionStore(session, limits);
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  /**
   * Stores a result as {@linkcode ResultStore.put} does, its id assigned by
   * the session's journal; it answers once the result is durable.
   *
   * @param content The result, UTF-8.
   * @param options Its origin and capture.
   * @returns Its descriptor.
   * @throws {SessionError} `session_closed` after {@linkcode close}.
   */
  override put(
    content: string | Uint8Array,
    options: PutOptions,
  ): Promise<ResultDescriptor> {
    if (this.#closed) {
      return Promise.reject(
        new SessionError(
          "session_closed",
          `Cannot store a result in the session ${this.dir}: the store was closed`,
        ),
      );
    }
    return super.put(content, options);
  }

  /** Closes the journal and the storage back-end. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#session.close();
  }

  /**
   * Closes the store, for `await using`.
   *
   * @returns When it is closed.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Opens a result store kept in the session `dir` — the journal and result
 * bodies `loom mcp --session` keeps, without a workspace root — for the
 * `store` option of every adapter. A result stored in one process reads back
 * in the next (or in another one open at the same time) by the same
 * reference and digest; a reference to a result the session does not hold
 * answers `unknown_result`, saying what the model can do instead.
 *
 * @param dir The session folder (created when missing), or the session's
 *   name in `options.store`.
 * @param options The store's limits; `keyFile`, the key that seals the
 *   journal (default: the key every Loom session uses,
 *   `LOOM_SESSION_KEY_FILE` or the per-user one), which must lie outside the
 *   folder and be the same for every process sharing it; `store`, a storage
 *   back-end URL (`file:DIR`, `sqlite:PATH`, `postgres://…`; default: `dir`
 *   is a folder).
 * @returns The store; close it when the request is answered.
 * @throws {SessionError} `session_tampered`, `session_invalid` (not an
 *   adapter's session), `session_key_invalid` (the key lies inside the
 *   folder), `result_missing`, `result_corrupted`.
 * @throws {StorageError} When the storage back-end cannot be reached.
 *
 * @example
 * ```ts
 * import { retrievalTools, sessionStore } from "@loom/loom/ai-sdk";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * const first = await sessionStore(`${dir}/chat-42`, { keyFile });
 * const d = await first.put('{"rows":[1,2,3]}', { origin: "rows", capture: "complete" });
 * await first.close();
 * // A later request, perhaps another process:
 * await using store = await sessionStore(`${dir}/chat-42`, { keyFile });
 * const pointer = { ...d.reference!, select: { kind: "json_pointer", pointer: "/rows/2" }, rendering: "json" };
 * assert.deepEqual(await retrievalTools(store).read_result.execute({ reference: pointer }), { selected_json: "3" });
 * ```
 */
export function sessionStore(
  dir: string,
  options?: Omit<ResultStoreOptions, "backing"> & {
    readonly keyFile?: string;
    readonly store?: string;
  },
): Promise<SessionStore> {
  return SessionStore.open(dir, options);
}
