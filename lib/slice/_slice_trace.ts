/**
 * What the slice loop asks of its telemetry ({@linkcode SliceTrace}), and
 * how a run gets it: the recording trace of `_trace.ts`, loaded only when
 * something can record (`telemetryRegistered`), else a trace that does
 * nothing. So a run without OpenTelemetry loads neither the API nor Loom's
 * span code: telemetry off costs a process nothing at start.
 *
 * @module
 */
import type { ExecutionReport } from "../briefing/report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import type { ModelReply } from "../providers/model_provider.ts";
import type { ResultStore } from "../store/result_store.ts";
import type { StepPhase } from "../reference/lookup_session.ts";
import type { ModelCallSpan } from "../telemetry/gen_ai.ts";
import { telemetryRegistered } from "../telemetry/registered.ts";
import type { TraceStart } from "./_trace.ts";

export type { TraceStart } from "./_trace.ts";

/** The telemetry of one slice run, as the loop calls it. */
export interface SliceTrace {
  /** Runs the slice with the agent span active. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Ends the agent span with how the run stopped. */
  end(stop: string, detail: string, steps: number): void;
  /** Notes a retirement checkpoint the briefing made. */
  checkpoint(checkpoints: number, retired: number): void;
  /** Starts the span of one provider request (none when nothing records). */
  modelCall(step: number, phase: StepPhase): ModelCallSpan | undefined;
  /** Runs a provider request with its span active. */
  within<T>(call: ModelCallSpan | undefined, fn: () => Promise<T>): Promise<T>;
  /** Ends a provider request's span: its reply, or its failure. */
  modelCallEnded(
    call: ModelCallSpan | undefined,
    request: TurnRequest,
    requestBytes: number,
    outcome: { readonly reply: ModelReply } | { readonly error: unknown },
  ): void;
  /** Starts the span of an action whose arguments arrived. */
  actionStarted(action: string, step: number): void;
  /** Ends the action's span with its report. */
  actionEnded(
    args: unknown,
    report: ExecutionReport,
    results: ResultStore,
  ): void;
  /** Ends the action's span with `completed` or a failure. */
  closeAction(failure: unknown, outcome?: string): void;
}

/** The trace of a run nothing records: every method does nothing. */
export const QUIET_TRACE: SliceTrace = Object.freeze({
  run: <T>(fn: () => Promise<T>) => fn(),
  end: () => {},
  checkpoint: () => {},
  modelCall: () => undefined,
  within: <T>(_call: unknown, fn: () => Promise<T>) => fn(),
  modelCallEnded: () => {},
  actionStarted: () => {},
  actionEnded: () => {},
  closeAction: () => {},
});

/**
 * The trace of a run starting now: recording when an OpenTelemetry API
 * global is registered (its span code loaded then), else {@linkcode QUIET_TRACE}.
 *
 * @param start The model spec, policy, workspace, session and checkpoints.
 * @returns The run's trace.
 */
export async function openSliceTrace(start: TraceStart): Promise<SliceTrace> {
  if (!telemetryRegistered()) return QUIET_TRACE;
  const { RecordingSliceTrace } = await import("./_trace.ts");
  return new RecordingSliceTrace(start);
}
