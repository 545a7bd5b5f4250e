/**
 * Slice checkpoints: the state of a slice after each acknowledged step, as
 * a session persists it, and the hooks through which a run hands it out
 * (`RunOptions.session`) and continues from it. The slice knows nothing of
 * files; `lib/persist` turns checkpoints into session storage.
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

/**
 * The names of a slice's counters, in the order the journal writes them.
 * Adding a counter means adding its name here and producing and consuming
 * it in the run; the session journal derives its wire form (snake_case) and
 * its schema from this list.
 *
 * @example
 * ```ts
 * import { SLICE_COUNTERS } from "./checkpoint.ts";
 * import assert from "node:assert/strict";
 * assert.ok(SLICE_COUNTERS.includes("modelCalls"));
 * ```
 */
export const SLICE_COUNTERS = [
  /** Steps taken, refused ones included. */
  "steps",
  /** Model calls answered (a recorded model resumes at this call index). */
  "modelCalls",
  /** Admitted edits (the next revision is numbered after them). */
  "edits",
  /** Refused steps. */
  "refusals",
  /** Refused steps in a row at the end. */
  "consecutiveRefusals",
  /** Successful lookups. */
  "retrievals",
  /** Sum of request bytes. */
  "bytesTotal",
  /** Largest request. */
  "bytesPeak",
  /** Milliseconds spent waiting for the model. */
  "modelMs",
  /** Events retired from the bounded tail. */
  "archived",
  /** Bounded retirement checkpoints. */
  "checkpoints",
] as const;

/** One counter of a slice. */
export type SliceCounter = (typeof SLICE_COUNTERS)[number];

/** The counters of a slice, by name (see {@linkcode SLICE_COUNTERS}). */
export type SliceCounters = { readonly [K in SliceCounter]: number };

/**
 * The run state of a slice: counters, revision, records, notes, report lines
 * and the last turn. Checkpoints, resume and the session journal are built
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

/** What a run hands to {@linkcode SliceSessionHooks.onCheckpoint}. */
export interface SliceCheckpoint extends SliceState {
  /** The run's result store (read it with `stored()`; never modify it). */
  readonly results: ResultStore;
  /** How the run ended, on the final checkpoint; `null` while it runs. */
  readonly stop: StopReason | null;
}

/** A result of a stopped run whose source changed: references to it fail. */
export interface UnavailableResultEntry {
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
}

/** What a resumed run continues from. */
export interface SliceResume extends SliceState {
  /** The verified results to re-admit with their ids and digests. */
  readonly results: readonly StoredResult[];
  /**
   * Results whose source changed: they keep their ids and catalogue entries,
   * and every reference to them fails with `digest_mismatch`.
   */
  readonly unavailable?: readonly UnavailableResultEntry[];
}

/** Session hooks of a run (`RunOptions.session`). */
export interface SliceSessionHooks {
  /**
   * Called (and awaited) before the first step, after every acknowledged
   * step, and once with `stop` set when the run ends. A rejection ends the
   * run as an internal failure.
   */
  onCheckpoint(checkpoint: SliceCheckpoint): Promise<void>;
  /** State of a stopped run to continue from. */
  readonly resume?: SliceResume;
  /** Directories the slice must never read or write (the session root). */
  readonly forbiddenRoots?: readonly string[];
}
