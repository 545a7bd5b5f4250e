/** Anthropic's cache rules on hand-computed cases. */
import assert from "node:assert/strict";
import {
  type CacheBlock,
  prefixKeys,
  simulateAnthropicCache,
} from "../../lib/cost/anthropic_cache.ts";

/** Blocks of `tokens` each, keys chained from `texts`, breakpoints at `marks`. */
function blocks(
  texts: string[],
  tokens: number[],
  marks: Record<number, "5m" | "1h">,
): CacheBlock[] {
  return prefixKeys(texts).map((key, i) => {
    const mark = marks[i];
    return mark === undefined
      ? { key, tokens: tokens[i]! }
      : { key, tokens: tokens[i]!, breakpoint: mark };
  });
}

/** The simulation of requests sent at these times (ms) with these blocks. */
function simulate(
  requests: [atMs: number, blocks: CacheBlock[]][],
  minimum = 1024,
) {
  return simulateAnthropicCache(
    requests.map(([atMs, blocks]) => ({ atMs, blocks })),
    minimum,
  );
}

/**
 * The first `count` blocks of a chain: a 2,000-token tools block, then
 * 10-token entries e0, e1, …, with breakpoints at `marks`.
 */
function chain(count: number, marks: Record<number, "5m" | "1h">) {
  const head = ["tools", ...Array.from({ length: 30 }, (_, i) => `e${i}`)];
  const tokens = head.map((_, i) => (i === 0 ? 2000 : 10));
  return blocks(head.slice(0, count), tokens.slice(0, count), marks);
}

Deno.test("a repeated prefix is read from the cache and the new tail is written", () => {
  const first = blocks(["tools", "system", "e1"], [1000, 200, 50], {
    2: "5m",
  });
  const second = blocks(
    ["tools", "system", "e1", "e2", "step"],
    [1000, 200, 50, 30, 10],
    { 3: "5m" },
  );
  const [a, b] = simulate([[0, first], [10_000, second]]);
  assert.deepEqual(a, {
    inputTokens: 1250,
    cacheReadTokens: 0,
    cacheWrite5mTokens: 1250,
    cacheWrite1hTokens: 0,
    uncachedTokens: 0,
  });
  // Read up to e1 (1,250), write e2 (30), the step stays uncached (10).
  assert.deepEqual(b, {
    inputTokens: 1290,
    cacheReadTokens: 1250,
    cacheWrite5mTokens: 30,
    cacheWrite1hTokens: 0,
    uncachedTokens: 10,
  });
});

Deno.test("an entry more than 20 blocks before the breakpoint is missed", () => {
  const first = chain(5, { 4: "5m" });
  // 21 blocks later: block 4 is outside the lookback of block 25.
  const far = chain(26, { 25: "5m" });
  const near = chain(25, { 24: "5m" });
  const [, missed] = simulate([[0, first], [1000, far]]);
  assert.equal(missed?.cacheReadTokens, 0);
  assert.equal(missed?.cacheWrite5mTokens, 2250);
  const [, hit] = simulate([[0, first], [1000, near]]);
  // Exactly 20 blocks back still hits: 2,000 + 4 × 10.
  assert.equal(hit?.cacheReadTokens, 2040);
  assert.equal(hit?.cacheWrite5mTokens, 200);
});

Deno.test("a second breakpoint keeps a far entry reachable", () => {
  const first = chain(5, { 4: "5m" });
  const far = chain(26, { 4: "5m", 25: "5m" });
  const [, b] = simulate([[0, first], [1000, far]]);
  assert.equal(b?.cacheReadTokens, 2040);
  assert.equal(b?.cacheWrite5mTokens, 210);
});

Deno.test("an entry expires 5 minutes after its last use, 1h entries later", () => {
  const prompt = blocks(["tools", "e1"], [1500, 100], { 1: "5m" });
  // The third request comes 5 minutes and 1 s after the read at 299 s: gone.
  const [, fresh, expired] = simulate([
    [0, prompt],
    [299_000, prompt],
    [600_000, prompt],
  ]);
  assert.equal(fresh?.cacheReadTokens, 1600);
  assert.equal(expired?.cacheReadTokens, 0);
  assert.equal(expired?.cacheWrite5mTokens, 1600);
  const long = blocks(["tools", "e1"], [1500, 100], { 1: "1h" });
  const [w, kept] = simulate([[0, long], [3_000_000, long]]);
  assert.equal(w?.cacheWrite1hTokens, 1600);
  assert.equal(kept?.cacheReadTokens, 1600);
});

Deno.test("a prefix below the model's minimum is not cached", () => {
  const prompt = blocks(["tools", "e1"], [900, 100], { 1: "5m" });
  const [a, b] = simulate([[0, prompt], [1000, prompt]]);
  assert.equal(a?.cacheWrite5mTokens, 0);
  assert.equal(b?.cacheReadTokens, 0);
  assert.equal(b?.uncachedTokens, 1000);
  // The same prefix caches for a model whose minimum it reaches.
  const [, c] = simulate([[0, prompt], [1000, prompt]], 1000);
  assert.equal(c?.cacheReadTokens, 1000);
});

Deno.test("a changed first block (the tools) misses everything after it", () => {
  const a = blocks(["tools A", "system", "e1"], [1000, 200, 50], { 2: "5m" });
  const b = blocks(["tools B", "system", "e1"], [1000, 200, 50], { 2: "5m" });
  const [, second] = simulate([[0, a], [1000, b]]);
  assert.equal(second?.cacheReadTokens, 0);
});

Deno.test("more than 4 breakpoints are refused", () => {
  const prompt = blocks(["a", "b", "c", "d", "e"], [1, 1, 1, 1, 1], {
    0: "5m",
    1: "5m",
    2: "5m",
    3: "5m",
    4: "5m",
  });
  assert.throws(
    () => simulate([[0, prompt]]),
    RangeError,
  );
});
