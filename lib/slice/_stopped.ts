/** The internal signal that ends a run's loop with a stop reason. */
import { brand, causeOf, type LoomErrorOptions } from "../errors.ts";
import type { StopReason } from "../briefing/context_report.ts";

/** Thrown inside the loop to stop the run; never escapes `runSlice`. */
export class SliceStoppedError extends Error {
  /** The stop reason. */
  readonly stop: StopReason;
  /** Always `slice_stopped`. */
  readonly code: "slice_stopped";

  constructor(
    code: "slice_stopped",
    message: string,
    options: LoomErrorOptions & { readonly stop: StopReason },
  ) {
    super(message, causeOf(options));
    this.code = brand(this, "SliceStoppedError", code);
    this.stop = options.stop;
  }
}

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
