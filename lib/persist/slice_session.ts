/**
 * Connects a slice run to session storage: the hooks that persist a
 * checkpoint after every acknowledged step, and the resume state a stopped
 * run continues from.
 *
 * @module
 */
import type {
  SliceCheckpoint,
  SliceResume,
  SliceSessionHooks,
} from "../slice/checkpoint.ts";
import type { PersistenceOverrides } from "./tool_policy.ts";
import type {
  LoadedSession,
  SessionSaveInfo,
  SessionStore,
} from "./session_store.ts";
import type { SliceTest } from "../slice/request.ts";

/** What a session stores besides the checkpoints: how to run the slice again. */
export interface SliceSessionOptions {
  /** The slice's intent. */
  readonly intent: string;
  /** The context policy. */
  readonly policy: "legacy" | "bounded";
  /** The model spec to resume with (a `recorded:` path should be absolute). */
  readonly model: string;
  /** The test command, or `null`. */
  readonly test: SliceTest | null;
  /** The step budget. */
  readonly maxSteps: number;
  /** Threshold overrides in force. */
  readonly overrides?: PersistenceOverrides;
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
 * is saved atomically through the owner's {@linkcode SessionStore}, and
 * commission refuses paths into the session root.
 *
 * @param store The owner's handle; ephemeral stages have none to pass.
 * @param options How to run the slice again, and the session to continue.
 * @returns Hooks for `runSlice`.
 *
 * @example
 * ```ts
 * import { SessionStore, sliceSessionHooks } from "@loom/loom/session";
 * import { runSlice } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * const root = await Deno.makeTempDir();
 * const store = await SessionStore.create(root, { workspace });
 * const model = {
 *   spec: "scripted:complete",
 *   call: ({ phase }: { phase: string }) => Promise.resolve({
 *     arguments: phase === "selection" ? { action: "slice.complete" } : { summary: "Done" },
 *     usage: { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null },
 *     final_usage: true,
 *   }),
 * };
 * const session = sliceSessionHooks(store, {
 *   intent: "Nothing", policy: "bounded", model: model.spec, test: null, maxSteps: 2,
 * });
 * const outcome = await runSlice(
 *   { intent: "Nothing", workspace, maxSteps: 2, provider: model },
 *   { contextPolicy: "bounded", session },
 * );
 * assert.equal(outcome.stop, "completed");
 * assert.equal((await store.load()).progress.stop, "completed");
 * ```
 */
export function sliceSessionHooks(
  store: SessionStore,
  options: SliceSessionOptions,
): SliceSessionHooks {
  const hooks: SliceSessionHooks = {
    forbiddenRoots: store.forbiddenRoots,
    onCheckpoint: async (checkpoint) => {
      const info = await store.save({
        intent: options.intent,
        policy: options.policy,
        model: options.model,
        test: options.test,
        revision: checkpoint.revision,
        maxSteps: options.maxSteps,
        stepsUsed: checkpoint.steps,
        modelCallsUsed: checkpoint.modelCalls,
        records: checkpoint.records,
        results: checkpoint.results.stored(),
        ...(options.overrides === undefined
          ? {}
          : { overrides: options.overrides }),
        progress: {
          stop: checkpoint.stop,
          edits: checkpoint.edits,
          refusals: checkpoint.refusals,
          consecutiveRefusals: checkpoint.consecutiveRefusals,
          retrievals: checkpoint.retrievals,
          bytesTotal: checkpoint.bytesTotal,
          bytesPeak: checkpoint.bytesPeak,
          modelMs: checkpoint.modelMs,
          archived: checkpoint.archived,
          checkpoints: checkpoint.checkpoints,
          notes: checkpoint.notes,
          lastTurn: checkpoint.lastTurn,
          requests: checkpoint.requests,
        },
      });
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
 * @returns Counters, records, results and briefing state to continue from.
 *
 * @example
 * ```ts
 * import { resumeOf, SessionStore } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const store = await SessionStore.create(await Deno.makeTempDir(), { workspace: await Deno.makeTempDir() });
 * await store.save({
 *   intent: "x", policy: "legacy", model: "recorded:/r.json", test: null, revision: null,
 *   maxSteps: 3, stepsUsed: 0, modelCallsUsed: 0, records: [], results: [],
 * });
 * const resume = resumeOf(await store.load());
 * assert.equal(resume.steps, 0);
 * assert.equal(resume.lastTurn, null);
 * ```
 */
export function resumeOf(loaded: LoadedSession): SliceResume {
  const p = loaded.progress;
  return {
    steps: loaded.stepsUsed,
    modelCalls: loaded.modelCallsUsed,
    records: loaded.records,
    results: loaded.results,
    unavailable: loaded.unavailable.map((u) => ({
      id: u.id,
      sha256: u.sha256,
      origin: u.origin,
      capture: u.capture,
      utf8_bytes: u.utf8_bytes,
      detail: u.detail,
    })),
    edits: p.edits,
    revision: loaded.revision,
    refusals: p.refusals,
    consecutiveRefusals: p.consecutiveRefusals,
    retrievals: p.retrievals,
    bytesTotal: p.bytesTotal,
    bytesPeak: p.bytesPeak,
    modelMs: p.modelMs,
    notes: p.notes,
    archived: p.archived,
    checkpoints: p.checkpoints,
    lastTurn: p.lastTurn,
    requests: p.requests,
  };
}
