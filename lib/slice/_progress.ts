/** One-line progress summaries of slice steps. */
import type { ExecutionReport } from "../briefing/report.ts";
import type { StepProgress } from "./request.ts";

/**
 * Formats one progress line: step, phase, action, request bytes, outcome.
 *
 * @param p The step's progress fields.
 * @returns The line.
 */
export function progressLine(p: StepProgress): string {
  return `step ${p.step}/${p.maxSteps} ${p.phase} ${
    p.action ?? "-"
  } request_bytes=${p.request_bytes} calls=${p.model_calls}: ${p.outcome}`;
}

/**
 * Describes an execution report in a few words.
 *
 * @param report The report of a step.
 * @returns E.g. `inspected 2 files`.
 */
export function describe(report: ExecutionReport): string {
  switch (report.kind) {
    case "inspected": {
      const n = report.files.length;
      const missing = report.files.filter((f) => f.missing).length;
      const unread = report.files.filter((f) => f.error !== undefined).length;
      return `inspected ${n} file${n === 1 ? "" : "s"}${
        missing > 0 ? ` (${missing} missing)` : ""
      }${unread > 0 ? ` (${unread} refused)` : ""}`;
    }
    case "edited":
      return `edited ${report.files.length} file${
        report.files.length === 1 ? "" : "s"
      } → ${report.revision}`;
    case "tests_run":
      return `tests exit ${report.exit_code}${
        report.timed_out ? " (timed out)" : ""
      } on ${report.tested_revision ?? "the unedited workspace"}`;
    case "refused":
      return `refused (${report.code})`;
  }
}
