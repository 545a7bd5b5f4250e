/**
 * The compile figures of docs/performance.md, from interleaved runs in one process (robust
 * on a shared machine): for 1k, 10k and 100k entries, the median time of
 * `render()` of the unchanged context, `render()` after one step was added
 * (a new text to write, the agent loop's case), `toAnthropic()` and the join
 * of the same pieces (tests/bench/_context_fixture.ts), their ratios, and the
 * growth from 10k to 100k. Each sample's collections are part of its cost
 * (interleaving spreads them fairly); a full collection is not forced
 * between samples, because one drops the compiled code of loops over the
 * heap's objects ("embedded weak objects cleared"), and the samples after it
 * would time the compiler rather than the code.
 *
 *   deno run --allow-read --allow-write --allow-env tests/bench/context_figures.ts [rounds] [--min]
 */
import { build } from "./_context_fixture.ts";

const rounds = Number(Deno.args.find((a) => /^\d+$/.test(a)) ?? 15);
const sizes = [1_000, 10_000, 100_000];
const fixtures = sizes.map((n) => ({ n, ...build(n) }));
const keep = { clearVolatile: false } as const;
const times = new Map<string, number[]>();
let sink = 0;
let steps = 0;

function record(key: string, fn: () => number, reps: number): void {
  const start = performance.now();
  for (let i = 0; i < reps; i++) sink += fn();
  const list = times.get(key) ?? [];
  list.push((performance.now() - start) / reps);
  times.set(key, list);
}

/** The median sample, or the fastest with `--min` (noise only adds time). */
const pick = Deno.args.includes("--min") ? "min" : "median";

function median(key: string): number {
  const list = [...times.get(key)!].sort((a, b) => a - b);
  return pick === "min" ? list[0]! : list[list.length >> 1]!;
}

for (let round = 0; round < rounds; round++) {
  for (const { n, ctx, pieces } of fixtures) {
    const reps = Math.max(10, Math.floor(300_000 / n));
    record(`join ${n}`, () => pieces.join("\n\n").length, reps);
    record(`render ${n}`, () => ctx.render(keep).length, reps);
    // The step is volatile: render() clears it again, as in a turn.
    record(`step ${n}`, () => {
      ctx.step.add(`$ step ${steps++}`);
      return ctx.render().length;
    }, reps);
    record(
      `anthropic ${n}`,
      () =>
        ctx.toAnthropic({ ...keep, cacheBreakpoints: ["foundation", "convo"] })
          .messages.length,
      reps,
    );
  }
}

const ms = (x: number) =>
  x < 1 ? `${(x * 1000).toFixed(0)} µs` : `${x.toFixed(2)} ms`;
console.log(`${rounds} interleaved rounds, ${pick} of each (sink ${sink > 0})`);
console.log(
  "| entries | join of the pieces | `render()` | vs join | `render()` after a step | vs join | `toAnthropic()` | vs join |",
);
console.log(
  "| ------: | -----------------: | ---------: | ------: | ----------------------: | ------: | --------------: | ------: |",
);
for (const n of sizes) {
  const j = median(`join ${n}`);
  const cells = [`render ${n}`, `step ${n}`, `anthropic ${n}`].map((key) => {
    const t = median(key);
    return `${ms(t)} | ${(t / j).toFixed(2)}×`;
  });
  console.log(
    `| ${n.toLocaleString("en-US")} | ${ms(j)} | ${cells.join(" | ")} |`,
  );
}
const growth = (key: string) =>
  (median(`${key} 100000`) / median(`${key} 10000`)).toFixed(1);
console.log(
  `100k / 10k: join ${growth("join")}×, render() ${
    growth("render")
  }×, render() after a step ${growth("step")}×, toAnthropic() ${
    growth("anthropic")
  }×`,
);
