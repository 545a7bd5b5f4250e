/** Finalisation of a slice run: its outcome, rounding and the context report file. */
import type {
  ContextReport,
  ContextReportBuilder,
  ContextReportTest,
} from "../briefing/context_report.ts";
import type { ContextPolicy } from "../briefing/briefing.ts";
import { roundMs, type StopReason } from "../briefing/context_report.ts";
import type { ActionRecord } from "../briefing/report.ts";
import { WorkingState } from "../briefing/working_state.ts";
import type { SliceOutcome } from "./outcome.ts";
import type { SliceState } from "./run_state.ts";

/** What the outcome of a run says besides its state and how it stopped. */
export interface OutcomeFacts {
  readonly policy: ContextPolicy;
  readonly testConfinement: SliceOutcome["test_confinement"];
  /** `slice.complete`'s summary, when the model gave one. */
  readonly summary: string | null;
  /** The run's wall time so far. */
  readonly elapsedMs: number;
  readonly contextReport: string | null;
}

/**
 * How a run ended, from its state: the working state is rebuilt from the
 * records, which also hold a step the archive could not take.
 *
 * @param stop The stop reason.
 * @param detail What happened.
 * @param s The run state.
 * @param facts Policy, confinement, summary, time and report path.
 * @returns The outcome.
 */
export function sliceOutcome(
  stop: StopReason,
  detail: string,
  s: SliceState,
  facts: OutcomeFacts,
): SliceOutcome {
  const state = WorkingState.from(s.records);
  return {
    stop,
    // Said where every reader looks: summary, JSON and context report.
    detail: facts.testConfinement === "unconfined"
      ? `${detail}; the tests ran UNCONFINED (--unconfined-tests)`
      : detail,
    completed: stop === "completed",
    steps: s.steps,
    // Every call made, failed ones included: each added a report line.
    model_calls: s.requests.length,
    revision: s.revision,
    latest_test: state.latest_test,
    tests_validate_latest_revision: state.tests_validate_latest_revision,
    test_confinement: facts.testConfinement,
    refusals: s.refusals,
    policy: facts.policy,
    checkpoints: s.checkpoints,
    retrievals: s.retrievals,
    request_bytes: { total: s.bytesTotal, peak: s.bytesPeak },
    elapsed_ms: roundMs(facts.elapsedMs),
    model_ms: roundMs(s.modelMs),
    summary: stop === "completed" ? facts.summary : null,
    context_report: facts.contextReport,
  };
}

/** What the report of a finished run takes besides its lines and outcome. */
export interface FinishedRun {
  /** Calls whose `step` argument was parsed from a string. */
  readonly argumentsReparsed: number;
  /** Every action record of the run (a resumed run's earlier ones included). */
  readonly records: readonly ActionRecord[];
  /** The model spec of the run. */
  readonly model: string;
}

/**
 * Writes the JSON context report of a finished run.
 *
 * @param path Where to write it.
 * @param builder The report lines of the run.
 * @param outcome How the run ended.
 * @param run The records, the model and the reparsed-arguments count.
 */
export async function writeContextReport(
  path: string,
  builder: ContextReportBuilder,
  outcome: SliceOutcome,
  run: FinishedRun,
): Promise<void> {
  const report: ContextReport = builder.build(
    { stop: outcome.stop, detail: outcome.detail },
    {
      checkpoints: outcome.checkpoints,
      retrievals: outcome.retrievals,
      argumentsReparsed: run.argumentsReparsed,
      modelCalls: outcome.model_calls,
      elapsedMs: outcome.elapsed_ms,
      model: run.model,
      steps: outcome.steps,
      revision: outcome.revision,
      testsValidateLatestRevision: outcome.tests_validate_latest_revision,
      tests: testRuns(run.records),
    },
  );
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n");
}

/** The test runs among a run's records: step, exit and revision. */
function testRuns(records: readonly ActionRecord[]): ContextReportTest[] {
  const runs: ContextReportTest[] = [];
  for (const record of records) {
    const report = record.report;
    if (report.kind !== "tests_run") continue;
    runs.push({
      step: record.sequence,
      exit_code: report.exit_code,
      timed_out: report.timed_out,
      revision: report.tested_revision,
    });
  }
  return runs;
}
