import assert from "node:assert/strict";
import type { ModelUsage } from "../../lib/briefing/context_report.ts";
import { DEFAULT_PRICES } from "../../lib/cost/prices.ts";
import { priceTokens, usageCost } from "../../lib/cost/usage_cost.ts";

const M = 1_000_000;

function usage(u: Partial<ModelUsage>): ModelUsage {
  return {
    input_tokens: null,
    output_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
    ...u,
  };
}

Deno.test("priceTokens() prices uncached input, cache reads, 5m and 1h writes and output at the model's prices", () => {
  const sonnet = DEFAULT_PRICES.models["claude-sonnet-4-5"]!;
  const f = priceTokens(sonnet, {
    input: 4 * M,
    read: M,
    write5m: M,
    write1h: M,
    output: M,
  });
  assert.equal(f.uncached_tokens, M);
  // 3 + 0.3 + 3.75 + 6 input, 15 output.
  assert.equal(f.input_dollars, 13.05);
  assert.equal(f.output_dollars, 15);
  assert.equal(f.dollars, 28.05);
});

Deno.test("usageCost() reads Anthropic's input_tokens without, and OpenAI's with, the cached tokens", async (t) => {
  await t.step("Anthropic: input excludes reads and writes", () => {
    const cost = usageCost("anthropic:claude-sonnet-4-5", [
      usage({
        input_tokens: M,
        cache_read_tokens: M,
        cache_write_tokens: M,
        output_tokens: 0,
      }),
    ]);
    assert.equal(cost.kind, "priced");
    // 1M uncached at 3, 1M read at 0.3, 1M written (5m) at 3.75.
    assert.equal(cost.kind === "priced" && cost.dollars, 7.05);
  });
  await t.step("OpenAI: prompt tokens include the cached ones", () => {
    const cost = usageCost("openai:gpt-4.1", [
      usage({ input_tokens: 2 * M, cache_read_tokens: M, output_tokens: 0 }),
    ]);
    // 1M uncached at 2, 1M cached at 0.5.
    assert.equal(cost.kind === "priced" && cost.dollars, 2.5);
  });
  await t.step(
    "a call without counters adds nothing and is counted apart",
    () => {
      const cost = usageCost("openai:gpt-4.1", [
        usage({ input_tokens: M }),
        usage({}),
      ]);
      assert.deepEqual(
        cost.kind === "priced" && [cost.calls_reported, cost.calls],
        [1, 2],
      );
    },
  );
});

Deno.test("usageCost() says why a run is not priced", () => {
  const reasons = [
    [null, /names no model/],
    ["recorded", /a recorded model has no price/],
    ["anthropic:claude-unknown", /has no claude-unknown/],
    ["openai:claude-sonnet-4-5", /has no claude-sonnet-4-5/],
    ["local:llama", /local is not a priced provider/],
  ] as const;
  for (const [model, reason] of reasons) {
    const cost = usageCost(model, [usage({ input_tokens: 1 })]);
    assert.equal(cost.kind, "unpriced", String(model));
    assert.match(cost.kind === "unpriced" ? cost.reason : "", reason);
  }
});
