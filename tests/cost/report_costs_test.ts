// Cache figures from a report alone: recorded counters when the run has
// them, the simulator over the report's bytes otherwise, labelled as such.
import assert from "node:assert/strict";
import type { ContextReportRequest } from "../../lib/briefing/context_report.ts";
import { reportCosts } from "../../lib/cost/report_costs.ts";

function line(
  total: number,
  stable: number,
  breakpoints: number[],
  usage: Partial<ContextReportRequest> = {},
): ContextReportRequest {
  return {
    phase: "selection",
    request_bytes: total,
    prefix_stable_bytes: stable,
    first_divergence: null,
    elapsed_ms: 2000,
    final_usage: usage.input_tokens !== undefined,
    input_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
    output_tokens: null,
    cache_order_bytes: total,
    cache_breakpoints: breakpoints,
    ...usage,
  };
}

Deno.test("reportCosts() takes the provider's counters when the run recorded them", () => {
  const costs = reportCosts("anthropic:claude-sonnet-4-5", [
    line(40_000, 0, [30_000], {
      input_tokens: 100,
      cache_read_tokens: 0,
      cache_write_tokens: 9_000,
      output_tokens: 20,
    }),
    line(42_000, 38_000, [40_000], {
      input_tokens: 50,
      cache_read_tokens: 9_000,
      cache_write_tokens: 500,
      output_tokens: 10,
    }),
  ]);
  assert.equal(costs.source, "recorded");
  assert.equal(costs.assumed, false);
  assert.deepEqual(costs.read, [0, 9_000]);
  assert.deepEqual(costs.write, [9_000, 500]);
  assert.deepEqual(costs.uncached, [100, 50]);
  // Sonnet: $3 input, $0.30 reads, $3.75 writes, $15 output per million.
  const first = (100 * 3 + 9_000 * 3.75 + 20 * 15) / 1e6;
  assert.ok(Math.abs(costs.dollars[0]! - first) < 1e-12);
  assert.ok(Math.abs(costs.hit_ratio - 9_000 / 18_650) < 1e-12);
});

Deno.test("reportCosts() simulates Anthropic's cache over the report's bytes: reads up to the last shared breakpoint, writes after it", () => {
  const costs = reportCosts(null, [
    line(40_000, 0, [8_000, 32_000]),
    line(41_000, 36_000, [8_000, 36_000]),
    // A retirement checkpoint: only the stable front is shared.
    line(20_000, 9_000, [8_000, 16_000]),
  ]);
  assert.equal(costs.source, "simulated");
  assert.match(costs.basis, /^simulated with Anthropic's cache rules/);
  assert.equal(costs.assumed, true);
  assert.deepEqual(costs.write, [8_000, 1_000, 2_000]);
  assert.deepEqual(costs.read, [0, 8_000, 2_000]);
  assert.deepEqual(costs.uncached, [2_000, 1_250, 1_000]);
  assert.ok(costs.total_dollars > 0);
});

Deno.test("reportCosts() simulates OpenAI's automatic cache in 128-token steps from 1,024", () => {
  const costs = reportCosts("openai:gpt-4.1", [
    line(8_000, 0, []),
    line(8_400, 5_000, []),
    line(8_400, 3_000, []),
  ]);
  assert.equal(costs.source, "simulated");
  // 5,000 bytes are 1,250 tokens: 1,024 + 128 read; 750 tokens: none.
  assert.deepEqual(costs.read, [0, 1_152, 0]);
  assert.deepEqual(costs.write, [0, 0, 0]);
  assert.deepEqual(costs.uncached, [2_000, 948, 2_100]);
});
