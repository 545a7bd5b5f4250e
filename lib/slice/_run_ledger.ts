/**
 * What a slice run has done so far: its steps, records, refusals and notes,
 * its model-call counters and what it knows of the workspace. The loop
 * records each step into it (and into the briefing, the trace and the
 * progress line); the state a session snapshot saves is read from it, and a
 * resume writes a stopped run's state back into it.
 *
 * @module
 */
import type { Briefing } from "../briefing/briefing.ts";
import type { ActionRecord, ExecutionReport } from "../briefing/report.ts";
import type { StepPhase } from "../reference/lookup_session.ts";
import type { ResultStore } from "../store/result_store.ts";
import type { WorkspaceFacts } from "./_execute.ts";
import { describe, tookEffect } from "./_progress.ts";
import { capacityStop, type RunCounters } from "./_stages.ts";
import { type SliceStoppedError, stopped } from "./_stopped.ts";
import type { SliceTrace } from "./_slice_trace.ts";
import type { LastTurn, SliceResume, SliceState } from "./run_state.ts";

/** A run's ledger: mutable, like the counters it holds. */
export interface RunLedger {
  /** Steps taken, refused ones included. */
  steps: number;
  /** Refused steps. */
  refusals: number;
  /** Refused steps in a row, up to now. */
  consecutiveRefusals: number;
  /** What the model reads with its next selection (refusals so far). */
  notes: string[];
  /** Every step's action record, a resumed run's earlier ones included. */
  readonly records: ActionRecord[];
  /** The last request built, so a resume can rebuild it. */
  lastTurn: LastTurn | null;
  /** Model calls, bytes and protocol failures. */
  readonly counters: RunCounters;
  /** Edits, the latest revision and its tree. */
  readonly facts: WorkspaceFacts;
}

/** A ledger of a run that has taken no step. */
export function newLedger(): RunLedger {
  return {
    steps: 0,
    refusals: 0,
    consecutiveRefusals: 0,
    notes: [],
    records: [],
    lastTurn: null,
    counters: {
      modelCalls: 0,
      modelMs: 0,
      retrievals: 0,
      bytesTotal: 0,
      bytesPeak: 0,
      lastRequestBytes: 0,
      stepCalls: 0,
      protocolFailures: 0,
      argumentsReparsed: 0,
    },
    facts: { edits: 0, revision: null, digest: null },
  };
}

/**
 * Takes over a stopped run's steps, refusals, notes, records, last turn,
 * counters and revision (the tree's digest is surveyed again).
 *
 * @param ledger A fresh ledger.
 * @param resume The stopped run's state.
 */
export function restoreLedger(ledger: RunLedger, resume: SliceResume): void {
  ledger.steps = resume.steps;
  ledger.refusals = resume.refusals;
  ledger.consecutiveRefusals = resume.consecutiveRefusals;
  ledger.notes = [...resume.notes];
  ledger.records.push(...resume.records);
  ledger.lastTurn = resume.lastTurn;
  ledger.facts.edits = resume.edits;
  ledger.facts.revision = resume.revision;
  const c = ledger.counters;
  c.modelCalls = resume.modelCalls;
  c.retrievals = resume.retrievals;
  c.argumentsReparsed = resume.argumentsReparsed;
  c.bytesTotal = resume.bytesTotal;
  c.bytesPeak = resume.bytesPeak;
  c.modelMs = resume.modelMs;
}

/**
 * The run state snapshots and the outcome are built from.
 *
 * @param ledger The run's ledger.
 * @param briefing What the briefing retired so far, and the report's lines.
 * @returns The state (notes copied: the ledger's go on changing).
 */
export function ledgerState(
  ledger: RunLedger,
  briefing: Pick<SliceState, "archived" | "checkpoints" | "requests">,
): SliceState {
  const c = ledger.counters;
  return {
    steps: ledger.steps,
    modelCalls: c.modelCalls,
    records: ledger.records,
    edits: ledger.facts.edits,
    revision: ledger.facts.revision,
    refusals: ledger.refusals,
    consecutiveRefusals: ledger.consecutiveRefusals,
    retrievals: c.retrievals,
    argumentsReparsed: c.argumentsReparsed,
    bytesTotal: c.bytesTotal,
    bytesPeak: c.bytesPeak,
    modelMs: c.modelMs,
    notes: [...ledger.notes],
    archived: briefing.archived,
    checkpoints: briefing.checkpoints,
    lastTurn: ledger.lastTurn,
    requests: briefing.requests,
  };
}

/** An interrupted step that recorded nothing does not count as taken. */
export function dropUnfinishedStep(ledger: RunLedger): void {
  const last = ledger.records[ledger.records.length - 1];
  if (ledger.steps > 0 && last?.sequence !== ledger.steps) ledger.steps -= 1;
}

/** Where a recorded step goes besides the ledger. */
export interface StepSinks {
  /** The run's briefing: every record becomes an event or a transcript entry. */
  readonly briefing: Briefing;
  readonly trace: SliceTrace;
  readonly results: ResultStore;
  /** Writes the step's progress line. */
  progress(
    step: number,
    phase: StepPhase,
    action: string | null,
    outcome: string,
  ): void;
}

/** The step a record is of. */
export interface StepAt {
  readonly sequence: number;
  readonly action: string;
  readonly args: unknown;
  /** The stage it ended in (a refused selection has no arguments). */
  readonly phase: StepPhase;
}

/**
 * Records a finished step. The step took effect even when the archive
 * cannot hold its event: it stays in the records (outcome, session), the
 * progress and the stop detail.
 *
 * @throws {SliceStoppedError} `capacity` when the archive is full.
 */
export function recordStep(
  ledger: RunLedger,
  sinks: StepSinks,
  step: StepAt,
  report: ExecutionReport,
): void {
  const { sequence, action, args, phase } = step;
  const record: ActionRecord = { sequence, action, arguments: args, report };
  let full: SliceStoppedError | undefined;
  try {
    sinks.briefing.record(record);
  } catch (error) {
    full = capacityStop(error);
    if (full === undefined) throw error;
  }
  ledger.records.push(record);
  if (phase === "arguments") {
    sinks.trace.actionEnded(args, report, sinks.results);
  }
  sinks.progress(sequence, phase, action, describe(report));
  if (full !== undefined) {
    throw stopped(
      "capacity",
      `${full.message}; ${tookEffect(sequence, action, report)}`,
      { cause: full.cause },
    );
  }
}

/**
 * Records a refused step; the model reads why with its next selection.
 *
 * @throws {SliceStoppedError} `capacity` when the archive is full.
 */
export function refuseStep(
  ledger: RunLedger,
  sinks: StepSinks,
  step: StepAt,
  refusal: { readonly code: string; readonly reason: string },
): void {
  ledger.refusals += 1;
  ledger.consecutiveRefusals += 1;
  ledger.notes.push(
    `Step ${step.sequence} (${step.action}) was refused (${refusal.code}): ${refusal.reason}`,
  );
  recordStep(ledger, sinks, step, {
    kind: "refused",
    code: refusal.code,
    reason: refusal.reason,
  });
}
