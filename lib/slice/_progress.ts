/** One-line progress summaries of slice steps. */
import type { ExecutionReport } from "../briefing/report.ts";
import { displayText, formatDuration } from "../display.ts";
import { DEFAULT_MODEL_TIMEOUT_MS } from "../providers/create_provider.ts";
import { roundMs } from "../briefing/context_report.ts";
import type { RunOptions, SliceRequest, StepProgress } from "./request.ts";
import type { StepPhase } from "../reference/lookup_session.ts";

/**
 * Formats one progress line: step, phase, action, request bytes, outcome.
 *
 * @param p The step's progress fields.
 * @returns The line.
 */
export function progressLine(p: StepProgress): string {
  return `step ${p.step}/${p.maxSteps} ${p.phase} ${
    p.action === null ? "-" : displayText(p.action, 64)
  } request_bytes=${p.request_bytes} calls=${p.model_calls}: ${
    displayText(p.outcome)
  }`;
}

/**
 * The notice while a model call takes long: step, phase, time waited and
 * the model timeout.
 *
 * @returns E.g. `step 3/40 selection: waiting for the model for 10 s (model timeout 2 min)`.
 */
export function waitingLine(w: {
  readonly step: number;
  readonly maxSteps: number;
  readonly phase: StepPhase;
  readonly elapsedMs: number;
  /** The model timeout, when the run knows it (it created the provider). */
  readonly timeoutMs: number | undefined;
}): string {
  const waited = w.elapsedMs >= 1000
    ? Math.floor(w.elapsedMs / 1000) * 1000
    : w.elapsedMs;
  return `step ${w.step}/${w.maxSteps} ${w.phase}: waiting for the model for ${
    formatDuration(waited)
  }${
    w.timeoutMs === undefined
      ? ""
      : ` (model timeout ${formatDuration(w.timeoutMs)})`
  }`;
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

/**
 * A step's effect for a stop detail.
 *
 * @returns E.g. `step 7 (tests.run) took effect: tests exit 0 on …`.
 */
export function tookEffect(
  sequence: number,
  action: string,
  report: ExecutionReport,
): string {
  return report.kind === "refused"
    ? `step ${sequence} (${action}) was ${describe(report)}`
    : `step ${sequence} (${action}) took effect: ${describe(report)}`;
}

/**
 * The run's waiting notice for the stages (the embedder's `onWaiting`, told
 * the line and its fields), or `undefined` when nobody listens.
 *
 * @param request The slice request (its step budget and provider).
 * @param options The run options (`onWaiting`, the model timeout).
 * @param step The step being taken now.
 * @returns What a stage calls while a model call is in flight.
 */
export function waitingNotice(
  request: SliceRequest,
  options: RunOptions,
  step: () => number,
): ((phase: StepPhase, elapsedMs: number) => void) | undefined {
  const onWaiting = options.onWaiting;
  if (onWaiting === undefined) return undefined;
  // The run knows the timeout only of a provider it created from a spec.
  const timeoutMs = typeof request.provider === "string"
    ? options.modelTimeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS
    : options.modelTimeoutMs;
  return (phase, elapsedMs) =>
    onWaiting(
      waitingLine({
        step: step(),
        maxSteps: request.maxSteps,
        phase,
        elapsedMs,
        timeoutMs,
      }),
      { step: step(), phase, elapsed_ms: roundMs(elapsedMs) },
    );
}
