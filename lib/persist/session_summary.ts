/**
 * Session listings for `loom session ls|show`: counts, digests and names,
 * never a result body or preview (not even an inline one).
 *
 * @module
 */
import { join } from "node:path";
import { readSessionFile, SESSION_FILE } from "./session_store.ts";
import { SessionError } from "./session_error.ts";
import type { SessionJson } from "./_schema.ts";

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
   * tool's threshold, kept in `session.json`) or `reread` (from the
   * workspace).
   */
  readonly source: "persisted" | "inline" | "reread";
  /**
   * The persisted file (relative to the root), `session.json` for an inline
   * result, or the workspace path.
   */
  readonly location: string;
}

/** What `loom session show` prints. */
export interface SessionSummary {
  /** The session root. */
  readonly root: string;
  /** The session name. */
  readonly session: string;
  /** The workspace. */
  readonly workspace: string;
  /** The context policy. */
  readonly policy: "legacy" | "bounded";
  /** The model spec. */
  readonly model: string;
  /** The test command, or `null`. */
  readonly test_command: readonly string[] | null;
  /** The latest revision, or `null`. */
  readonly revision: string | null;
  /** The step budget. */
  readonly max_steps: number;
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
  /** Bytes of results kept inline in `session.json`. */
  readonly inline_bytes: number;
  /** Run counters carried over. */
  readonly counters: Readonly<Record<string, number>>;
}

/** One entry of {@linkcode listSessions}: a summary, or why it is unreadable. */
export interface SessionListing {
  /** The session root. */
  readonly root: string;
  /** The summary when `session.json` is valid. */
  readonly summary?: SessionSummary;
  /** Why `session.json` could not be read, otherwise. */
  readonly error?: string;
}

/**
 * Summarises one session from its `session.json` (no file is verified or
 * written; bodies are never read).
 *
 * @param root The session root.
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
export async function summarizeSession(root: string): Promise<SessionSummary> {
  const doc = await readSessionFile(root);
  const results: SessionResultSummary[] = Object.entries(doc.results)
    .sort((a, b) => idNumber(a[0]) - idNumber(b[0]))
    .map(([id, entry]) => ({
      id,
      sha256: entry.sha256,
      origin: entry.origin,
      capture: entry.capture,
      utf8_bytes: entry.utf8_bytes,
      tool: entry.tool,
      ...sourceOf(entry.source),
    }));
  return {
    root,
    session: doc.session,
    workspace: doc.workspace,
    policy: doc.policy,
    model: doc.model,
    test_command: doc.test?.command ?? null,
    revision: doc.revision,
    max_steps: doc.max_steps,
    steps_used: doc.steps_used,
    model_calls_used: doc.model_calls_used,
    events: doc.events.length,
    last_action: doc.events.at(-1)?.record.action ?? null,
    results,
    persisted_bytes: bytesFrom(results, "persisted"),
    inline_bytes: bytesFrom(results, "inline"),
    counters: doc.counters,
  };
}

/**
 * Lists the sessions under a directory: the directory itself when it holds
 * a `session.json`, then each subdirectory that does, by name.
 *
 * @param dir The directory.
 * @returns One listing per session; unreadable ones carry `error`.
 * @throws {Deno.errors.NotFound} When the directory does not exist.
 *
 * @example
 * ```ts
 * import { listSessions } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/broken`);
 * await Deno.writeTextFile(`${dir}/broken/session.json`, "{");
 * const listed = await listSessions(dir);
 * assert.equal(listed.length, 1);
 * assert.match(listed[0]?.error ?? "", /not valid JSON/);
 * ```
 */
export async function listSessions(dir: string): Promise<SessionListing[]> {
  const roots: string[] = [];
  if (await isFile(join(dir, SESSION_FILE))) roots.push(dir);
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) names.push(entry.name);
  }
  names.sort();
  for (const name of names) {
    if (await isFile(join(dir, name, SESSION_FILE))) {
      roots.push(join(dir, name));
    }
  }
  const out: SessionListing[] = [];
  for (const root of roots) {
    try {
      out.push({ root, summary: await summarizeSession(root) });
    } catch (error) {
      if (!(error instanceof SessionError)) throw error;
      out.push({ root, error: error.message });
    }
  }
  return out;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.lstat(path)).isFile;
  } catch {
    return false;
  }
}

function sourceOf(
  source: SessionJson["results"][string]["source"],
): Pick<SessionResultSummary, "source" | "location"> {
  if ("persisted" in source) {
    return { source: "persisted", location: source.persisted };
  }
  // The body itself is never shown: only where it lives.
  if ("inline" in source) return { source: "inline", location: SESSION_FILE };
  return { source: "reread", location: source.reread.path };
}

function bytesFrom(
  results: readonly SessionResultSummary[],
  source: SessionResultSummary["source"],
): number {
  return results.filter((r) => r.source === source)
    .reduce((sum, r) => sum + r.utf8_bytes, 0);
}

function idNumber(id: string): number {
  return Number(id.slice(id.lastIndexOf("-") + 1));
}
