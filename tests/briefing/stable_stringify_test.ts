import assert from "node:assert/strict";
import fc from "fast-check";
import { stableStringify } from "../../lib/briefing/turn_request.ts";

/** The former implementation (a recursive JSON.stringify replacer). */
function replacerStringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      sorted[k] = (v as Record<string, unknown>)[k];
    }
    return sorted;
  });
}

Deno.test("stableStringify() writes the bytes the former replacer wrote", () => {
  fc.assert(
    fc.property(
      fc.jsonValue(),
      (v) => stableStringify(v) === replacerStringify(v),
    ),
    { seed: 16, numRuns: 2_000 },
  );
  const odd = {
    b: undefined,
    a: [undefined, () => 1, NaN, -0],
    "10": 1,
    "9": 2,
    "": 3,
    d: new Date(0),
  };
  assert.equal(stableStringify(odd), replacerStringify(odd));
});

Deno.test("stableStringify() serializes values nested 100,000 deep without overflowing the stack", () => {
  const n = 100_000;
  const arrays = JSON.parse("[".repeat(n) + "]".repeat(n));
  assert.equal(stableStringify(arrays), "[".repeat(n) + "]".repeat(n));
  const objects = JSON.parse('{"b":1,"a":'.repeat(n) + "0" + "}".repeat(n));
  const text = stableStringify(objects);
  assert.ok(text.startsWith('{"a":{"a":'));
  assert.ok(text.endsWith(',"b":1}'));
  assert.equal(text.length, n * 12 + 1);
});
