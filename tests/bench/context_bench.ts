/**
 * Compile time of the section compiler against context size: 1k, 10k and
 * 100k entries spread over all six sections of a root context and four
 * included visitors (two of them nested), with a mix of roles, names and
 * duplicates. Each group's baseline is the runtime primitive for the same
 * output size: `Array.prototype.join` over the entries' texts. The
 * "by size" groups use the 1k compile as baseline, so the ratios show the
 * growth directly (linear: about 10× and 100×).
 *
 * Run: deno bench --allow-read --allow-write --allow-env --unstable-worker-options tests/bench/context_bench.ts
 */
import { SECTION_NAMES } from "../../lib/context/section.ts";
import { Context, IdPool, type Role, StringEntry } from "../../mod.ts";

const SIZES = [1_000, 10_000, 100_000] as const;
const ids = new IdPool({ length: 5, seed: 1 });

interface Fixture {
  readonly ctx: Context;
  readonly texts: string[];
}

function build(count: number): Fixture {
  const root = new Context("root", { ids });
  const visitors = [1, 2, 3, 4].map((i) =>
    new Context(`visitor-${i}`, { ids })
  );
  root.include(visitors[0]!);
  root.include(visitors[1]!);
  visitors[0]!.include(visitors[2]!);
  visitors[1]!.include(visitors[3]!);
  const owners = [root, ...visitors];
  const roles: Role[] = ["system", "system", "system", "user", "assistant"];
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    // Every 20th entry repeats an earlier text, so dedup has work to do.
    const text = i % 20 === 19
      ? texts[i - 7]!
      : `Entry ${i}: the quick brown fox jumps over the lazy dog ${i * 7919}.`;
    texts.push(text);
    const section = SECTION_NAMES[i % SECTION_NAMES.length]!;
    const owner = section === "step" ? root : owners[i % owners.length]!;
    owner[section].add(
      new StringEntry(text, {
        ids,
        role: roles[i % roles.length]!,
        ...(i % 10 === 0 ? { name: `note-${i}` } : {}),
      }),
    );
  }
  return { ctx: root, texts };
}

const fixtures = new Map<number, Fixture>(SIZES.map((n) => [n, build(n)]));
const keep = { clearVolatile: false } as const;
const breakpoints = ["foundation", "topic", "convo"] as const;

for (const n of SIZES) {
  const { ctx, texts } = fixtures.get(n)!;
  const label = n.toLocaleString("en-US");
  Deno.bench({
    name: `Array.join of ${label} texts`,
    group: `render ${label}`,
    baseline: true,
    fn: () => void texts.join("\n\n"),
  });
  Deno.bench({
    name: `render() of ${label} entries`,
    group: `render ${label}`,
    fn: () => void ctx.render(keep),
  });
  Deno.bench({
    name: `Array.join of ${label} texts`,
    group: `toAnthropic ${label}`,
    baseline: true,
    fn: () => void texts.join("\n\n"),
  });
  Deno.bench({
    name: `toAnthropic() of ${label} entries`,
    group: `toAnthropic ${label}`,
    fn: () => void ctx.toAnthropic({ ...keep, cacheBreakpoints: breakpoints }),
  });
  Deno.bench({
    name: `render() of ${label} entries`,
    group: "render by size",
    baseline: n === 1_000,
    fn: () => void ctx.render(keep),
  });
  Deno.bench({
    name: `toAnthropic() of ${label} entries`,
    group: "toAnthropic by size",
    baseline: n === 1_000,
    fn: () => void ctx.toAnthropic({ ...keep, cacheBreakpoints: breakpoints }),
  });
}
