import assert from "node:assert/strict";
import { IndexCache } from "../../lib/reference/_index_cache.ts";
import { JSON_INDEX_BUDGET, jsonIndex } from "../../lib/reference/selection.ts";
import { generated } from "./generated_json.ts";

function counting() {
  let made = 0;
  const make = (content: Uint8Array) => {
    made += 1;
    return { size: content.length };
  };
  return { make, made: () => made };
}

Deno.test("IndexCache keeps recent indexes within its budget and rebuilds released ones", async (t) => {
  await t.step("a kept index is returned again without rebuilding", () => {
    const cache = new IndexCache<{ size: number }>(100, (v) => v.size);
    const { make, made } = counting();
    const content = new Uint8Array(10);
    const first = cache.get(content, make);
    assert.equal(cache.get(content, make), first);
    assert.equal(made(), 1);
    assert.equal(cache.total, 10);
  });
  await t.step(
    "the least recently used goes first when the budget is passed",
    () => {
      const cache = new IndexCache<{ size: number }>(100, (v) => v.size);
      const { make, made } = counting();
      const a = new Uint8Array(40);
      const b = new Uint8Array(40);
      const c = new Uint8Array(40);
      cache.get(a, make);
      cache.get(b, make);
      cache.get(a, make); // a is now more recent than b
      cache.get(c, make); // 120 > 100: b goes
      assert.equal(cache.has(a), true);
      assert.equal(cache.has(b), false);
      assert.equal(cache.has(c), true);
      assert.equal(cache.total, 80);
      cache.get(b, make); // rebuilt; a goes
      assert.equal(made(), 4);
      assert.equal(cache.has(a), false);
    },
  );
  await t.step(
    "the newest index is kept even when it alone passes the budget",
    () => {
      const cache = new IndexCache<{ size: number }>(100, (v) => v.size);
      const { make } = counting();
      const small = new Uint8Array(10);
      const huge = new Uint8Array(500);
      cache.get(small, make);
      cache.get(huge, make);
      assert.equal(cache.has(huge), true);
      assert.equal(cache.has(small), false);
      assert.equal(cache.total, 500);
    },
  );
});

Deno.test("jsonIndex() keeps the index of a 16 MiB result inside its budget", () => {
  const bytes = generated();
  const index = jsonIndex(bytes);
  assert.ok(!(index instanceof Error));
  assert.equal(jsonIndex(bytes), index);
  assert.ok(index.byteLength < JSON_INDEX_BUDGET);
});
