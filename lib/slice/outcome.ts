/**
 * How a slice ended: the stop reason, the figures an embedder or the CLI
 * summary needs, and nothing of the prompts or file contents.
 *
 * @module
 */
import type { StopReason } from "../briefing/context_report.ts";
import type { ContextPolicy } from "../briefing/briefing.ts";

/** The latest test run of a slice, as its working state shows it. */
export interface SliceTestResult {
  /** Exit code of the test program. */
  readonly exit_code: number;
  /** Whether the run was stopped by its timeout. */
  readonly timed_out: boolean;
  /** The revision tested; `null` for the unedited workspace. */
  readonly tested_revision: string | null;
}

/** The result of {@linkcode runSlice}. */
export interface SliceOutcome {
  /** Why the slice stopped. */
  readonly stop: StopReason;
  /** A short sentence-case explanation (no prompt or file text). */
  readonly detail: string;
  /** `true` exactly when `stop` is `completed`. */
  readonly completed: boolean;
  /** Steps taken, refused ones included. */
  readonly steps: number;
  /**
   * Model calls made: lookups and failed calls included (one per report
   * line; `final_usage` there tells answered from failed).
   */
  readonly model_calls: number;
  /** The latest workspace revision, `null` when nothing was edited. */
  readonly revision: string | null;
  /** The latest test run, `null` when the tests never ran. */
  readonly latest_test: SliceTestResult | null;
  /** Whether the latest test validates the latest revision. */
  readonly tests_validate_latest_revision: boolean;
  /**
   * What confines the test command: `bubblewrap`, `deno` (Deno's own
   * permission flags), `unconfined` (`--unconfined-tests`), or `null`
   * without a test command or when the executor did not start.
   */
  readonly test_confinement: "bubblewrap" | "deno" | "unconfined" | null;
  /** Steps refused (commission, selection, expansion, lookup budget). */
  readonly refusals: number;
  /** The context policy of the run. */
  readonly policy: ContextPolicy;
  /** Bounded retirement checkpoints (0 under legacy). */
  readonly checkpoints: number;
  /** Successful lookups. */
  readonly retrievals: number;
  /** Request bytes over the run. */
  readonly request_bytes: {
    /** Sum of the request bytes of every model call. */
    readonly total: number;
    /** The largest request. */
    readonly peak: number;
  };
  /** Wall time of the run in milliseconds. */
  readonly elapsed_ms: number;
  /** Wall time spent waiting for the model, in milliseconds. */
  readonly model_ms: number;
  /** The model's `slice.complete` summary; `null` unless completed. */
  readonly summary: string | null;
  /** Where the context report was written, `null` when none was asked for. */
  readonly context_report: string | null;
}
