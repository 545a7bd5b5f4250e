/**
 * A result store that outlives one request: the adapters'
 * {@linkcode ResultStore}, kept in a session folder — the HMAC-chained
 * journal and digest-checked result bodies `loom mcp --session` keeps — so
 * a result stored while answering one request reads back by the same
 * reference and digest in a later request, in another process, or on
 * another instance that opens the same folder after it.
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
 * A {@linkcode ResultStore} kept in a session folder: it opens holding every
 * result stored there before (each verified against the key and its
 * digest), and writes each new result to the folder before `put` answers.
 * One process holds the folder at a time (its lock file): close the store,
 * or let `await using` close it, once the request is answered.
 */
export class SessionStore extends ResultStore implements AsyncDisposable {
  /** The session folder (real path). */
  readonly dir: string;
  readonly #session: McpSession;
  readonly #saved = new Set<string>();
  /** Saves run one after another: each journal record seals the last. */
  #saving: Promise<unknown> = Promise.resolve();
  #closed = false;

  /**
   * Use {@linkcode sessionStore}.
   *
   * @param session The open session.
   * @param options The store's limits.
   */
  private constructor(session: McpSession, options: ResultStoreOptions) {
    super(options);
    this.dir = session.dir;
    this.#session = session;
    for (const result of session.results) {
      this.restore(result);
      this.#saved.add(result.id);
    }
  }

  /**
   * Opens the session in `dir`, creating it when the folder holds none.
   *
   * @param dir The session folder.
   * @param options The key file and the store's limits.
   * @returns The open store.
   * @throws {SessionError} As {@linkcode sessionStore}.
   */
  static async open(
    dir: string,
    options: ResultStoreOptions & { readonly keyFile?: string } = {},
  ): Promise<SessionStore> {
    const { keyFile, ...limits } = options;
    const session = await McpSession.open(
      dir,
      keyFile === undefined ? {} : { keyFile },
    );
    try {
      return new SessionStore(session, limits);
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  /**
   * Stores a result as {@linkcode ResultStore.put} does, then writes it to
   * the session folder; it answers once the result is durable.
   *
   * @param content The result, UTF-8.
   * @param options Its origin and capture.
   * @returns Its descriptor.
   * @throws {SessionError} `session_closed` after {@linkcode close}.
   */
  override async put(
    content: string | Uint8Array,
    options: PutOptions,
  ): Promise<ResultDescriptor> {
    if (this.#closed) {
      throw new SessionError(
        "session_closed",
        `Cannot store a result in the session ${this.dir}: the store was closed`,
      );
    }
    const described = await super.put(content, options);
    const id = described.result;
    if (id !== undefined && !this.#saved.has(id)) {
      const result = this.get(id)!;
      const saved = this.#saving.then(() => this.#session.save(result));
      this.#saving = saved.catch(() => {});
      await saved;
      this.#saved.add(id);
    }
    return described;
  }

  /** Waits for the writes under way, closes the journal, releases the lock. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#saving;
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
 * Opens a result store kept in the session folder `dir` — the journal and
 * result bodies `loom mcp --session` keeps, without a workspace root — for
 * the `store` option of every adapter. A result stored in one process reads
 * back in the next by the same reference and digest; a reference to a
 * result the folder does not hold answers `unknown_result`, saying what the
 * model can do instead.
 *
 * @param dir The session folder (created when missing).
 * @param options The store's limits and `keyFile`, the key that seals the
 *   journal (default: the key every Loom session uses,
 *   `LOOM_SESSION_KEY_FILE` or the per-user one). The key must lie outside
 *   the folder, and every process sharing the folder needs the same key.
 * @returns The store; close it when the request is answered.
 * @throws {SessionError} `session_locked` (another process holds it),
 *   `session_tampered`, `session_invalid` (not an adapter's session),
 *   `session_key_invalid` (the key lies inside the folder),
 *   `result_missing`, `result_corrupted`.
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
 * assert.deepEqual(retrievalTools(store).read_result.execute({ reference: pointer }), { selected_json: "3" });
 * ```
 */
export function sessionStore(
  dir: string,
  options?: ResultStoreOptions & { readonly keyFile?: string },
): Promise<SessionStore> {
  return SessionStore.open(dir, options);
}
