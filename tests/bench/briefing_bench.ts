/**
 * Per-turn briefing build time against archive size. The cost of a turn
 * depends on the retained tail, not on the history length:
 *
 * - "by archive size": the same 10-event tail with 10, 1,000 and 4,000
 *   archived events (the earlier ones in the archive the briefing starts
 *   from); must stay within 1.5× of the 10-event baseline.
 * - "steady state": 100, 1,000 and 4,000 steps recorded one by one, so the
 *   tail sits at its natural 57–64 events after retirement.
 */
import { EventArchive } from "../../lib/briefing/event_archive.ts";
import { toEvent } from "../../lib/briefing/event.ts";
import type { ActionRecord } from "../../lib/briefing/report.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { rng } from "../_factories.ts";
import {
  briefingOf,
  pickKind,
  SELECT_TURN,
  step,
  StreamState,
} from "../briefing/_stream.ts";

async function records(
  count: number,
  seed: number,
  store: ResultStore,
): Promise<ActionRecord[]> {
  const random = rng(seed);
  const state = new StreamState();
  const out: ActionRecord[] = [];
  // Inspections and test runs only, so records stay small and uniform.
  for (let i = 0; i < count; i++) {
    const kind = pickKind(random);
    out.push(
      await step(kind === "large_inspect" ? "small_inspect" : kind, state, {
        store,
        random,
      }),
    );
  }
  return out;
}

for (const archived of [10, 1_000, 4_000]) {
  const store = new ResultStore();
  const all = await records(archived, 42, store);
  const archive = new EventArchive();
  for (const record of all.slice(0, -10)) archive.append(toEvent(record));
  const briefing = briefingOf({ results: store, archive });
  for (const record of all.slice(-10)) briefing.record(record);
  briefing.request(SELECT_TURN);
  Deno.bench({
    name: `bounded turn, 10-event tail, ${
      archived.toLocaleString("en-US")
    } archived events`,
    group: "by archive size",
    baseline: archived === 10,
    fn() {
      briefing.request(SELECT_TURN);
    },
  });
}

for (const steps of [100, 1_000, 4_000]) {
  const store = new ResultStore();
  const all = await records(steps, 7, store);
  const briefing = briefingOf({ results: store });
  for (const record of all) {
    briefing.record(record);
    briefing.request(SELECT_TURN);
  }
  Deno.bench({
    name: `bounded turn after ${
      steps.toLocaleString("en-US")
    } recorded steps (tail ${briefing.retainedCount})`,
    group: "steady state",
    baseline: steps === 100,
    fn() {
      briefing.request(SELECT_TURN);
    },
  });
}
