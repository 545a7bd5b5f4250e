/**
 * Prints the request-byte figures of a generated 300-step workflow under
 * both policies (the table in docs/performance.md):
 *
 *   deno run --allow-read tests/bench/briefing_figures.ts [steps] [seed]
 */
import { runWorkflow } from "../briefing/_workflow.ts";

const steps = Number(Deno.args[0] ?? 300);
const seed = Number(Deno.args[1] ?? 300);
const rows = [];
for (const policy of ["legacy", "bounded"] as const) {
  const f = await runWorkflow(policy, steps, seed);
  rows.push({ policy, f });
}
const fmt = (n: number) => n.toLocaleString("en-US");
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
console.log(`Generated workflow: ${steps} steps, seed ${seed}`);
console.log(
  "| policy | requests | total request bytes | peak request bytes | checkpoints | mean prefix-stable share | prefix-stable share of all bytes |",
);
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const { policy, f } of rows) {
  console.log(
    `| ${policy} | ${f.report.requests.length} | ${fmt(f.totalBytes)} | ${
      fmt(f.peakBytes)
    } | ${f.report.checkpoints} | ${pct(f.meanStableShare)} | ${
      pct(f.stableShareOfTotal)
    } |`,
  );
}
const [legacy, bounded] = rows;
if (legacy !== undefined && bounded !== undefined) {
  console.log(
    `bounded / legacy total request bytes: ${
      (bounded.f.totalBytes / legacy.f.totalBytes).toFixed(3)
    }`,
  );
}
