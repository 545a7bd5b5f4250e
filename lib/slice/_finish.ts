/** Finalisation of a slice run: rounding and the context report file. */
import type {
  ContextReport,
  ContextReportBuilder,
  ContextReportTest,
} from "../briefing/context_report.ts";
import type { ActionRecord } from "../briefing/report.ts";
import type { SliceOutcome } from "./outcome.ts";

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

/**
 * Rounds milliseconds to microseconds.
 *
 * @param ms Milliseconds.
 * @returns The rounded value.
 */
export function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
