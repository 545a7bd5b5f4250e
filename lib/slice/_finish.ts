/** Finalisation of a slice run: rounding and the context report file. */
import type {
  ContextReport,
  ContextReportBuilder,
} from "../briefing/context_report.ts";
import type { SliceOutcome } from "./outcome.ts";

/**
 * Writes the JSON context report of a finished run.
 *
 * @param path Where to write it.
 * @param builder The report lines of the run.
 * @param outcome How the run ended.
 * @param argumentsReparsed Calls whose `step` argument was parsed from a string.
 */
export async function writeContextReport(
  path: string,
  builder: ContextReportBuilder,
  outcome: SliceOutcome,
  argumentsReparsed: number,
): Promise<void> {
  const report: ContextReport = builder.build(
    { stop: outcome.stop, detail: outcome.detail },
    {
      checkpoints: outcome.checkpoints,
      retrievals: outcome.retrievals,
      argumentsReparsed,
      modelCalls: outcome.model_calls,
      elapsedMs: outcome.elapsed_ms,
    },
  );
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n");
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
