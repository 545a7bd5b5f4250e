/**
 * Connects a slice run to session storage: the hooks that append the run's
 * state to the journal after every acknowledged step, and the resume state
 * a stopped run continues from.
 *
 * @module
 */
import {
  type SessionHookParts,
  sessionHooks,
  type SliceCounters,
  type SliceResume,
  type SliceSessionHooks,
} from "../slice/run_state.ts";
import { saveSnapshot, type SessionStore } from "./session_store.ts";
import type { LoadedSession, SessionSaveInfo } from "./session_types.ts";
import { runStateOf } from "./session_verify.ts";

/** Options of {@linkcode sliceSessionHooks}. */
export interface SliceSessionOptions {
  /** The session to continue, from {@linkcode SessionStore.load}. */
  readonly resume?: LoadedSession;
  /** Told after every save, with the run's counters (e.g. a progress line). */
  readonly onSaved?: (info: SessionSaveInfo, counters: SliceCounters) => void;
}

/**
 * The session hooks of a slice run (`RunOptions.session`): the run's state
 * after every acknowledged step is appended to the journal through the
 * owner's {@linkcode SessionStore}, and commission refuses paths into the
 * session root.
 *
 * @param store The owner's handle; ephemeral stages have none to pass.
 * @param options The session to continue and a listener.
 * @returns Hooks for `runSlice`.
 *
 * @example
 * ```ts
 * import { SessionStore, sliceSessionHooks } from "@loom/loom/session";
 * import { runSlice } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * const workspace = await Deno.makeTempDir();
 * const root = await Deno.makeTempDir();
 * const model = {
 *   spec: "scripted:complete",
 *   call: ({ phase }: { phase: string }) => Promise.resolve({
 *     arguments: phase === "selection" ? { action: "slice.complete" } : { summary: "Done" },
 *     usage: { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null },
 *     final_usage: true,
 *   }),
 * };
 * const store = await SessionStore.create(root, {
 *   workspace, keyFile,
 *   run: { intent: "Nothing", policy: "bounded", model: model.spec, test: null, maxSteps: 2 },
 * });
 * const outcome = await runSlice(
 *   { intent: "Nothing", workspace, maxSteps: 2, provider: model },
 *   { contextPolicy: "bounded", session: sliceSessionHooks(store) },
 * );
 * await store.close();
 * assert.equal(outcome.stop, "completed");
 * const reopened = await SessionStore.open(root, { keyFile });
 * assert.equal((await reopened.load()).stop, "completed");
 * await reopened.close();
 * ```
 */
export function sliceSessionHooks(
  store: SessionStore,
  options: SliceSessionOptions = {},
): SliceSessionHooks {
  const parts: SessionHookParts = {
    forbiddenRoots: store.forbiddenRoots,
    telemetry: { id: store.session, location: store.root },
    onSnapshot: async (snapshot) => {
      const info = await saveSnapshot(store, snapshot);
      options.onSaved?.(info, snapshot);
    },
  };
  return sessionHooks(
    options.resume === undefined
      ? parts
      : { ...parts, resume: resumeOf(options.resume) },
  );
}

/** The resume state of a loaded session: run state, results, unavailable. */
function resumeOf(loaded: LoadedSession): SliceResume {
  return {
    ...runStateOf(loaded),
    results: loaded.results,
    unavailable: loaded.unavailable,
  };
}
