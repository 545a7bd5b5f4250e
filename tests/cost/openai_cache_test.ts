/** OpenAI's automatic prefix caching on hand-computed cases. */
import assert from "node:assert/strict";
import { simulateOpenAICache } from "../../lib/cost/openai_cache.ts";

const seq = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => from + i);

Deno.test("cache hits grow in 128-token steps from 1,024", () => {
  const base = seq(3000);
  const cases: [number, number][] = [
    [1023, 0],
    [1024, 1024],
    [1151, 1024],
    [1152, 1152],
    [1279, 1152],
    [2999, 2944],
  ];
  for (const [shared, cached] of cases) {
    const [, b] = simulateOpenAICache([
      { atMs: 0, tokens: base },
      { atMs: 1, tokens: [...base.slice(0, shared), -5, ...seq(50, 9000)] },
    ]);
    assert.equal(b?.cacheReadTokens, cached, `${shared} shared tokens`);
    assert.equal(b?.uncachedTokens, (b?.inputTokens ?? 0) - cached);
  }
});

Deno.test("a prompt below 1,024 tokens neither caches nor reads", () => {
  const short = seq(1000);
  const [a, b] = simulateOpenAICache([
    { atMs: 0, tokens: short },
    { atMs: 1, tokens: short },
  ]);
  assert.equal(a?.cacheReadTokens, 0);
  assert.equal(b?.cacheReadTokens, 0);
});

Deno.test("a cached prompt is evicted after the retention without use", () => {
  const p = seq(2048);
  const [, kept, gone] = simulateOpenAICache([
    { atMs: 0, tokens: p },
    { atMs: 299_000, tokens: p },
    { atMs: 600_000, tokens: p },
  ]);
  assert.equal(kept?.cacheReadTokens, 2048);
  assert.equal(gone?.cacheReadTokens, 0);
  const [, , longer] = simulateOpenAICache([
    { atMs: 0, tokens: p },
    { atMs: 299_000, tokens: p },
    { atMs: 600_000, tokens: p },
  ], { retentionMs: 3_600_000 });
  assert.equal(longer?.cacheReadTokens, 2048);
});
