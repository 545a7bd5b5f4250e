/** The price table and its override file. */
import assert from "node:assert/strict";
import {
  DEFAULT_PRICES,
  modelPrice,
  parsePriceOverrides,
  PriceTableError,
} from "../../lib/cost/prices.ts";
import { priceRun } from "../../lib/cost/simulate.ts";

Deno.test("Anthropic prices follow the documented multipliers", () => {
  for (const [name, p] of Object.entries(DEFAULT_PRICES.models)) {
    if (p.provider !== "anthropic") continue;
    assert.equal(p.cacheRead, Math.round(p.input * 0.1 * 1e6) / 1e6, name);
    assert.equal(p.cacheWrite5m, Math.round(p.input * 1.25 * 1e6) / 1e6);
    assert.equal(p.cacheWrite1h, p.input * 2);
  }
  assert.equal(DEFAULT_PRICES.models["claude-haiku-4-5"]?.minCacheTokens, 4096);
});

Deno.test("a price file overrides fields, adds models and names its version", () => {
  const table = parsePriceOverrides(
    JSON.stringify({
      version: "team-2026-01",
      models: {
        "claude-sonnet-4-5": { input: 2 },
        "local-model": { provider: "openai", input: 1, output: 2 },
      },
    }),
    "prices.json",
  );
  const sonnet = table.models["claude-sonnet-4-5"];
  assert.equal(sonnet?.input, 2);
  // A changed Anthropic input price moves the cache prices with it.
  assert.equal(sonnet?.cacheRead, 0.2);
  assert.equal(sonnet?.cacheWrite5m, 2.5);
  assert.equal(table.models["local-model"]?.cacheRead, 0.5);
  assert.match(table.version, /^team-2026-01 over loom-prices/);
});

Deno.test("a bad price file or an unknown model is a typed error naming it", async () => {
  const bad = [
    ["not json", /not JSON/],
    ['{"models": {}}', /version/],
    ['{"version": "v", "models": {"x": {"input": -1}}}', /models\.x\.input/],
    ['{"version": "v", "models": {"x": {"inptu": 1}}}', /models\.x\.inptu/],
    [
      '{"version": "v", "models": {"x": {"provider": "openai"}}}',
      /input and output/,
    ],
  ] as const;
  for (const [text, pattern] of bad) {
    assert.throws(
      () => parsePriceOverrides(text, "p.json"),
      (e: unknown) =>
        e instanceof PriceTableError && e.code === "price_file_invalid" &&
        /p\.json/.test(e.message) && pattern.test(e.message),
      text,
    );
  }
  assert.throws(
    () => modelPrice(DEFAULT_PRICES, "gpt-99"),
    (e: unknown) => e instanceof PriceTableError && e.code === "unknown_model",
  );
  await assert.rejects(
    () =>
      priceRun([], { wire: "openai", model: "gpt-99", prices: DEFAULT_PRICES }),
    PriceTableError,
  );
});

Deno.test("priceRun prices reads, writes and output by the table", async () => {
  const body = {
    tools: [{ name: "t", description: "d", input_schema: { type: "object" } }],
    tool_choice: { type: "tool", name: "t" },
    system: [{ type: "text", text: "word ".repeat(1500) }],
    messages: [{
      role: "user",
      content: [{
        type: "text",
        text: "intent",
        cache_control: { type: "ephemeral" },
      }, { type: "text", text: "step" }],
    }],
  };
  const report = await priceRun([
    { body, atMs: 0, reply: { action: "tests.run" } },
    { body, atMs: 1000, reply: { action: "tests.run" } },
  ], { wire: "anthropic", model: "claude-sonnet-4-5", prices: DEFAULT_PRICES });
  const [a, b] = report.requests;
  assert.ok(a !== undefined && b !== undefined);
  assert.equal(a.cache_read_tokens, 0);
  assert.equal(b.cache_read_tokens, a.cache_write_tokens);
  assert.ok(b.uncached_tokens > 0 && b.uncached_tokens < 10);
  const expected = (b.uncached_tokens * 3 + b.cache_read_tokens * 0.3) / 1e6;
  assert.ok(Math.abs(b.input_dollars - expected) < 1e-12);
  assert.equal(b.output_dollars, b.output_tokens * 15 / 1e6);
  assert.equal(
    report.total.hit_ratio,
    b.cache_read_tokens / (a.input_tokens + b.input_tokens),
  );
  assert.equal(report.tokenizer.estimate, true);
});
