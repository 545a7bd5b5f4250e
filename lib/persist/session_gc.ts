/**
 * Garbage collection of a session root: deletes persisted result files that
 * the journal does not reference (for example those of a step that was
 * interrupted before it was acknowledged) and temp files left by an
 * interrupted atomic write. Files Loom did not name are left alone. It
 * takes the session's lock and verifies the journal's chain first.
 *
 * @module
 */
import { parseAnySession, requireJournal } from "./_read_session.ts";
import { placeSession, takeLease } from "./_session_place.ts";
import { sessionKeyFor } from "./_session_key.ts";

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

/**
 * Deletes unreferenced persisted results of a session — a slice's or an
 * MCP server's. The session must verify, and no run may hold it:
 * otherwise nothing is deleted.
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
  options: {
    readonly dryRun?: boolean;
    readonly keyFile?: string;
    /** The store's URL (default: `root` is a folder). */
    readonly store?: string;
  } = {},
): Promise<GarbageReport> {
  // The lease is held and the chain verified while bodies are deleted.
  const place = await placeSession(root, options.store);
  try {
    const { slot } = place;
    await requireJournal(slot);
    const key = await sessionKeyFor(options.keyFile, place.forbidden);
    const lease = await takeLease(slot);
    try {
      const doc = await parseAnySession(slot, key);
      const referenced = new Set<string>();
      for (const entry of doc.catalogue.values()) {
        // Inline and re-read results reference no body.
        if ("persisted" in entry.source) referenced.add(entry.sha256);
      }
      const collected = await slot.bodies.collect(
        referenced,
        options.dryRun === true,
      );
      return {
        root: slot.where,
        dryRun: options.dryRun === true,
        ...collected,
        tookOverLock: lease.tookOver,
      };
    } finally {
      await lease.release();
    }
  } finally {
    await place.owned?.close();
  }
}
