/**
 * The long recording priced offline, as `loom cost` does, against the
 * bodies the official SDKs really send: golden figures and the issue's
 * targets (Claude Sonnet list prices: bounded ≤ $2.10, legacy ≤ $3.50).
 */
import assert from "node:assert/strict";
import {
  COST_MODELS,
  costAsSent,
  costOffline,
} from "../../tools/measure_long.ts";

// Golden figures (input dollars, cache hit ratio) of the current policies,
// on requests the services accept (the `step` tool of issue 20; see
// docs/cost.md for the figures before it). The test output tails carry
// timings, so token counts move by a few tokens from run to run: compare
// within 0.5%.
const GOLDEN = {
  anthropic: {
    legacy: { dollars: 1.999, hit: 0.979 },
    bounded: { dollars: 1.537, hit: 0.918 },
  },
  openai: {
    legacy: { dollars: 2.806, hit: 0.976 },
    bounded: { dollars: 1.6, hit: 0.94 },
  },
} as const;

const TARGET = { legacy: 3.5, bounded: 2.1 } as const;

for (const wire of ["anthropic", "openai"] as const) {
  Deno.test(`the long recording through ${wire}: as sent equals offline, under target`, async (t) => {
    for (const policy of ["legacy", "bounded"] as const) {
      await t.step(policy, async () => {
        const { report: sent } = await costAsSent(policy, wire);
        const offline = await costOffline(policy, wire);
        assert.equal(sent.requests.length, 319);
        // `loom cost` reproduces the figures of the captured bodies.
        assert.ok(
          Math.abs(sent.total.input_dollars - offline.total.input_dollars) <
            sent.total.input_dollars * 0.005,
        );
        const golden = GOLDEN[wire][policy];
        const dollars = sent.total.input_dollars;
        assert.ok(
          Math.abs(dollars - golden.dollars) < golden.dollars * 0.005,
          `${COST_MODELS[wire]} ${policy}: $${dollars}`,
        );
        assert.ok(Math.abs(sent.total.hit_ratio - golden.hit) < 0.002);
        if (wire === "anthropic") assert.ok(dollars <= TARGET[policy]);
      });
    }
  });
}
