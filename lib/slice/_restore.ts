/**
 * Restoration of a stopped run's context: results with their ids, the
 * briefing and the report lines.
 *
 * @module
 */
import type { Briefing } from "../briefing/briefing.ts";
import type {
  ContextReportBuilder,
  RequestPart,
} from "../briefing/context_report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import { LookupSession } from "../reference/lookup_session.ts";
import type { ResultStore, StoredResult } from "../store/result_store.ts";
import { ResumedResultStore } from "./_resumed_store.ts";
import { capacityStop } from "./_stages.ts";
import { stepTool } from "./_tools.ts";
import type { LastTurn, SliceResume } from "./run_state.ts";

/** What restoration writes into. */
export interface RestoreContext {
  /** The briefing of the continued run. */
  readonly briefing: Briefing;
  /** The result store of the continued run. */
  readonly results: ResultStore;
  /** The context report of the continued run. */
  readonly report: ContextReportBuilder;
  /** Whether the context policy is `bounded`. */
  readonly bounded: boolean;
  /** The provider's body parts of a request, for prefix figures. */
  readonly parts?: (request: TurnRequest) => readonly RequestPart[];
}

/**
 * Restores results with their ids, the briefing (records, retired events,
 * checkpoints) and the report lines of a stopped run, with the last request
 * rebuilt so prefix measurement carries on.
 *
 * @param resume The state of the stopped run.
 * @param ctx The briefing, store and report to restore into.
 */
export async function restoreContext(
  resume: SliceResume,
  ctx: RestoreContext,
): Promise<void> {
  const { briefing } = ctx;
  const stale = new Map((resume.unavailable ?? []).map((u) => [u.id, u]));
  const results = [
    ...resume.results,
    ...[...stale.values()].map((u) => ({ id: u.id }) as StoredResult),
  ].sort((a, b) => idOf(a) - idOf(b));
  const last = resume.lastTurn;
  const records = resume.records;
  // Records made after the last request (normally the last step's own).
  const after = last === null
    ? []
    : records.filter((r) => r.sequence >= last.sequence);
  const before = records.slice(0, records.length - after.length);
  const boundary = last?.results ?? Infinity;
  const store = ctx.results;
  const restoreResults = (keep: (r: StoredResult) => boolean) => {
    for (const r of results) {
      if (!keep(r)) continue;
      const u = stale.get(r.id);
      if (u === undefined) store.restore(r);
      else if (store instanceof ResumedResultStore) {
        store.restoreUnavailable(u);
      }
    }
  };
  restoreResults((r) => idOf(r) <= boundary);
  let previous: TurnRequest | undefined;
  try {
    if (last === null) {
      briefing.restore(records, {
        archived: resume.archived,
        checkpoints: resume.checkpoints,
      });
    } else {
      briefing.restore(before, {
        archived: resume.archived - last.retired,
        checkpoints: resume.checkpoints - (last.retired > 0 ? 1 : 0),
      });
      previous = await rebuild(last, ctx);
      for (const record of after) briefing.record(record);
    }
  } catch (error) {
    throw capacityStop(error) ?? error;
  }
  restoreResults((r) => idOf(r) > boundary);
  ctx.report.restore(
    resume.requests,
    previous === undefined ? undefined : ctx.parts?.(previous) ?? previous,
  );
}

/** Rebuilds the last request of a stopped run (lookups answered again). */
async function rebuild(
  last: LastTurn,
  ctx: RestoreContext,
): Promise<TurnRequest> {
  const { briefing, bounded } = ctx;
  const tool = stepTool(bounded);
  const lookups = new LookupSession({
    results: ctx.results,
    ...(briefing.history === undefined ? {} : { history: briefing.history }),
    stage: last.phase,
  });
  const answers: unknown[] = [];
  for (const lookup of last.lookups) {
    try {
      answers.push(await lookups.answer(lookup));
    } catch {
      break;
    }
  }
  return briefing.request({
    phase: last.phase,
    tool,
    candidates: last.candidates,
    lookupAnswers: answers,
    notes: last.notes,
  });
}

function idOf(result: StoredResult): number {
  return Number(result.id.slice("result-".length));
}
