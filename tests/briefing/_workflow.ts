/**
 * A generated workflow driven through a briefing the way the slice drives
 * it (selection, optional lookups, arguments, record), measured with the
 * real ContextReportBuilder. Used by the figures script and the bench.
 */
import type { ContextPolicy } from "../../lib/briefing/briefing.ts";
import {
  type ContextReport,
  ContextReportBuilder,
} from "../../lib/briefing/context_report.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { rng } from "../_factories.ts";
import {
  argumentsTurn,
  briefingOf,
  lookupSessionOf,
  pickKind,
  SELECT_TURN,
  step,
  StreamState,
} from "./_stream.ts";

/** Totals of one workflow run. */
export interface WorkflowFigures {
  /** The context report of the run. */
  readonly report: ContextReport;
  /** Sum of request bytes. */
  readonly totalBytes: number;
  /** Largest request. */
  readonly peakBytes: number;
  /** Mean over requests of prefix_stable_bytes / request_bytes. */
  readonly meanStableShare: number;
  /** Sum of prefix-stable bytes over sum of request bytes. */
  readonly stableShareOfTotal: number;
}

/**
 * Runs a seeded workflow of `steps` steps under a policy.
 *
 * @param policy The context policy.
 * @param steps Number of steps.
 * @param seed PRNG seed (same seed, same workflow under both policies).
 * @returns Figures and the context report.
 */
export async function runWorkflow(
  policy: ContextPolicy,
  steps: number,
  seed: number,
): Promise<WorkflowFigures> {
  const random = rng(seed);
  const lookups = rng(seed + 1);
  const store = new ResultStore();
  const briefing = briefingOf({ policy, results: store });
  const builder = new ContextReportBuilder(policy);
  const state = new StreamState();
  let retrievals = 0;
  for (let i = 0; i < steps; i++) {
    const kind = pickKind(random);
    const session = lookupSessionOf(briefing, store, "selection");
    const answers: unknown[] = [];
    builder.addRequest(briefing.request(SELECT_TURN), { phase: "selection" });
    // One draw per step from a separate PRNG, so both policies see the
    // same steps and the same lookup turns.
    const draw = lookups();
    if (draw < 0.1) {
      const answer = await session.answer(
        briefing.history !== undefined && draw < 0.05
          ? { $list_history: 0 }
          : { $list_results: 0 },
      );
      answers.push(answer);
      if (!("lookup_failed" in answer)) retrievals += 1;
      builder.addRequest(
        briefing.request({ ...SELECT_TURN, lookupAnswers: answers }),
        { phase: "selection" },
      );
    }
    const record = await step(kind, state, { store, random });
    builder.addRequest(briefing.request(argumentsTurn(record.action)), {
      phase: "arguments",
    });
    briefing.record(record);
  }
  const report = builder.build({
    stop: "step_budget",
    detail: `Generated workflow of ${steps} steps`,
  }, {
    checkpoints: briefing.checkpoints,
    retrievals,
  });
  let total = 0;
  let stable = 0;
  let peak = 0;
  let share = 0;
  for (const r of report.requests) {
    total += r.request_bytes;
    stable += r.prefix_stable_bytes;
    peak = Math.max(peak, r.request_bytes);
    share += r.prefix_stable_bytes / r.request_bytes;
  }
  return {
    report,
    totalBytes: total,
    peakBytes: peak,
    meanStableShare: share / report.requests.length,
    stableShareOfTotal: stable / total,
  };
}
