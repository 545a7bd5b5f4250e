/**
 * Compile time of the section compiler against context size: 1k, 10k and
 * 100k entries spread over all six sections of a root context and four
 * included visitors (two of them nested), with a mix of roles, names and
 * duplicates. Each group's baseline is the floor for the same output:
 * `Array.join` of the very pieces `render()` joins (entry texts with their
 * `# NAME` headers, banners and visitor labels glued on, in compile order;
 * the fixture checks that this join equals `render()`). The "by size"
 * groups use the 10k compile as baseline, so the ratios show the growth
 * directly (linear: 0.1× and 10×).
 *
 * Run: deno bench --allow-read --allow-write --allow-env --unstable-worker-options tests/bench/context_bench.ts
 */
import { build, type Fixture } from "./_context_fixture.ts";

const SIZES = [1_000, 10_000, 100_000] as const;

const fixtures = new Map<number, Fixture>(SIZES.map((n) => [n, build(n)]));
const keep = { clearVolatile: false } as const;
const breakpoints = ["foundation", "topic", "convo"] as const;

// Each compile against the join of its pieces, one group per size.
for (const n of SIZES) {
  const { ctx, pieces } = fixtures.get(n)!;
  const label = n.toLocaleString("en-US");
  const compiles = [
    ["render", () => void ctx.render(keep)],
    [
      "toAnthropic",
      () => void ctx.toAnthropic({ ...keep, cacheBreakpoints: breakpoints }),
    ],
  ] as const;
  for (const [compile, fn] of compiles) {
    const group = `${compile} ${label}`;
    Deno.bench({
      name: `Array.join of the ${label}-entry pieces`,
      group,
      baseline: true,
      fn: () => void pieces.join("\n\n"),
    });
    Deno.bench({ name: `${compile}() of ${label} entries`, group, fn });
  }
}
for (const n of SIZES) {
  const { ctx, pieces } = fixtures.get(n)!;
  const label = n.toLocaleString("en-US");
  Deno.bench({
    name: `render() of ${label} entries`,
    group: "render by size",
    baseline: n === 10_000,
    fn: () => void ctx.render(keep),
  });
  Deno.bench({
    name: `Array.join of the ${label}-entry pieces`,
    group: "join by size",
    baseline: n === 10_000,
    fn: () => void pieces.join("\n\n"),
  });
  Deno.bench({
    name: `toAnthropic() of ${label} entries`,
    group: "toAnthropic by size",
    baseline: n === 10_000,
    fn: () => void ctx.toAnthropic({ ...keep, cacheBreakpoints: breakpoints }),
  });
}
