import assert from "node:assert/strict";
import { LookupSession } from "../../lib/reference/lookup_session.ts";
import { ResumedResultStore } from "../../lib/slice/_resumed_store.ts";
import { storeWith } from "../_kit.ts";

Deno.test("a resumed store answers references to a changed source with digest_mismatch", async (t) => {
  const { results: old, descriptors: [a, b] } = await storeWith(
    ["first body\n", "repository.inspect a.ts"],
    ["second body\n", "tests.run x", "partial"],
  );
  const store = new ResumedResultStore();
  store.restoreUnavailable({
    id: "result-1",
    sha256: a.sha256!,
    origin: a.origin,
    capture: "complete",
    utf8_bytes: a.utf8_bytes,
    detail: "a.ts changed since it was inspected",
    reason: "digest_mismatch",
  });
  store.restore(old.get("result-2")!);

  await t.step("the id stays taken and counted", async () => {
    assert.equal(store.count, 2);
    const next = await store.put("new", { origin: "x", capture: "complete" });
    assert.equal(next.result, "result-3");
  });

  await t.step("the catalogue lists it with the digest it had", () => {
    const item = store.list(0).results[0]!;
    assert.equal(item.reference.result, "result-1");
    assert.equal(item.reference.sha256, a.sha256);
    assert.equal(item.utf8_bytes, a.utf8_bytes);
  });

  await t.step(
    "a lookup of it fails with digest_mismatch, others still work",
    async () => {
      const lookups = new LookupSession({ results: store, stage: "selection" });
      const stale = await lookups.answer({ $read_result: a.reference });
      assert.match(JSON.stringify(stale), /digest_mismatch/);
      const fine = await lookups.answer({ $read_result: b.reference });
      assert.deepEqual(fine, { selected_text: "second body\n" });
    },
  );

  await t.step("it is never handed out for persistence", () => {
    assert.deepEqual([...store.stored()].map((r) => r.id), [
      "result-2",
      "result-3",
    ]);
  });
});
