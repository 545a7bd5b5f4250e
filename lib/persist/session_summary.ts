/**
 * Session listings for `loom session ls|show`: counts, digests and names,
 * never a result body or preview (not even an inline one).
 *
 * @module
 */
import { join } from "node:path";
import { parseAnySession } from "./_read_session.ts";
import type { CatalogueEntry } from "./_schema.ts";
import { placeSession } from "./_session_place.ts";
import { SessionError } from "./session_error.ts";
import type { ContextPolicy } from "../briefing/briefing.ts";
import { JOURNAL_FILE, OLD_SESSION_FILE } from "../storage/file_storage.ts";
import type { Storage } from "../storage/storage.ts";
import { openStorage } from "../storage/open_storage.ts";

/** One catalogued result as a listing shows it (no body). */
export interface SessionResultSummary {
  /** `result-<n>`. */
  readonly id: string;
  /** SHA-256 of the content. */
  readonly sha256: string;
  /** What produced it. */
  readonly origin: string;
  /** `complete` or `partial`. */
  readonly capture: "complete" | "partial";
  /** Size in UTF-8 bytes. */
  readonly utf8_bytes: number;
  /** The producing tool. */
  readonly tool: string;
  /**
   * `persisted` (a file under `tool-results/`), `inline` (at or below its
   * tool's threshold, kept in the journal) or `reread` (from the
   * workspace).
   */
  readonly source: "persisted" | "inline" | "reread" | "recall";
  /**
   * The persisted body (`tool-results/<sha256>.txt`), the journal for an
   * inline result (`journal.jsonl` in a folder), or the workspace path.
   */
  readonly location: string;
}

/** What `loom session show` prints. */
export interface SessionSummary {
  /** The session root, or where it lives in a store (`URL#name`). */
  readonly root: string;
  /**
   * `slice` (written by `loom run`) or `mcp` (an MCP server's stored
   * results: no run, so no policy, model, budget or steps).
   */
  readonly kind: "slice" | "mcp";
  /** The session name. */
  readonly session: string;
  /**
   * The workspace (an MCP server's root; `null` for the SDK adapters' store,
   * which serves none).
   */
  readonly workspace: string | null;
  /** The context policy (`null` for an MCP server's session). */
  readonly policy: ContextPolicy | null;
  /** The model spec (`null` for an MCP server's session). */
  readonly model: string | null;
  /** The test command, or `null`. */
  readonly test_command: readonly string[] | null;
  /** The latest revision, or `null`. */
  readonly revision: string | null;
  /** The step budget (`null` for an MCP server's session). */
  readonly max_steps: number | null;
  /** Steps taken. */
  readonly steps_used: number;
  /** Model calls answered. */
  readonly model_calls_used: number;
  /** Archived events. */
  readonly events: number;
  /** The last event's action, or `null`. */
  readonly last_action: string | null;
  /** Catalogued results. */
  readonly results: readonly SessionResultSummary[];
  /** Bytes of results persisted as files. */
  readonly persisted_bytes: number;
  /** Bytes of results kept inline in the journal. */
  readonly inline_bytes: number;
  /** How the run ended, or `null` while it can continue. */
  readonly stop: string | null;
  /** Records in the journal, header included. */
  readonly journal_records: number;
  /** Bytes of a torn last journal line (an unacknowledged step). */
  readonly torn_bytes: number;
}

/** One entry of {@linkcode listSessions}: a summary, or why it is unreadable. */
export interface SessionListing {
  /** The session root. */
  readonly root: string;
  /** The summary when the journal is readable. */
  readonly summary?: SessionSummary;
  /** Why the session could not be read, otherwise. */
  readonly error?: string;
}

/** Options of {@linkcode summarizeSession} and {@linkcode listSessions}. */
export interface SessionListOptions {
  /**
   * The store's URL (`file:DIR`, `sqlite:PATH`, `postgres://…`); the root
   * is then a session name (for {@linkcode listSessions}, the directory is
   * ignored). Default: folders.
   */
  readonly store?: string;
}

/**
 * Summarises one session from its journal — a slice's or an MCP server's
 * (nothing is verified or written; bodies are never read; `loom session
 * show --verify` verifies).
 *
 * @param root The session root (or name, in a store).
 * @param options The store.
 * @returns The summary.
 * @throws {SessionError} `session_missing` or `session_invalid`.
 *
 * @example
 * ```ts
 * import { SessionError, summarizeSession } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   summarizeSession(await Deno.makeTempDir()),
 *   (e: unknown) => e instanceof SessionError && e.code === "session_missing",
 * );
 * ```
 */
export function summarizeSession(
  root: string,
  options: SessionListOptions = {},
): Promise<SessionSummary> {
  return summarizeIn(root, options.store);
}

async function summarizeIn(
  root: string,
  store: string | Storage | undefined,
): Promise<SessionSummary> {
  const place = await placeSession(root, store);
  try {
    const { slot } = place;
    const doc = await parseAnySession(slot, undefined);
    const journal = slot.journal.where.endsWith(`/${JOURNAL_FILE}`)
      ? JOURNAL_FILE
      : "journal";
    const results: SessionResultSummary[] = [...doc.catalogue]
      .map(([id, entry]) => ({
        id,
        sha256: entry.sha256,
        origin: entry.origin,
        capture: entry.capture,
        utf8_bytes: entry.utf8_bytes,
        tool: entry.tool,
        ...sourceOf(entry.source, journal),
      }));
    const common = {
      root: slot.where,
      session: doc.header.session,
      results,
      persisted_bytes: bytesFrom(results, "persisted"),
      inline_bytes: bytesFrom(results, "inline"),
      journal_records: doc.text.lines.length,
      torn_bytes: doc.text.torn,
    };
    if (doc.kind === "mcp") {
      return {
        ...common,
        kind: "mcp",
        workspace: doc.header.root,
        policy: null,
        model: null,
        test_command: null,
        revision: null,
        max_steps: null,
        steps_used: 0,
        model_calls_used: 0,
        events: 0,
        last_action: null,
        stop: null,
      };
    }
    const header = doc.header;
    return {
      ...common,
      kind: "slice",
      workspace: header.workspace,
      policy: header.policy,
      model: header.model,
      test_command: header.test?.command ?? null,
      revision: doc.state.revision,
      max_steps: doc.maxSteps,
      steps_used: doc.state.steps,
      model_calls_used: doc.state.modelCalls,
      events: doc.state.records.length,
      last_action: doc.state.records.at(-1)?.action ?? null,
      stop: doc.state.stop,
    };
  } finally {
    await place.owned?.close();
  }
}

/**
 * Lists sessions: those in a store, by name, or without one those under a
 * directory — the directory itself when it holds a journal (or an old
 * `session.json`), then each subdirectory that does, by name.
 *
 * @param dir The directory (ignored with a store).
 * @param options The store.
 * @returns One listing per session; unreadable ones carry `error`.
 * @throws {Deno.errors.NotFound} When the directory does not exist.
 *
 * @example
 * ```ts
 * import { listSessions } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/broken`);
 * await Deno.writeTextFile(`${dir}/broken/journal.jsonl`, "{\n");
 * const listed = await listSessions(dir);
 * assert.equal(listed.length, 1);
 * assert.match(listed[0]?.error ?? "", /not valid JSON/);
 * ```
 */
export async function listSessions(
  dir: string,
  options: SessionListOptions = {},
): Promise<SessionListing[]> {
  if (options.store !== undefined) {
    const storage = await openStorage(options.store);
    try {
      const out: SessionListing[] = [];
      for (const name of await storage.listSessions()) {
        out.push(await listing(name, storage.session(name).where, storage));
      }
      return out;
    } finally {
      await storage.close();
    }
  }
  const roots: string[] = [];
  if (await isSession(dir)) roots.push(dir);
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) names.push(entry.name);
  }
  names.sort();
  for (const name of names) {
    if (await isSession(join(dir, name))) roots.push(join(dir, name));
  }
  const out: SessionListing[] = [];
  for (const root of roots) out.push(await listing(root, root, undefined));
  return out;
}

async function listing(
  name: string,
  root: string,
  store: Storage | undefined,
): Promise<SessionListing> {
  try {
    return {
      root,
      summary: await summarizeIn(name, store),
    };
  } catch (error) {
    if (!(error instanceof SessionError)) throw error;
    return { root, error: error.message };
  }
}

async function isSession(dir: string): Promise<boolean> {
  for (const name of [JOURNAL_FILE, OLD_SESSION_FILE]) {
    const info = await Deno.lstat(join(dir, name)).catch(() => undefined);
    if (info?.isFile) return true;
  }
  return false;
}

function sourceOf(
  source: CatalogueEntry["source"],
  journal: string,
): Pick<SessionResultSummary, "source" | "location"> {
  if ("persisted" in source) {
    return { source: "persisted", location: source.persisted };
  }
  // The body itself is never shown: only where it lives.
  if ("inline" in source) return { source: "inline", location: journal };
  if ("recall" in source) {
    return {
      source: "recall",
      location: `${source.recall.server}/${source.recall.tool}`,
    };
  }
  return { source: "reread", location: source.reread.path };
}

function bytesFrom(
  results: readonly SessionResultSummary[],
  source: SessionResultSummary["source"],
): number {
  return results.filter((r) => r.source === source)
    .reduce((sum, r) => sum + r.utf8_bytes, 0);
}
