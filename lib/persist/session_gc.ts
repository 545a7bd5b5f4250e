/**
 * Garbage collection of a session root: deletes persisted result files that
 * the journal does not reference (for example those of a step that was
 * interrupted before it was acknowledged) and temp files left by an
 * interrupted atomic write. Files Loom did not name are left alone. It
 * takes the session's lock and verifies the journal's chain first.
 *
 * @module
 */
import { join } from "node:path";
import { isTempName } from "./_session_util.ts";
import { parseSession, RESULTS_DIR } from "./_read_session.ts";
import { SessionStore } from "./session_store.ts";

/** What {@linkcode collectGarbage} did (or would do, in a dry run). */
export interface GarbageReport {
  /** The session root. */
  readonly root: string;
  /** Whether nothing was deleted on purpose. */
  readonly dryRun: boolean;
  /** Root-relative paths deleted (or that would be). */
  readonly deleted: readonly string[];
  /** Bytes those files held. */
  readonly freedBytes: number;
  /** Referenced result files kept. */
  readonly kept: number;
  /** Root-relative paths of files Loom did not name, left alone. */
  readonly ignored: readonly string[];
  /** The stale lock of a killed run that was taken over, or `null`. */
  readonly tookOverLock: string | null;
}

const RESULT_NAME = /^[0-9a-f]{64}\.txt$/;

/**
 * Deletes unreferenced persisted results of a session. The session must
 * verify, and no run may hold it: otherwise nothing is deleted.
 *
 * @param root The session root.
 * @param options `dryRun`: report without deleting; `keyFile`: the key.
 * @returns What was (or would be) deleted.
 * @throws {SessionError} `session_missing`, `session_invalid`,
 *   `session_tampered` or `session_locked`; nothing is deleted.
 *
 * @example
 * ```ts
 * import { ResultStore } from "@loom/loom/reference";
 * import { collectGarbage, SessionStore } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * const root = await Deno.makeTempDir();
 * const session = await SessionStore.create(root, {
 *   workspace: await Deno.makeTempDir(), keyFile,
 *   run: { intent: "x", policy: "bounded", model: "recorded:/r.json", test: null, maxSteps: 1 },
 * });
 * await session.close();
 * await Deno.writeTextFile(`${root}/tool-results/${"a".repeat(64)}.txt`, "orphan");
 * const dry = await collectGarbage(root, { dryRun: true, keyFile });
 * assert.equal(dry.deleted.length, 1);
 * assert.equal((await collectGarbage(root, { keyFile })).deleted.length, 1);
 * assert.equal((await collectGarbage(root, { keyFile })).deleted.length, 0);
 * ```
 */
export async function collectGarbage(
  root: string,
  options: { readonly dryRun?: boolean; readonly keyFile?: string } = {},
): Promise<GarbageReport> {
  // Opening verifies the chain and holds the lock while files are deleted.
  const store = await SessionStore.open(
    root,
    options.keyFile === undefined ? {} : { keyFile: options.keyFile },
  );
  try {
    return {
      ...await collect(store.root, options.dryRun === true),
      tookOverLock: store.tookOverLock,
    };
  } finally {
    await store.close();
  }
}

async function collect(
  root: string,
  dryRun: boolean,
): Promise<Omit<GarbageReport, "tookOverLock">> {
  const doc = await parseSession(root, undefined);
  const referenced = new Set<string>();
  for (const entry of doc.catalogue.values()) {
    // Inline and re-read results reference no file under tool-results/.
    if ("persisted" in entry.source) referenced.add(entry.source.persisted);
  }
  const doomed: { path: string; size: number }[] = [];
  const ignored: string[] = [];
  let kept = 0;
  for await (const entry of Deno.readDir(root)) {
    if (entry.isFile && isTempName(entry.name)) {
      const info = await Deno.lstat(join(root, entry.name)).catch(() => null);
      doomed.push({ path: entry.name, size: info?.size ?? 0 });
    }
  }
  const dir = join(root, RESULTS_DIR);
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  names.sort();
  for (const name of names) {
    const path = `${RESULTS_DIR}/${name}`;
    const info = await Deno.lstat(join(root, path));
    const ours = info.isFile && (RESULT_NAME.test(name) || isTempName(name));
    if (!ours) {
      ignored.push(path);
    } else if (referenced.has(path)) {
      kept += 1;
    } else {
      doomed.push({ path, size: info.size });
    }
  }
  if (!dryRun) {
    for (const file of doomed) {
      await Deno.remove(join(root, file.path)).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
    }
  }
  return {
    root,
    dryRun,
    deleted: doomed.map((f) => f.path),
    freedBytes: doomed.reduce((sum, f) => sum + f.size, 0),
    kept,
    ignored,
  };
}
