/**
 * The session of `loom mcp --session DIR`: the MCP server's stored results,
 * kept across restarts in the same kind of session folder a slice uses —
 * `DIR/journal.jsonl`, HMAC-chained with the same per-user session key and
 * checked the same way on load (`session_tampered`, `session_invalid`),
 * result bodies in `DIR/tool-results/<sha256>.txt` (written atomically,
 * digest-checked on load: `result_missing`, `result_corrupted`), and
 * `DIR/lock` naming the one server that writes it. The folder must lie
 * outside the server's root, and so must the key, so no tool can read or
 * forge either. A session opened without a root (an SDK adapter's store,
 * which has no workspace) records `root: null` and is refused where a root
 * is given, and the other way round; its key must still lie outside it.
 *
 * @module
 */
import { join } from "node:path";
import { z } from "zod";
import type { StoredResult } from "../store/result_store.ts";
import { sha256Hex } from "../store/digest.ts";
import { JournalWriter, readJournal } from "./_journal.ts";
import { acquireLock, type SessionLock } from "./_lock.ts";
import { JOURNAL_FILE, RESULTS_DIR } from "./_read_session.ts";
import { loadSessionKey, sessionKeyPath } from "./_session_key.ts";
import {
  exists,
  isWithin,
  realish,
  refuseOverlap,
  writeAtomic,
} from "./_session_util.ts";
import { SessionError } from "./session_error.ts";

/** The journal header's format of an MCP server's session. */
export const MCP_SESSION_FORMAT = "loom-mcp-session/1";

/** Options of {@linkcode McpSession.open}. */
export interface McpSessionOptions {
  /**
   * The server's root; the session folder and the key must lie outside it.
   * Omitted for a store without a workspace (the SDK adapters).
   */
  readonly root?: string;
  /** The session key file (default: the slice sessions' key). */
  readonly keyFile?: string;
}

const digest = z.string().regex(/^[0-9a-f]{64}$/);
const headerSchema = z.strictObject({
  format: z.literal(MCP_SESSION_FORMAT),
  root: z.string().nullable(),
});
const resultSchema = z.strictObject({
  type: z.literal("result"),
  seq: z.number().int().positive(),
  id: z.string().regex(/^result-[1-9][0-9]*$/),
  sha256: digest,
  origin: z.string(),
  capture: z.enum(["complete", "partial"]),
  utf8_bytes: z.number().int().nonnegative(),
});

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
  /** The session folder (real path). */
  readonly dir: string;
  /** The verified results of earlier runs, in id order. */
  readonly results: readonly StoredResult[];
  readonly #writer: JournalWriter;
  readonly #lock: SessionLock;
  readonly #written = new Set<string>();
  #seq: number;

  private constructor(
    dir: string,
    writer: JournalWriter,
    lock: SessionLock,
    results: readonly StoredResult[],
  ) {
    this.dir = dir;
    this.#writer = writer;
    this.#lock = lock;
    this.results = results;
    this.#seq = results.length;
    for (const result of results) this.#written.add(result.sha256);
  }

  /**
   * Opens the session in `dir`, creating it when the folder holds none, and
   * takes its lock. An existing journal is verified record by record
   * against the key and its chain, and each result body against its digest.
   *
   * @param dir The session folder.
   * @param options The server's root and the key file.
   * @returns The session; call {@linkcode McpSession.close}.
   * @throws {SessionError} `session_inside_workspace` (the folder overlaps
   *   the root), `session_key_invalid` (also when the key lies inside the
   *   root), `session_locked`, `session_tampered`, `session_invalid` (not an
   *   MCP session, or one of another root), `result_missing`,
   *   `result_corrupted`.
   */
  static async open(
    dir: string,
    options: McpSessionOptions,
  ): Promise<McpSession> {
    const root = options.root === undefined
      ? null
      : await Deno.realPath(options.root);
    const given = realish(dir);
    if (root !== null) refuseOverlap(given, root);
    const keyFile = realish(options.keyFile ?? sessionKeyPath());
    if (
      (root !== null && isWithin(keyFile, root)) || isWithin(keyFile, given)
    ) {
      throw new SessionError(
        "session_key_invalid",
        `Cannot use the session key ${keyFile}: it lies inside the server's root or the session, where it could be read`,
        { file: keyFile },
      );
    }
    const key = await loadSessionKey(keyFile);
    await Deno.mkdir(join(given, RESULTS_DIR), {
      recursive: true,
      mode: 0o700,
    });
    const lock = await acquireLock(given);
    try {
      const file = join(given, JOURNAL_FILE);
      if (!(await exists(file))) {
        const writer = await JournalWriter.create(file, key);
        await writer.append({ format: MCP_SESSION_FORMAT, root });
        return new McpSession(given, writer, lock, []);
      }
      const read = await readJournal(file, key);
      const results = await loadResults(given, root, read.lines);
      const writer = await JournalWriter.continue(file, key, read);
      return new McpSession(given, writer, lock, results);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /**
   * Persists one stored result: its body (once per digest), then its
   * journal record, flushed before this returns.
   *
   * @param result A result of the server's store.
   */
  async save(result: StoredResult): Promise<void> {
    if (!this.#written.has(result.sha256)) {
      await writeAtomic(
        join(this.dir, RESULTS_DIR, `${result.sha256}.txt`),
        result.bytes,
      );
      this.#written.add(result.sha256);
    }
    this.#seq += 1;
    await this.#writer.append({
      type: "result",
      seq: this.#seq,
      id: result.id,
      sha256: result.sha256,
      origin: result.origin,
      capture: result.capture,
      utf8_bytes: result.bytes.length,
    });
  }

  /** Closes the journal and releases the lock. */
  async close(): Promise<void> {
    this.#writer.close();
    await this.#lock.release();
  }
}

async function loadResults(
  dir: string,
  root: string | null,
  lines: readonly { line: number; value: Record<string, unknown> }[],
): Promise<StoredResult[]> {
  const file = join(dir, JOURNAL_FILE);
  const [first, ...later] = lines;
  const header = headerSchema.safeParse(first?.value);
  if (!header.success) {
    throw new SessionError(
      "session_invalid",
      `Session journal ${file} is not the session of an MCP server (its header is not ${MCP_SESSION_FORMAT}); give loom mcp its own --session folder`,
      { file, line: 1 },
    );
  }
  if (header.data.root !== root) {
    const named = (r: string | null) =>
      r === null ? "no root (an SDK adapter's store)" : `the root ${r}`;
    throw new SessionError(
      "session_invalid",
      `Session ${dir} belongs to ${named(header.data.root)}, not ${
        named(root)
      }; give each its own session folder`,
      { file, line: 1 },
    );
  }
  const results: StoredResult[] = [];
  for (const [index, { value, line }] of later.entries()) {
    const record = resultSchema.safeParse(value);
    if (!record.success || record.data.seq !== index + 1) {
      throw new SessionError(
        "session_invalid",
        `Session journal ${file} is invalid at line ${line}: it is not result record ${
          index + 1
        }`,
        { file, line },
      );
    }
    const { id, sha256, origin, capture, utf8_bytes } = record.data;
    const body = join(dir, RESULTS_DIR, `${sha256}.txt`);
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(body);
    } catch (error) {
      throw new SessionError(
        "result_missing",
        `Cannot restore ${id}: its file ${body} cannot be read`,
        { file: body, cause: error },
      );
    }
    if (bytes.length !== utf8_bytes || sha256Hex(bytes) !== sha256) {
      throw new SessionError(
        "result_corrupted",
        `Cannot restore ${id}: its file ${body} does not match its SHA-256 digest`,
        { file: body },
      );
    }
    results.push({ id, bytes, sha256, origin, capture });
  }
  return results;
}
