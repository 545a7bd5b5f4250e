/**
 * The one place where a slice's run state meets its wire form: a checkpoint
 * becomes a journal step record (snake_case counters derived from
 * `SLICE_COUNTERS`, only the records and report lines that are new), and a
 * step record folds back into the state.
 *
 * @module
 */
import type { StopReason } from "../briefing/context_report.ts";
import {
  SLICE_COUNTERS,
  type SliceCheckpoint,
  type SliceState,
} from "../slice/checkpoint.ts";
import type {
  CatalogueEntry,
  JournalActionRecord,
  StepRecord,
} from "./_schema.ts";
import { snakeCase } from "./_schema.ts";
import { compactRecord } from "./_session_records.ts";

/** The state a journal folds into: records still compact. */
export interface JournalState extends Omit<SliceState, "records"> {
  readonly records: JournalActionRecord[];
  readonly requests: SliceState["requests"][number][];
  /** How the run ended, or `null`. */
  readonly stop: StopReason | null;
}

/** The state before the first step. */
export function emptyState(): JournalState {
  return {
    ...Object.fromEntries(SLICE_COUNTERS.map((name) => [name, 0])) as {
      [K in (typeof SLICE_COUNTERS)[number]]: number;
    },
    revision: null,
    notes: [],
    lastTurn: null,
    stop: null,
    records: [],
    requests: [],
  };
}

/** The step record of a checkpoint, with what is new since `saved`. */
export function stepRecord(
  seq: number,
  checkpoint: SliceCheckpoint,
  saved: { readonly records: number; readonly requests: number },
  results: Record<string, CatalogueEntry>,
): Record<string, unknown> {
  return {
    seq,
    type: "step",
    counters: Object.fromEntries(
      SLICE_COUNTERS.map((name) => [snakeCase(name), checkpoint[name]]),
    ),
    revision: checkpoint.revision,
    notes: [...checkpoint.notes],
    last_turn: checkpoint.lastTurn,
    stop: checkpoint.stop,
    records: checkpoint.records.slice(saved.records).map(compactRecord),
    requests: checkpoint.requests.slice(saved.requests),
    results,
  };
}

/** The state after a step record (its records are checked by the caller). */
export function foldStep(
  state: JournalState,
  record: StepRecord,
): JournalState {
  state.records.push(...record.records);
  state.requests.push(...record.requests);
  return {
    ...state,
    ...Object.fromEntries(
      SLICE_COUNTERS.map((name) => [name, record.counters[snakeCase(name)]]),
    ),
    revision: record.revision,
    notes: record.notes,
    lastTurn: record.last_turn,
    stop: record.stop,
  };
}
