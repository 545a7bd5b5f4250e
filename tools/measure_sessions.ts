/**
 * The session scaling table of docs/sessions.md: per-step persistence overhead at
 * about 150, 600 and 1,200 steps. For each length it generates a
 * `loom-recording/1` file (a cycle of repository.inspect, tests.run and a
 * refused selection, so results stay under the store's limit), replays it
 * on a temp workspace under the bounded policy twice — without a session
 * and with one — and prints, per step: the time spent in the session's
 * save (appending and flushing the journal record, writing result files), the same over the last tenth of the run (it must not grow with
 * the length), and the loop's own time excluding the model in both runs.
 *
 * ```sh
 * deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env tools/measure_sessions.ts
 * ```
 */
import { runSlice } from "../lib/slice/run.ts";
import { tempWorkspace } from "../lib/testing/temp_workspace.ts";
import { SessionStore } from "../lib/persist/session_store.ts";
import { sliceSessionHooks } from "../lib/persist/slice_session.ts";
import { sessionHookParts, sessionHooks } from "../lib/slice/run_state.ts";
import { tableHead, tableRow } from "../tests/_kit/measure.ts";

const LENGTHS = [150, 600, 1_200];

/** The recorded calls of `steps` steps. */
function recording(steps: number): unknown {
  const calls: unknown[] = [];
  const call = (phase: string, args: unknown) =>
    calls.push({
      phase,
      tool: phase === "selection" ? "select_action" : "action_arguments",
      arguments: args,
    });
  for (let step = 0; step < steps; step += 1) {
    switch (step % 3) {
      case 0:
        call("selection", { action: "repository.inspect" });
        call("arguments", { paths: [`src/f${step % 7}.ts`] });
        break;
      case 1:
        call("selection", { action: "tests.run" });
        call("arguments", {});
        break;
      default:
        call("selection", { action: "no.such_action" });
    }
  }
  return { format: "loom-recording/1", calls };
}

interface Row {
  steps: number;
  saveMs: number;
  lastTenthSaveMs: number;
  loopMsWithout: number;
  loopMsWith: number;
  journalBytes: number;
}

async function measure(steps: number): Promise<Row> {
  await using temp = await tempWorkspace();
  const base = temp.path;
  const workspace = `${base}/ws`;
  await Deno.mkdir(`${workspace}/src`, { recursive: true });
  for (let i = 0; i < 7; i += 1) {
    await Deno.writeTextFile(
      `${workspace}/src/f${i}.ts`,
      `export const F${i} = ${i};\n`.repeat(20),
    );
  }
  const path = `${base}/recording.json`;
  await Deno.writeTextFile(path, JSON.stringify(recording(steps)));
  const request = {
    intent: "Measure sessions",
    workspace,
    test: { command: ["true"], timeoutMs: 60_000 },
    maxSteps: steps,
    provider: `recorded:${path}`,
  };
  const loop = (o: { elapsed_ms: number; model_ms: number; steps: number }) =>
    (o.elapsed_ms - o.model_ms) / o.steps;
  const without = await runSlice(request, { contextPolicy: "bounded" });
  const store = await SessionStore.create(`${base}/session`, {
    workspace,
    keyFile: `${base}/key/session.key`,
    run: {
      intent: request.intent,
      policy: "bounded",
      model: request.provider,
      test: request.test,
      maxSteps: steps,
    },
  });
  const inner = sessionHookParts(sliceSessionHooks(store));
  const times: number[] = [];
  const session = sessionHooks({
    ...inner,
    onSnapshot: async (snapshot) => {
      const started = performance.now();
      await inner.onSnapshot(snapshot);
      times.push(performance.now() - started);
    },
  });
  const with_ = await runSlice(request, {
    contextPolicy: "bounded",
    session,
  });
  await store.close();
  if (with_.steps !== steps || without.steps !== steps) {
    throw new Error(
      `${steps}: the runs took ${without.steps}/${with_.steps}`,
    );
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    steps,
    saveMs: mean(times),
    lastTenthSaveMs: mean(times.slice(-Math.ceil(times.length / 10))),
    loopMsWithout: loop(without),
    loopMsWith: loop(with_),
    journalBytes: (await Deno.stat(`${base}/session/journal.jsonl`)).size,
  };
}

if (import.meta.main) {
  const rows: Row[] = [];
  for (const steps of LENGTHS) rows.push(await measure(steps));
  console.log(tableHead([
    "steps",
    "save ms/step",
    "same, last tenth",
    "ms/step excl. model, no session",
    "with session",
    "journal bytes",
  ]));
  for (const r of rows) {
    console.log(tableRow([
      r.steps,
      r.saveMs.toFixed(2),
      r.lastTenthSaveMs.toFixed(2),
      r.loopMsWithout.toFixed(2),
      r.loopMsWith.toFixed(2),
      r.journalBytes.toLocaleString("en-US"),
    ]));
  }
  const first = rows[0]!;
  const last = rows.at(-1)!;
  console.log(
    `\nsave ms/step at ${last.steps} steps / at ${first.steps} steps: ${
      (last.saveMs / first.saveMs).toFixed(2)
    }x (target ≤ 1.5x)`,
  );
}
