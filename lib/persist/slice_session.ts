/**
 * Connects a slice run to session storage: the hooks that append a
 * checkpoint to the journal after every acknowledged step, and the resume
 * state a stopped run continues from.
 *
 * @module
 */
import type {
  SliceCheckpoint,
  SliceResume,
  SliceSessionHooks,
} from "../slice/checkpoint.ts";
import type {
  LoadedSession,
  SessionSaveInfo,
  SessionStore,
} from "./session_store.ts";

/** Options of {@linkcode sliceSessionHooks}. */
export interface SliceSessionOptions {
  /** The session to continue, from {@linkcode SessionStore.load}. */
  readonly resume?: LoadedSession;
  /** Told after every save (e.g. a progress line). */
  readonly onSaved?: (
    info: SessionSaveInfo,
    checkpoint: SliceCheckpoint,
  ) => void;
}

/**
 * The session hooks of a slice run (`RunOptions.session`): every checkpoint
 * is appended to the journal through the owner's {@linkcode SessionStore},
 * and commission refuses paths into the session root.
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
  const hooks: SliceSessionHooks = {
    forbiddenRoots: store.forbiddenRoots,
    onCheckpoint: async (checkpoint) => {
      const info = await store.save(checkpoint);
      options.onSaved?.(info, checkpoint);
    },
  };
  return options.resume === undefined
    ? hooks
    : { ...hooks, resume: resumeOf(options.resume) };
}

/**
 * The resume state of a loaded session, for `RunOptions.session.resume`.
 *
 * @param loaded A verified session.
 * @returns The run state, results and unavailable results to continue from.
 *
 * @example
 * ```ts
 * import { resumeOf, SessionStore } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * const root = await Deno.makeTempDir();
 * const created = await SessionStore.create(root, {
 *   workspace: await Deno.makeTempDir(), keyFile,
 *   run: { intent: "x", policy: "legacy", model: "recorded:/r.json", test: null, maxSteps: 3 },
 * });
 * await created.close();
 * const store = await SessionStore.open(root, { keyFile });
 * const resume = resumeOf(await store.load());
 * await store.close();
 * assert.equal(resume.steps, 0);
 * assert.equal(resume.lastTurn, null);
 * ```
 */
export function resumeOf(loaded: LoadedSession): SliceResume {
  return {
    ...loaded.state,
    results: loaded.results,
    unavailable: loaded.unavailable,
  };
}
