/** The internal signal that ends a run's loop with a stop reason. */
import { LoomError, type LoomErrorOptions } from "../errors.ts";
import type { StopReason } from "../briefing/context_report.ts";

/** Thrown inside the loop to stop the run; never escapes `runSlice`. */
export class SliceStoppedError extends LoomError.Error<"SliceStoppedError", {
  /** The stop reason. */
  readonly stop: StopReason;
}> {}

/**
 * The error that stops the run with `stop`.
 *
 * @param stop The stop reason.
 * @param detail What happened, for the report.
 * @param options The underlying error, if any.
 * @returns The error to throw.
 */
export function stopped(
  stop: StopReason,
  detail: string,
  options: LoomErrorOptions = {},
): SliceStoppedError {
  return new SliceStoppedError("slice_stopped", detail, { ...options, stop });
}
