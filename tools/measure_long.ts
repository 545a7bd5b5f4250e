/**
 * Figures for docs/performance.md and docs/cost.md: replays fixtures/recordings/long.json under both
 * context policies and prints total and peak request bytes, the mean share
 * of prefix-stable bytes, checkpoints, retrievals and wall time per step
 * excluding the model (replay is instant, so this is the loop's own cost:
 * briefing, lookups, expansion, commission, the worker's effects and, in the
 * first variant, the `deno run check.ts` test subprocess).
 *
 * Then the cost tables, of the long recording and of the held-out longer
 * one: the same runs through `anthropic:` and `openai:` —
 * the official SDKs sending real HTTP bodies to a local replay server on
 * 127.0.0.1 — with the captured bodies priced by the cost simulator
 * (lib/cost) at list prices, beside the offline figure `loom cost` computes
 * from the same recording without any server.
 *
 * ```sh
 * deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-net=127.0.0.1 tools/measure_long.ts
 * ```
 */
import { runSlice } from "../lib/slice/run.ts";
import type { ContextReport } from "../lib/briefing/context_report.ts";
import { DEFAULT_PRICES } from "../lib/cost/prices.ts";
import { replayRecording } from "../lib/cost/replay.ts";
import { type CostReport, priceRun } from "../lib/cost/simulate.ts";
import type { ProviderWire } from "../lib/providers/request_parts.ts";
import {
  checkCommand,
  fixtureReplay,
  fixtureSlice,
  INTENTS,
  prepareWorkspace,
  recordingPath,
} from "../tests/e2e/_workspace.ts";
import { replayServer } from "../tests/providers/_replay_server.ts";
import type { ContextPolicy } from "../lib/briefing/briefing.ts";
import { tableHead, tableRow } from "../tests/_kit/measure.ts";

/** The models the cost table prices. */
export const COST_MODELS: Readonly<Record<ProviderWire, string>> = {
  anthropic: "claude-sonnet-4-5",
  openai: "gpt-4.1",
};

/**
 * The long recordings: the project's (157 steps, 319 calls) and the held-out
 * one made to check that figures chosen on the first hold elsewhere (217
 * steps, 436 calls).
 */
export type LongRecording = "long" | "longer";

/** Assumed time between model calls (the simulator's default). */
const CALL_INTERVAL_MS = 5_000;

/**
 * Runs the long recording through a live provider against the replay
 * server and prices the bodies the SDK sent.
 */
export async function costAsSent(
  policy: ContextPolicy,
  wire: ProviderWire,
  name: LongRecording = "long",
): Promise<{ report: CostReport; bodies: string[] }> {
  await using prepared = await prepareWorkspace(name);
  await using server = await replayServer(wire, recordingPath(name));
  const outcome = await runSlice({
    ...fixtureSlice(name, prepared.workspace, 300),
    provider: `${wire}:${COST_MODELS[wire]}`,
  }, {
    contextPolicy: policy,
    baseUrl: server.url,
    env: { ANTHROPIC_API_KEY: "sk-local", OPENAI_API_KEY: "sk-local" },
  });
  if (outcome.stop !== "completed") {
    throw new Error(`${policy}/${wire}: ${outcome.stop}: ${outcome.detail}`);
  }
  const calls = JSON.parse(await Deno.readTextFile(recordingPath(name)))
    .calls as { arguments: unknown }[];
  const report = await priceRun(
    server.bodies.map((body, i) => ({
      body: JSON.parse(body),
      atMs: i * CALL_INTERVAL_MS,
      reply: calls[i]?.arguments,
    })),
    { wire, model: COST_MODELS[wire], prices: DEFAULT_PRICES },
  );
  return { report, bodies: [...server.bodies] };
}

/** The same figure offline, as `loom cost` computes it. */
export async function costOffline(
  policy: ContextPolicy,
  wire: ProviderWire,
  name: LongRecording = "long",
): Promise<CostReport> {
  const run = await replayRecording({
    ...fixtureReplay(name, 300),
    policy,
    wire,
    model: COST_MODELS[wire],
    callIntervalMs: CALL_INTERVAL_MS,
  });
  return await priceRun(run.calls, {
    wire,
    model: COST_MODELS[wire],
    prices: DEFAULT_PRICES,
  });
}

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
  policy: ContextPolicy,
  tests: "deno run check.ts" | "true",
): Promise<Row> {
  await using prepared = await prepareWorkspace("long");
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
}

if (import.meta.main) {
  const rows: Row[] = [];
  for (const tests of ["deno run check.ts", "true"] as const) {
    for (const policy of ["legacy", "bounded"] as const) {
      rows.push(await measure(policy, tests));
    }
  }
  const fmt = (n: number) => n.toLocaleString("en-US");
  console.log(tableHead([
    "policy",
    "test command",
    "steps",
    "model calls",
    "total request bytes",
    "peak request bytes",
    "mean prefix-stable share",
    "checkpoints",
    "retrievals",
    "ms/step excl. model",
  ], 2));
  for (const r of rows) {
    console.log(tableRow([
      r.policy,
      `\`${r.tests}\``,
      r.steps,
      r.calls,
      fmt(r.total),
      fmt(r.peak),
      `${(r.meanShare * 100).toFixed(1)}%`,
      r.checkpoints,
      r.retrievals,
      r.msPerStep.toFixed(2),
    ]));
  }
  const legacy = rows[0]!;
  const bounded = rows[1]!;
  console.log(
    `\nbounded/legacy: total ${
      (bounded.total / legacy.total * 100).toFixed(1)
    }%, peak ${(bounded.peak / legacy.peak * 100).toFixed(1)}%`,
  );
  for (const name of ["long", "longer"] as const) {
    console.log(`\n${name}:\n`);
    console.log(tableHead([
      "provider (model)",
      "policy",
      "requests",
      "input tokens",
      "cache hit ratio",
      "cache writes",
      "input $ as sent",
      "output $",
      "`loom cost` offline",
      "bounded/legacy",
    ], 2));
    for (const wire of ["anthropic", "openai"] as const) {
      let legacy = 0;
      for (const policy of ["legacy", "bounded"] as const) {
        const { report } = await costAsSent(policy, wire, name);
        const offline = await costOffline(policy, wire, name);
        const t = report.total;
        if (policy === "legacy") legacy = t.input_dollars;
        console.log(tableRow([
          `${wire} (${COST_MODELS[wire]})`,
          policy,
          report.requests.length,
          fmt(t.input_tokens),
          `${(t.hit_ratio * 100).toFixed(1)}%`,
          fmt(t.cache_write_tokens),
          `$${t.input_dollars.toFixed(2)}`,
          `$${t.output_dollars.toFixed(2)}`,
          `$${offline.total.input_dollars.toFixed(2)}`,
          policy === "bounded"
            ? `${(t.input_dollars / legacy).toFixed(2)}×`
            : "",
        ]));
      }
    }
  }
}
