import assert from "node:assert/strict";
import {
  FileEntry,
  ImageEntry,
  InvalidEntryError,
  StringEntry,
} from "../../mod.ts";
import { context, PNG, pool, sharedEntry } from "./_helpers.ts";

Deno.test("Entries get an id from their pool and a creation time", async (t) => {
  await t.step(
    "a string entry has a two-character id from a length-2 pool",
    () => {
      assert.equal(new StringEntry("x", { ids: pool() }).id?.length, 2);
    },
  );
  await t.step(
    "createdAt lies between the times before and after creation",
    () => {
      const before = Date.now();
      const entry = new StringEntry("x", { ids: pool() });
      const after = Date.now();
      assert.ok(entry.createdAt instanceof Date);
      assert.ok(
        entry.createdAt.getTime() >= before &&
          entry.createdAt.getTime() <= after,
      );
    },
  );
  await t.step("100 entries have 100 distinct ids", () => {
    const ids = pool();
    const entries = Array.from(
      { length: 100 },
      (_, i) => new StringEntry(`${i}`, { ids }),
    );
    assert.equal(new Set(entries.map((e) => e.id)).size, 100);
  });
  await t.step("file and image entries have ids and creation times too", () => {
    const ids = pool();
    const file = new FileEntry("missing.md", { ids });
    const image = new ImageEntry({ data: PNG, mediaType: "image/png", ids });
    assert.equal(file.id?.length, 2);
    assert.equal(image.id?.length, 2);
    assert.ok(
      file.createdAt instanceof Date && image.createdAt instanceof Date,
    );
  });
});

Deno.test("Entry.release() returns the id once and is idempotent", () => {
  const ids = pool();
  const entry = new StringEntry("x", { ids });
  const before = ids.remaining;
  entry.release();
  assert.equal(entry.id, undefined);
  assert.equal(ids.remaining, before + 1);
  entry.release();
  assert.equal(ids.remaining, before + 1);
});

Deno.test("Entry roles default to system and take user or assistant", async (t) => {
  await t.step("string entries", () => {
    assert.equal(new StringEntry("x").role, "system");
    assert.equal(new StringEntry("x", { role: "assistant" }).role, "assistant");
    assert.equal(new StringEntry("x", { role: "user" }).role, "user");
  });
  await t.step("an unknown role is refused with a typed error", () => {
    assert.throws(
      () => new StringEntry("x", { role: "tool" as "user" }),
      (e) =>
        e instanceof InvalidEntryError && e instanceof TypeError &&
        e.code === "invalid_entry",
    );
  });
  await t.step("text that is not a string is refused", () => {
    assert.throws(
      () => new StringEntry(42 as unknown as string),
      InvalidEntryError,
    );
  });
});

Deno.test("Clearing or redacting releases ids back to the pool", async (t) => {
  await t.step("step.clear() releases all 10 ids", () => {
    const ids = pool();
    const ctx = context("c", ids);
    const entries = Array.from(
      { length: 10 },
      (_, i) => ctx.step.add(`step ${i}`),
    );
    const before = ids.remaining;
    ctx.step.clear();
    assert.equal(ids.remaining, before + 10);
    for (const entry of entries) assert.equal(entry.id, undefined);
  });
  await t.step(
    "redact() releases the id and leaves the entry without one",
    () => {
      const ids = pool();
      const ctx = context("c", ids);
      const entry = ctx.convo.add("secret");
      const before = ids.remaining;
      assert.equal(ctx.redact(entry), entry);
      assert.equal(entry.id, undefined);
      assert.equal(ids.remaining, before + 1);
    },
  );
  await t.step(
    "a tombstone gets its own id while the old id is released",
    () => {
      const ctx = context();
      const entry = ctx.convo.add("secret");
      assert.equal(ctx.redact(entry, { tombstone: "[GONE]" }), entry);
      assert.equal(entry.id, undefined);
      const [tombstone] = ctx.convo.entries;
      assert.equal(tombstone?.id?.length, 2);
      assert.equal(
        ctx.render(),
        "> CONVO - what has been said and done and learned?\n[GONE]",
      );
    },
  );
  await t.step(
    "an entry held by two sections keeps its id until the last lets go",
    () => {
      const ctx = context();
      const entry = sharedEntry(ctx, "foundation", "attention");
      ctx.foundation.remove(entry);
      assert.notEqual(entry.id, undefined);
      ctx.attention.remove(entry);
      assert.equal(entry.id, undefined);
    },
  );
  await t.step("a released entry added again gets a fresh id", () => {
    const ctx = context();
    const entry = ctx.step.add("again");
    ctx.step.clear();
    assert.equal(entry.id, undefined);
    ctx.convo.add(entry);
    assert.equal((entry.id as string | undefined)?.length, 2);
  });
});
