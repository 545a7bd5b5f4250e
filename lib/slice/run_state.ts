/**
 * The run state of a slice and the session hooks through which a run hands
 * it out after each acknowledged step (a snapshot) and continues from it (a
 * resume). The slice knows nothing of files; `lib/persist` turns snapshots
 * into session storage. Only {@linkcode SliceSessionHooks} (opaque),
 * {@linkcode SliceCounters} and {@linkcode UnavailableResult} are public:
 * the rest is the loop's own.
 *
 * @module
 */
import type { ActionRecord } from "../briefing/report.ts";
import type { ContextReportRequest } from "../briefing/context_report.ts";
import type { ResultStore, StoredResult } from "../store/result_store.ts";
import type { StopReason } from "../briefing/context_report.ts";
import type { StepPhase } from "../reference/lookup_session.ts";

/**
 * The last request a run built, described without its text: enough to
 * rebuild it byte for byte from the restored briefing and result store, so
 * a resumed run measures `prefix_stable_bytes` as if it never stopped.
 */
export interface LastTurn {
  /** The step the request belonged to. */
  readonly sequence: number;
  /** Its stage. */
  readonly phase: StepPhase;
  /** The candidates (selection) or the chosen action (arguments). */
  readonly candidates: readonly string[];
  /** The notes shown with it. */
  readonly notes: readonly string[];
  /** The lookup requests answered in its stage before it, in order. */
  readonly lookups: readonly unknown[];
  /** Events retired while it was built. */
  readonly retired: number;
  /** Results stored when it was built (ids `result-1` … `result-<results>`). */
  readonly results: number;
}

/** The counters of a slice run (journal names are their snake_case). */
export interface SliceCounters {
  /** Steps taken, refused ones included. */
  readonly steps: number;
  /** Model calls answered (a recorded model resumes at this call index). */
  readonly modelCalls: number;
  /** Admitted edits (the next revision is numbered after them). */
  readonly edits: number;
  /** Refused steps. */
  readonly refusals: number;
  /** Refused steps in a row at the end. */
  readonly consecutiveRefusals: number;
  /** Successful lookups. */
  readonly retrievals: number;
  /** Calls whose `step` argument was a JSON string, parsed (context report `arguments_reparsed`). */
  readonly argumentsReparsed: number;
  /** Sum of request bytes. */
  readonly bytesTotal: number;
  /** Largest request. */
  readonly bytesPeak: number;
  /** Milliseconds spent waiting for the model. */
  readonly modelMs: number;
  /** Events retired from the bounded tail. */
  readonly archived: number;
  /** Bounded retirement checkpoints (the briefing's checkpoint lines). */
  readonly checkpoints: number;
}

/** One counter of a slice. */
export type SliceCounter = keyof SliceCounters;

/**
 * The counters in the order the journal writes them, from which the
 * journal derives its wire names and schema. Adding a counter means adding
 * it to {@linkcode SliceCounters} and here (the compiler checks both lists
 * agree), and producing and consuming it in the run.
 *
 * @example
 * ```ts
 * import { SLICE_COUNTERS } from "./run_state.ts";
 * import assert from "node:assert/strict";
 * assert.ok(SLICE_COUNTERS.includes("modelCalls"));
 * ```
 */
export const SLICE_COUNTERS = [
  "steps",
  "modelCalls",
  "edits",
  "refusals",
  "consecutiveRefusals",
  "retrievals",
  "argumentsReparsed",
  "bytesTotal",
  "bytesPeak",
  "modelMs",
  "archived",
  "checkpoints",
] as const satisfies readonly SliceCounter[];

// Every counter is listed: this fails to compile when one is missing.
const _everyCounter: Record<
  Exclude<SliceCounter, (typeof SLICE_COUNTERS)[number]>,
  never
> = {};
void _everyCounter;

/**
 * The run state of a slice: counters, revision, records, notes, report lines
 * and the last turn. Snapshots, resume and the session journal are built
 * from it; the journal serializes it in one place (`lib/persist`).
 */
export interface SliceState extends SliceCounters {
  /** The latest revision, `null` before any edit. */
  readonly revision: string | null;
  /** Every action record, in sequence order (append-only). */
  readonly records: readonly ActionRecord[];
  /** Refusal notes still to be shown at the next selection. */
  readonly notes: readonly string[];
  /** The last request built, or `null` before the first. */
  readonly lastTurn: LastTurn | null;
  /** The context report lines so far (append-only). */
  readonly requests: readonly ContextReportRequest[];
}

/**
 * What a run hands to its session after each acknowledged step
 * ({@linkcode SessionHookParts.onSnapshot}).
 */
export interface SliceSnapshot extends SliceState {
  /** The run's result store (read it with `stored()`; never modify it). */
  readonly results: ResultStore;
  /** How the run ended, on the final snapshot; `null` while it runs. */
  readonly stop: StopReason | null;
}

/**
 * A catalogued result of a stopped run that could not be restored (its
 * source changed): it keeps its id, and every reference to it fails with
 * `digest_mismatch`.
 */
export interface UnavailableResult {
  /** `result-<n>`. */
  readonly id: string;
  /** The digest it had. */
  readonly sha256: string;
  /** What produced it. */
  readonly origin: string;
  /** `complete` or `partial`. */
  readonly capture: "complete" | "partial";
  /** Its size when stored. */
  readonly utf8_bytes: number;
  /** Why it is unavailable (which source changed). */
  readonly detail: string;
  /** Always `digest_mismatch`: references to it fail with that code. */
  readonly reason: "digest_mismatch";
}

/** What a resumed run continues from. */
export interface SliceResume extends SliceState {
  /** The verified results to re-admit with their ids and digests. */
  readonly results: readonly StoredResult[];
  /**
   * Results whose source changed: they keep their ids and catalogue entries,
   * and every reference to them fails with `digest_mismatch`.
   */
  readonly unavailable?: readonly UnavailableResult[];
}

/** What {@linkcode SliceSessionHooks} carry, read only by the run. */
export interface SessionHookParts {
  /**
   * Called (and awaited) before the first step, after every acknowledged
   * step, and once with `stop` set when the run ends. A rejection ends the
   * run as an internal failure.
   */
  onSnapshot(snapshot: SliceSnapshot): Promise<void>;
  /** State of a stopped run to continue from. */
  readonly resume?: SliceResume;
  /** Directories the slice must never read or write (the session root). */
  readonly forbiddenRoots?: readonly string[];
  /**
   * The session as telemetry names it: its name and where it keeps the
   * results (the root, or the redacted store location).
   */
  readonly telemetry?: { readonly id: string; readonly location: string };
}

// The hooks are opaque so that the run state they carry stays out of the
// public API; the class's static block gives these two their only way in.
let wrap: (parts: SessionHookParts) => SliceSessionHooks;
let unwrap: (hooks: SliceSessionHooks) => SessionHookParts;

/**
 * Session hooks of a run (`RunOptions.session`): they save the run after
 * every acknowledged step and continue a stopped one. Get them from
 * `sliceSessionHooks(store)` in `@loom/loom/session`; what they carry (the
 * run state) is internal.
 *
 * @example
 * ```ts
 * import { sliceSessionHooks, SessionStore } from "@loom/loom/session";
 * import { SliceSessionHooks } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * const store = await SessionStore.create(await Deno.makeTempDir(), {
 *   workspace: await Deno.makeTempDir(),
 *   keyFile: `${await Deno.makeTempDir()}/session.key`,
 *   run: { intent: "x", policy: "bounded", model: "recorded:/r.json", test: null, maxSteps: 1 },
 * });
 * const hooks = sliceSessionHooks(store);
 * await store.close();
 * assert.ok(hooks instanceof SliceSessionHooks);
 * ```
 */
export class SliceSessionHooks {
  #parts!: SessionHookParts;

  private constructor() {}

  static {
    wrap = (parts) => {
      const hooks = new SliceSessionHooks();
      hooks.#parts = parts;
      return hooks;
    };
    unwrap = (hooks) => hooks.#parts;
  }
}

/**
 * Session hooks from their parts (`lib/persist` makes them for a session
 * store; tests make them to watch a run).
 *
 * @param parts The snapshot listener, resume state and forbidden roots.
 * @returns Hooks for `RunOptions.session`.
 */
export function sessionHooks(parts: SessionHookParts): SliceSessionHooks {
  return wrap(parts);
}

/**
 * The parts of session hooks, for the run that calls them.
 *
 * @param hooks Hooks made by {@linkcode sessionHooks}.
 * @returns Their parts.
 */
export function sessionHookParts(hooks: SliceSessionHooks): SessionHookParts {
  return unwrap(hooks);
}
