/**
 * The long recordings priced offline, as `loom cost` does, against the
 * bodies the official SDKs really send: golden figures, and issue 22's
 * targets on the project's long recording and on the held-out longer one
 * alike (bounded at most 0.65× legacy on both providers, Anthropic's cache
 * hit ratio under bounded at least 96%).
 */
import assert from "node:assert/strict";
import {
  COST_MODELS,
  costAsSent,
  costOffline,
  type LongRecording,
} from "../../tools/measure_long.ts";

// Golden figures (input dollars, cache hit ratio) of the current policies.
// The test output tails carry timings, so token counts move by a few tokens
// from run to run: compare within 0.5%.
const GOLDEN = {
  long: {
    calls: 319,
    anthropic: {
      legacy: { dollars: 1.999, hit: 0.979 },
      bounded: { dollars: 0.872, hit: 0.969 },
    },
    openai: {
      legacy: { dollars: 2.806, hit: 0.976 },
      bounded: { dollars: 1.118, hit: 0.96 },
    },
  },
  longer: {
    calls: 436,
    anthropic: {
      legacy: { dollars: 3.497, hit: 0.979 },
      bounded: { dollars: 1.109, hit: 0.967 },
    },
    openai: {
      legacy: { dollars: 4.935, hit: 0.976 },
      bounded: { dollars: 1.403, hit: 0.955 },
    },
  },
} as const;

/** Issue 22: bounded costs at most this share of legacy in the same run. */
const MAX_BOUNDED_SHARE = 0.65;
/** Issue 22: Anthropic's cache hit ratio under bounded at least this. */
const MIN_ANTHROPIC_HIT = 0.96;

for (const name of ["long", "longer"] as LongRecording[]) {
  for (const wire of ["anthropic", "openai"] as const) {
    Deno.test(`the ${name} recording through ${wire}: as sent equals offline, bounded at most 0.65× legacy`, async (t) => {
      const dollars = { legacy: 0, bounded: 0 };
      for (const policy of ["legacy", "bounded"] as const) {
        await t.step(policy, async () => {
          const { report: sent } = await costAsSent(policy, wire, name);
          const offline = await costOffline(policy, wire, name);
          assert.equal(sent.requests.length, GOLDEN[name].calls);
          // `loom cost` reproduces the figures of the captured bodies.
          assert.ok(
            Math.abs(sent.total.input_dollars - offline.total.input_dollars) <
              sent.total.input_dollars * 0.005,
          );
          const golden = GOLDEN[name][wire][policy];
          const paid = sent.total.input_dollars;
          const hit = sent.total.hit_ratio;
          const label = `${name} ${
            COST_MODELS[wire]
          } ${policy}: $${paid} at ${hit}`;
          assert.ok(
            Math.abs(paid - golden.dollars) < golden.dollars * 0.005,
            label,
          );
          assert.ok(Math.abs(hit - golden.hit) < 0.002, label);
          if (wire === "anthropic" && policy === "bounded") {
            assert.ok(hit >= MIN_ANTHROPIC_HIT, label);
          }
          dollars[policy] = paid;
        });
      }
      assert.ok(
        dollars.bounded <= MAX_BOUNDED_SHARE * dollars.legacy,
        `bounded $${dollars.bounded} against legacy $${dollars.legacy}`,
      );
    });
  }
}
