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

/** The counters and briefing state of a slice (numbers and notes only). */
export interface SliceProgressState {
  /** Steps taken, refused ones included. */
  readonly steps: number;
  /** Model calls answered (a recorded model resumes at this call index). */
  readonly modelCalls: number;
  /** Every action record, in sequence order. */
  readonly records: readonly ActionRecord[];
  /** Admitted edits (the next revision is numbered after them). */
  readonly edits: number;
  /** The latest revision, `null` before any edit. */
  readonly revision: string | null;
  /** Refused steps. */
  readonly refusals: number;
  /** Refused steps in a row at the end. */
  readonly consecutiveRefusals: number;
  /** Successful lookups. */
  readonly retrievals: number;
  /** Sum of request bytes. */
  readonly bytesTotal: number;
  /** Largest request. */
  readonly bytesPeak: number;
  /** Milliseconds spent waiting for the model. */
  readonly modelMs: number;
  /** Refusal notes still to be shown at the next selection. */
  readonly notes: readonly string[];
  /** Events retired from the bounded tail. */
  readonly archived: number;
  /** Bounded retirement checkpoints. */
  readonly checkpoints: number;
  /** The last request built, or `null` before the first. */
  readonly lastTurn: LastTurn | null;
  /** The context report lines so far. */
  readonly requests: readonly ContextReportRequest[];
}

/** What a run hands to {@linkcode SliceSessionHooks.onCheckpoint}. */
export interface SliceCheckpoint extends SliceProgressState {
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
export interface SliceResume extends SliceProgressState {
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
