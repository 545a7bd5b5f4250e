/** The internal signal that ends a run's loop with a stop reason. */
import type { StopReason } from "../briefing/context_report.ts";

/** Thrown inside the loop to stop the run; never escapes `runWithOptions`. */
export class SliceStopped extends Error {
  /** The stop reason. */
  readonly stop: StopReason;
  /** Always `slice_stopped`. */
  readonly code = "slice_stopped";

  constructor(stop: StopReason, detail: string, options?: ErrorOptions) {
    super(detail, options);
    this.name = "SliceStopped";
    this.stop = stop;
  }
}
