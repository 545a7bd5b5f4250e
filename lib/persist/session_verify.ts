/**
 * Loading a session: verifying its journal's chain and every result body
 * against its digest, and rebuilding the run state a resume continues
 * from. `SessionStore.open` and `load` use it with the session's lock
 * held; {@linkcode verifySession} without taking it.
 *
 * @module
 */
import type { ActionRecord } from "../briefing/report.ts";
import type { StoredResult } from "../store/result_store.ts";
import type {
  SliceCounters,
  SliceState,
  UnavailableResult,
} from "../slice/run_state.ts";
import type { SessionSlot } from "../storage/storage.ts";
import {
  type ParsedSession,
  parseSession,
  requireJournal,
} from "./_read_session.ts";
import { placeSession } from "./_session_place.ts";
import { expandRecord } from "./_session_records.ts";
import { verifyResult } from "./_session_results.ts";
import { realish, refuseOverlap } from "./_session_util.ts";
import { sessionKeyFor } from "./_session_key.ts";
import type { LoadedSession, OpenSessionOptions } from "./session_types.ts";

/** Full run states of loaded sessions, by their public `state` object. */
const runStates = new WeakMap<SliceCounters, SliceState>();

/**
 * The whole run state of a loaded session (records with descriptors
 * rebuilt, notes, last turn, report lines), which its public `state` only
 * counts.
 *
 * @param loaded A session from `SessionStore.load` or
 *   {@linkcode verifySession}.
 * @returns Its run state.
 * @throws {TypeError} When `loaded.state` was not made by either.
 */
export function runStateOf(loaded: LoadedSession): SliceState {
  const state = runStates.get(loaded.state);
  if (state === undefined) {
    throw new TypeError(
      `Cannot resume session ${loaded.root}: its state was not loaded by SessionStore.load()`,
    );
  }
  return state;
}

/**
 * Verifies a session's chain and results (as `SessionStore.load`)
 * without taking its lock or changing anything, for `loom session show
 * --verify`.
 *
 * @param root The session root.
 * @param options The key file.
 * @returns The verified session.
 * @throws {SessionError} As `SessionStore.open` (except
 *   `session_locked`) and `SessionStore.load`.
 *
 * @example
 * ```ts
 * import { SessionStore } from "@loom/loom/session";
 * import { verifySession } from "./session_verify.ts";
 * import assert from "node:assert/strict";
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * const root = await Deno.makeTempDir();
 * const store = await SessionStore.create(root, {
 *   workspace: await Deno.makeTempDir(), keyFile,
 *   run: { intent: "x", policy: "bounded", model: "recorded:/r.json", test: null, maxSteps: 1 },
 * });
 * const verified = await verifySession(root, { keyFile });
 * await store.close();
 * assert.equal(verified.state.steps, 0);
 * ```
 */
export async function verifySession(
  root: string,
  options: OpenSessionOptions = {},
): Promise<LoadedSession> {
  const place = await placeSession(root, options.store);
  try {
    const key = await journalKey(place.slot, place.forbidden, options.keyFile);
    const { parsed, workspace } = await parseAt(
      place.slot,
      place.forbidden,
      key,
    );
    return await verifyParsed(parsed, place.slot, workspace);
  } finally {
    await place.owned?.close();
  }
}

/** The slot's journal must exist (`session_missing` before any key or lock). */
export async function journalKey(
  slot: SessionSlot,
  forbidden: readonly string[],
  keyFile: string | undefined,
): Promise<Uint8Array> {
  await requireJournal(slot);
  return await sessionKeyFor(keyFile, forbidden);
}

export async function parseAt(
  slot: SessionSlot,
  forbidden: readonly string[],
  key: Uint8Array,
): Promise<{ parsed: ParsedSession; workspace: string }> {
  const parsed = await parseSession(slot, key);
  const workspace = realish(parsed.header.workspace);
  for (const path of forbidden) refuseOverlap(path, workspace);
  return { parsed, workspace };
}

export async function verifyParsed(
  parsed: ParsedSession,
  slot: SessionSlot,
  workspace: string,
): Promise<LoadedSession> {
  const root = slot.where;
  const results: StoredResult[] = [];
  const unavailable: UnavailableResult[] = [];
  const bytesById = new Map<string, Uint8Array>();
  const at = { slot, workspace, file: parsed.file };
  for (const [id, entry] of parsed.catalogue) {
    const result = await verifyResult(at, id, entry);
    if (typeof result === "string") {
      const { sha256, origin, capture } = entry;
      unavailable.push({
        id,
        sha256,
        origin,
        capture,
        utf8_bytes: entry.utf8_bytes,
        reason: "digest_mismatch",
        detail: result,
      });
      continue;
    }
    bytesById.set(id, result.bytes);
    results.push(result);
  }
  const { header, state } = parsed;
  return {
    root,
    session: header.session,
    workspace,
    intent: header.intent,
    policy: header.policy,
    model: header.model,
    test: header.test === null
      ? null
      : { command: header.test.command, timeoutMs: header.test.timeout_ms },
    maxSteps: parsed.maxSteps,
    overrides: parsed.overrides,
    stop: state.stop,
    state: runState({
      ...state,
      records: state.records.map((r) =>
        expandRecord(r as ActionRecord, bytesById)
      ),
    }),
    results,
    unavailable,
    tornBytes: parsed.text.torn,
  };
}

/** A run state, remembered as the full state behind its public counters. */
function runState(state: SliceState): SliceState {
  runStates.set(state, state);
  return state;
}
