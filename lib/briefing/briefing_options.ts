/**
 * What a `Briefing` is configured with and what it reports of a
 * turn: the context policy, the size limits (with the seeds' defaults), the
 * options of a briefing and of one request, and the last request's
 * measurements.
 *
 * @module
 */
import type { StepPhase } from "../reference/lookup_session.ts";
import type { ResultStore } from "../store/result_store.ts";
import type { EventArchive } from "./event_archive.ts";
import type { PartBytes } from "./part_bytes.ts";
import type { TurnTool } from "./turn_request.ts";

/** The two context policies. `legacy` is the default of the slice. */
export type ContextPolicy = "legacy" | "bounded";

/**
 * Size limits of the briefings; the defaults are the seeds' numbers, except
 * the retirement trigger and target, chosen by the simulated cost of whole
 * runs (docs/cost.md).
 */
export interface BriefingLimits {
  /** Hard ceiling of a bounded request (65,536 bytes). */
  readonly ceilingBytes: number;
  /**
   * A bounded request above this triggers retirement (32,768 bytes: the
   * seeds' 48 KiB re-reads a longer tail on every request; 32 KiB costs
   * 15% less on the long recording with a cache hit ratio of 96.9%; see
   * docs/cost.md).
   */
  readonly retireAboveBytes: number;
  /**
   * Retirement aims at this size (16,384 bytes: after a checkpoint the
   * re-warm writes this prefix once; 8 or 12 KiB would cost about 10% less
   * but leave only a handful of events after a checkpoint; see
   * docs/cost.md).
   */
  readonly retireTargetBytes: number;
  /** At most this many events in the bounded tail (64). */
  readonly maxTailEvents: number;
  /** Events retired at a time (8). */
  readonly retireBatch: number;
  /** At most this many legacy transcript entries (64). */
  readonly transcriptEntries: number;
  /**
   * Legacy entries dropped at once when the transcript passes its window
   * (32): between rolls the transcript only grows at its end, so the cached
   * prefix survives; see the cost table in docs/cost.md for how it was chosen.
   */
  readonly transcriptRollBatch: number;
  /** Each legacy entry is cut at this many bytes, marker included (16,384). */
  readonly entryBytes: number;
  /** Lookups per stage, for the budget reminder (8). */
  readonly lookupsPerStage: number;
}

/** The seeds' limits. */
export const DEFAULT_BRIEFING_LIMITS: BriefingLimits = Object.freeze({
  ceilingBytes: 65_536,
  retireAboveBytes: 32_768,
  retireTargetBytes: 16_384,
  maxTailEvents: 64,
  retireBatch: 8,
  transcriptEntries: 64,
  transcriptRollBatch: 32,
  entryBytes: 16_384,
  lookupsPerStage: 8,
});

/** Options of `Briefing`. */
export interface BriefingOptions {
  /** `legacy` (rolling transcript) or `bounded` (working context). */
  readonly policy: ContextPolicy;
  /** The slice's intent, shown intact on every turn. */
  readonly intent: string;
  /** The slice's instructions, shown intact on every turn. */
  readonly instructions: string;
  /** The run's result store (its count is shown each turn). */
  readonly results: ResultStore;
  /** Bounded only: the event archive to use (default: a new one). */
  readonly archive?: EventArchive;
  /** Cache TTL of the breakpoints (default: the provider's 5m). */
  readonly cacheTtl?: "5m" | "1h";
  /** Overrides of the size limits (tests use small ones). */
  readonly limits?: Partial<BriefingLimits>;
}

/** Options of `Briefing.request`. */
export interface TurnOptions {
  /** The stage asking. */
  readonly phase: StepPhase;
  /** The tool the model is forced to call. */
  readonly tool: TurnTool;
  /** Admissible actions (selection) or the chosen action (arguments). */
  readonly candidates?: readonly string[] | undefined;
  /** Answers of this stage's lookups so far, in order (untrusted data). */
  readonly lookupAnswers?: readonly unknown[] | undefined;
  /** Short notes for the model: refusals, budget reminders. */
  readonly notes?: readonly string[] | undefined;
}

/** Measurements of the last request built. */
export interface TurnInfo {
  /** UTF-8 bytes of the serialized request. */
  readonly bytes: number;
  /**
   * Bytes at the start of this request that the next request repeats
   * unless a checkpoint (bounded) or a rolled-out entry (legacy) intervenes:
   * system, intent, checkpoint block and convo up to the end of the last
   * retained block's text.
   */
  readonly retainedPrefixBytes: number;
  /** Events retired while building this request. */
  readonly retired: number;
  /** Indices of lookup answers replaced by an `answer_too_large` failure. */
  readonly droppedAnswers: readonly number[];
  /** Events (bounded) or transcript entries (legacy) in the request. */
  readonly retained: number;
  /** The request's bytes by part (they add up to `bytes`). */
  readonly parts: PartBytes;
}
