import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Context,
  IdPool,
  IdPoolExhaustedError,
  StringEntry,
} from "../../mod.ts";

const READABLE = /^[abcdefghjkmnpqrstuvwxyz23456789]+$/;

Deno.test("IdPool hands out unique readable ids of the configured length", async (t) => {
  await t.step("length 3 is the default and gives 31^3 ids", () => {
    const pool = new IdPool({ seed: 42 });
    assert.equal(pool.length, 3);
    assert.equal(pool.size, 29_791);
    assert.equal(pool.remaining, 29_791);
    assert.equal(pool.next().length, 3);
  });
  await t.step("length 2 gives two-character ids", () => {
    assert.equal(new IdPool({ length: 2, seed: 42 }).next().length, 2);
  });
  await t.step("100 ids are unique", () => {
    const pool = new IdPool({ seed: 7 });
    const ids = Array.from({ length: 100 }, () => pool.next());
    assert.equal(new Set(ids).size, 100);
  });
  await t.step(
    "1,000 ids avoid 0 1 i l o and stay in the 31-character alphabet",
    () => {
      assert.equal(IdPool.ALPHABET.length, 31);
      const pool = new IdPool({ seed: 3 });
      for (let i = 0; i < 1000; i++) {
        const id = pool.next();
        assert.match(id, READABLE);
        assert.doesNotMatch(id, /[01ilo]/);
      }
    },
  );
  await t.step("every id of a small pool comes out exactly once", () => {
    const pool = new IdPool({ length: 2, seed: 9 });
    const ids = new Set<string>();
    for (let i = 0; i < 31 * 31; i++) ids.add(pool.next());
    assert.equal(ids.size, 961);
    assert.equal(pool.remaining, 0);
  });
  await t.step(
    "a length-5 pool starts at once (nothing is materialised)",
    () => {
      const pool = new IdPool({ length: 5, seed: 1 });
      assert.equal(pool.size, 31 ** 5);
      assert.equal(pool.next().length, 5);
    },
  );
});

Deno.test("IdPool order is scrambled and reproducible from the seed", async (t) => {
  await t.step("the first 10 ids are not in sorted order", () => {
    const pool = new IdPool({ seed: 42 });
    const ids = Array.from({ length: 10 }, () => pool.next());
    assert.notDeepEqual(ids, [...ids].sort());
  });
  await t.step("the same seed gives the same ids", () => {
    const a = new IdPool({ seed: 42 });
    const b = new IdPool({ seed: 42 });
    for (let i = 0; i < 10; i++) assert.equal(a.next(), b.next());
  });
  await t.step("different seeds give different orders", () => {
    const a = new IdPool({ seed: 1 });
    const b = new IdPool({ seed: 2 });
    const first = Array.from({ length: 10 }, () => a.next());
    const second = Array.from({ length: 10 }, () => b.next());
    assert.notDeepEqual(first, second);
  });
  await t.step(
    "the order is a permutation for any seed and small length",
    () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (seed) => {
          const pool = new IdPool({ length: 2, seed });
          const ids = new Set<string>();
          for (let i = 0; i < 961; i++) ids.add(pool.next());
          return ids.size === 961;
        }),
        { numRuns: 20 },
      );
    },
  );
});

Deno.test("IdPool counts, releases FIFO and fails clearly when exhausted", async (t) => {
  await t.step(
    "remaining drops by one per id and rises by one per release",
    () => {
      const pool = new IdPool({ seed: 5 });
      const id = pool.next();
      pool.next();
      assert.equal(pool.remaining, 29_789);
      assert.equal(pool.release(id), true);
      assert.equal(pool.remaining, 29_790);
    },
  );
  await t.step("releasing an id not in use changes nothing", () => {
    const pool = new IdPool({ seed: 5 });
    const id = pool.next();
    assert.equal(pool.release(id), true);
    assert.equal(pool.release(id), false);
    assert.equal(pool.release("zzz"), false);
    assert.equal(pool.remaining, pool.size);
  });
  await t.step(
    "a fixed length-1 pool gives 31 ids, then throws a RangeError saying exhausted",
    () => {
      const pool = new IdPool({ length: 1, maxLength: 1, seed: 42 });
      for (let i = 0; i < 31; i++) pool.next();
      assert.throws(
        () => pool.next(),
        (e) =>
          e instanceof IdPoolExhaustedError && e instanceof RangeError &&
          e.code === "ids_exhausted" && /exhausted/.test(e.message),
      );
    },
  );
  await t.step(
    "released ids come back after every fresh id, oldest release first",
    () => {
      const pool = new IdPool({ length: 1, maxLength: 1, seed: 42 });
      const first = pool.next();
      const second = pool.next();
      pool.release(second);
      pool.release(first);
      const fresh = Array.from({ length: 29 }, () => pool.next());
      assert.ok(!fresh.includes(first) && !fresh.includes(second));
      assert.equal(pool.next(), second);
      assert.equal(pool.next(), first);
      assert.throws(() => pool.next(), IdPoolExhaustedError);
    },
  );
  await t.step("a redacted id is not handed out again at once", () => {
    const ids = new IdPool({ length: 2, seed: 42 });
    const ctx = new Context("agent", { ids });
    const entry = ctx.convo.add("secret");
    const id = entry.id!;
    assert.equal(ctx.redact(entry), entry);
    assert.notEqual(new StringEntry("next", { ids }).id, id);
  });
  await t.step("bad lengths and seeds are refused", () => {
    assert.throws(() => new IdPool({ length: 0 }), RangeError);
    assert.throws(() => new IdPool({ length: 11 }), RangeError);
    assert.throws(() => new IdPool({ length: 2.5 }), RangeError);
    assert.throws(() => new IdPool({ length: 3, maxLength: 2 }), RangeError);
    assert.throws(() => new IdPool({ maxLength: 11 }), RangeError);
    assert.throws(() => new IdPool({ seed: Number.NaN }), RangeError);
  });
});

Deno.test("IdPool.shared is one default pool used by entries and contexts", () => {
  assert.equal(IdPool.shared, IdPool.shared);
  const before = IdPool.shared.remaining;
  const a = new StringEntry("a");
  const b = new StringEntry("b");
  assert.notEqual(a.id, b.id);
  assert.equal(a.id?.length, 3);
  assert.equal(IdPool.shared.remaining, before - 2);
  a.release();
  b.release();
  assert.equal(IdPool.shared.remaining, before);
});

Deno.test("Contexts get distinct readable ids and show them with their name", () => {
  const ids = new IdPool({ length: 2, seed: 42 });
  const contexts = Array.from(
    { length: 10 },
    (_, i) => new Context(`c${i}`, { ids }),
  );
  assert.equal(new Set(contexts.map((c) => c.id)).size, 10);
  for (const ctx of contexts) {
    assert.equal(ctx.id.length, 2);
    assert.match(ctx.id, READABLE);
  }
  const text = String(contexts[0]);
  assert.ok(text.includes(contexts[0]!.id) && text.includes("c0"));
});

Deno.test("IdPool grows instead of running out while its ids are in use", async (t) => {
  await t.step(
    "a length-1 pool moves on to two characters after 31 ids",
    () => {
      const pool = new IdPool({ length: 1, seed: 42 });
      const short = Array.from({ length: 31 }, () => pool.next());
      assert.equal(pool.remaining, 0);
      const next = pool.next();
      assert.equal(next.length, 2);
      assert.equal(pool.length, 2);
      assert.equal(pool.size, 961);
      assert.equal(pool.remaining, 960);
      for (const id of short) assert.equal(pool.has(id), true);
      assert.equal(new Set([...short, next]).size, 32);
    },
  );
  await t.step("released ids are used before the pool grows", () => {
    const pool = new IdPool({ length: 1, seed: 7 });
    const ids = Array.from({ length: 31 }, () => pool.next());
    pool.release(ids[4]!);
    assert.equal(pool.next(), ids[4]);
    assert.equal(pool.length, 1);
    assert.equal(pool.next().length, 2);
  });
  await t.step("growth is reproducible from the seed", () => {
    const a = new IdPool({ length: 1, seed: 3 });
    const b = new IdPool({ length: 1, seed: 3 });
    for (let i = 0; i < 100; i++) assert.equal(a.next(), b.next());
  });
  await t.step("it throws only past maxLength", () => {
    const pool = new IdPool({ length: 1, maxLength: 2, seed: 1 });
    for (let i = 0; i < 31 + 961; i++) pool.next();
    assert.throws(
      () => pool.next(),
      (e) =>
        e instanceof IdPoolExhaustedError && /maxLength is 2/.test(e.message),
    );
  });
});

Deno.test("a context holds 100,000 live entries with the default pool", () => {
  const ctx = new Context("big");
  const ids = new Set<string>();
  for (let i = 0; i < 100_000; i++) {
    const entry = ctx.convo.add(`note ${i}`);
    assert.ok(entry.id !== undefined && !ids.has(entry.id));
    ids.add(entry.id);
  }
  assert.equal(ids.size, 100_000);
  assert.equal(ctx.convo.entries.length, 100_000);
  assert.ok([...ids].every((id) => READABLE.test(id) && id.length <= 4));
  assert.ok(IdPool.shared.length >= 4);
  const text = ctx.render();
  assert.ok(text.endsWith("note 99999"));
  ctx.convo.clear();
  assert.ok([...ids].every((id) => !IdPool.shared.has(id)));
});
