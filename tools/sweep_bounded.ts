/**
 * The sweep that chooses the bounded policy's retirement trigger and target
 * by what the whole run costs (docs/cost.md): replays a recording offline
 * under each setting, as `loom cost` does, and prices the bodies the
 * `anthropic:` and `openai:` providers would send at several assumed times
 * between calls — Anthropic's cache entries live 5 minutes from their last
 * use, OpenAI's prompts are evicted after 5 idle minutes — beside the
 * legacy policy's figure on the same run.
 *
 * ```sh
 * deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env tools/sweep_bounded.ts long
 * deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env tools/sweep_bounded.ts longer
 * ```
 */
import type { ContextPolicy } from "../lib/briefing/briefing.ts";
import { DEFAULT_PRICES } from "../lib/cost/prices.ts";
import { replayRecording } from "../lib/cost/replay.ts";
import { type CostReport, priceRun } from "../lib/cost/simulate.ts";
import type { ProviderWire } from "../lib/providers/request_parts.ts";
import type { RunOptions } from "../lib/slice/request.ts";
import { type FixtureName, fixtureReplay } from "../tests/e2e/_workspace.ts";
import { COST_MODELS } from "./measure_long.ts";

/** Assumed times between model calls: brisk, slow, and past the 5m TTL. */
const INTERVALS_MS = [5_000, 60_000, 240_000, 360_000] as const;

const KIB = 1024;
/** Retirement triggers and targets swept (the ceiling stays 64 KiB). */
const TRIGGERS = [32 * KIB, 40 * KIB, 48 * KIB] as const;
const TARGETS = [8 * KIB, 12 * KIB, 16 * KIB, 24 * KIB] as const;

type Limits = NonNullable<RunOptions["briefingLimits"]>;

async function priced(
  name: FixtureName,
  policy: ContextPolicy,
  wire: ProviderWire,
  limits: Limits,
): Promise<{ reports: CostReport[]; checkpoints: number }> {
  const run = await replayRecording({
    ...fixtureReplay(name, 300),
    policy,
    briefingLimits: limits,
    wire,
    model: COST_MODELS[wire],
  });
  if (run.outcome.stop !== "completed") {
    throw new Error(`${name} ${policy}: ${run.outcome.stop}`);
  }
  const reports: CostReport[] = [];
  for (const interval of INTERVALS_MS) {
    reports.push(
      await priceRun(
        run.calls.map((c, i) => ({ ...c, atMs: i * interval })),
        { wire, model: COST_MODELS[wire], prices: DEFAULT_PRICES },
      ),
    );
  }
  return { reports, checkpoints: run.outcome.checkpoints };
}

function cell(report: CostReport | undefined): string {
  const t = report?.total;
  return t === undefined
    ? "–"
    : `$${t.input_dollars.toFixed(2)} (${(t.hit_ratio * 100).toFixed(1)}%)`;
}

if (import.meta.main) {
  const name = (Deno.args[0] ?? "long") as FixtureName;
  const header = INTERVALS_MS.map((ms) => `${ms / 1000} s`);
  console.log(
    `${name}: input $ (cache hit ratio) at ${header.join(" / ")} between calls`,
  );
  console.log(
    `\n| setting | checkpoints | ${
      header.map((h) => `Sonnet ${h}`).join(" | ")
    } | ${header.map((h) => `GPT-4.1 ${h}`).join(" | ")} |`,
  );
  console.log(`|---|---:|${"---:|".repeat(header.length * 2)}`);
  const row = async (
    label: string,
    policy: ContextPolicy,
    limits: Limits,
  ) => {
    const a = await priced(name, policy, "anthropic", limits);
    const o = await priced(name, policy, "openai", limits);
    console.log(
      `| ${label} | ${a.checkpoints} | ${a.reports.map(cell).join(" | ")} | ${
        o.reports.map(cell).join(" | ")
      } |`,
    );
  };
  await row("legacy, batch 32 (default)", "legacy", {});
  for (const trigger of TRIGGERS) {
    for (const target of TARGETS) {
      if (target >= trigger) continue;
      await row(
        `bounded, above ${trigger / KIB} KiB to ${target / KIB} KiB`,
        "bounded",
        { retireAboveBytes: trigger, retireTargetBytes: target },
      );
    }
  }
}
