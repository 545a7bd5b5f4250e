/**
 * Figures for the README: replays fixtures/recordings/long.json under both
 * context policies and prints total and peak request bytes, the mean share
 * of prefix-stable bytes, checkpoints, retrievals and wall time per step
 * excluding the model (replay is instant, so this is the loop's own cost:
 * briefing, lookups, expansion, commission, the worker's effects and, in the
 * first variant, the `deno run check.ts` test subprocess).
 *
 * ```sh
 * deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env tools/measure_long.ts
 * ```
 */
import { runSlice } from "../lib/slice/run.ts";
import type { ContextReport } from "../lib/briefing/context_report.ts";
import {
  checkCommand,
  INTENTS,
  prepareWorkspace,
  recordingPath,
} from "../tests/e2e/_workspace.ts";

interface Row {
  policy: string;
  tests: string;
  steps: number;
  calls: number;
  total: number;
  peak: number;
  meanShare: number;
  checkpoints: number;
  retrievals: number;
  msPerStep: number;
}

async function measure(
  policy: "legacy" | "bounded",
  tests: "deno run check.ts" | "true",
): Promise<Row> {
  const prepared = await prepareWorkspace("long");
  try {
    const report = `${prepared.root}/report.json`;
    const outcome = await runSlice({
      intent: INTENTS.long,
      workspace: prepared.workspace,
      test: {
        command: tests === "true" ? ["true"] : checkCommand(),
        timeoutMs: 60_000,
      },
      maxSteps: 200,
      provider: `recorded:${recordingPath("long")}`,
    }, { contextPolicy: policy, contextReport: report });
    if (outcome.stop !== "completed") {
      throw new Error(`${policy}: ${outcome.stop}: ${outcome.detail}`);
    }
    const json: ContextReport = JSON.parse(await Deno.readTextFile(report));
    const later = json.requests.slice(1);
    return {
      policy,
      tests,
      steps: outcome.steps,
      calls: outcome.model_calls,
      total: json.requests.reduce((s, r) => s + r.request_bytes, 0),
      peak: Math.max(...json.requests.map((r) => r.request_bytes)),
      meanShare: later.reduce(
        (s, r) => s + r.prefix_stable_bytes / r.request_bytes,
        0,
      ) / later.length,
      checkpoints: json.checkpoints,
      retrievals: json.retrievals,
      msPerStep: (outcome.elapsed_ms - outcome.model_ms) / outcome.steps,
    };
  } finally {
    await prepared.cleanup();
  }
}

if (import.meta.main) {
  const rows: Row[] = [];
  for (const tests of ["deno run check.ts", "true"] as const) {
    for (const policy of ["legacy", "bounded"] as const) {
      rows.push(await measure(policy, tests));
    }
  }
  const fmt = (n: number) => n.toLocaleString("en-US");
  console.log(
    "| policy | test command | steps | model calls | total request bytes | peak request bytes | mean prefix-stable share | checkpoints | retrievals | ms/step excl. model |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.policy} | \`${r.tests}\` | ${r.steps} | ${r.calls} | ${
        fmt(r.total)
      } | ${fmt(r.peak)} | ${
        (r.meanShare * 100).toFixed(1)
      }% | ${r.checkpoints} | ${r.retrievals} | ${r.msPerStep.toFixed(2)} |`,
    );
  }
  const legacy = rows[0]!;
  const bounded = rows[1]!;
  console.log(
    `\nbounded/legacy: total ${
      (bounded.total / legacy.total * 100).toFixed(1)
    }%, peak ${(bounded.peak / legacy.peak * 100).toFixed(1)}%`,
  );
}
