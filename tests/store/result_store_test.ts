import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  compactDescriptor,
  InvalidUtf8Error,
  ResultRestoreError,
  ResultStore,
  type StoredResult,
} from "../../lib/store/result_store.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A complete stored result of this text, as a session would restore it. */
function storedResult(id: string, text: string, origin = id): StoredResult {
  const bytes = encoder.encode(text);
  return { id, bytes, sha256: sha256(bytes), origin, capture: "complete" };
}

const complete = {
  origin: "repository.inspect a.txt",
  capture: "complete",
} as const;
const partial = { origin: "tests.run", capture: "partial" } as const;

Deno.test("ResultStore.put() stores content and describes it", async (t) => {
  await t.step("ids count up from result-1 in order of storing", async () => {
    const store = new ResultStore();
    const a = await store.put("a", complete);
    const b = await store.put(encoder.encode("b"), complete);
    assert.equal(a.result, "result-1");
    assert.equal(b.result, "result-2");
    assert.equal(store.count, 2);
    assert.equal(store.totalBytes, 2);
  });

  await t.step(
    "the descriptor has exactly the wire-format fields",
    async () => {
      const store = new ResultStore();
      const text = "héllo\n";
      const d = await store.put(text, complete);
      const digest = sha256(encoder.encode(text));
      assert.deepEqual(d, {
        result: "result-1",
        sha256: digest,
        origin: "repository.inspect a.txt",
        capture: "complete",
        utf8_bytes: 7,
        preview: text,
        preview_truncated: false,
        preview_start_byte: 0,
        preview_end_byte: 7,
        reference: {
          result: "result-1",
          sha256: digest,
          select: { kind: "whole" },
          rendering: "text",
        },
      });
    },
  );

  await t.step("the digest is SHA-256 over the UTF-8 bytes", async () => {
    const store = new ResultStore();
    const d = await store.put("", complete);
    assert.equal(
      d.sha256,
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    assert.equal(d.utf8_bytes, 0);
    assert.equal(d.preview, "");
  });

  await t.step(
    "content is copied, so later changes by the caller do not reach the store",
    async () => {
      const store = new ResultStore();
      const bytes = encoder.encode("original");
      const d = await store.put(bytes, complete);
      bytes[0] = 0x4f;
      const kept = store.get("result-1")!;
      assert.equal(decoder.decode(kept.bytes), "original");
      assert.equal(sha256(kept.bytes), d.sha256);
      assert.ok(Object.isFrozen(kept));
    },
  );

  await t.step(
    "get() returns the same record each time and undefined for unknown ids",
    async () => {
      const store = new ResultStore();
      await store.put("x", complete);
      assert.equal(store.get("result-1"), store.get("result-1"));
      assert.equal(store.get("result-1")!.bytes, store.get("result-1")!.bytes);
      assert.equal(store.get("result-2"), undefined);
      assert.equal(store.get("result-0"), undefined);
    },
  );
});

Deno.test("ResultStore.put() refuses invalid UTF-8 and stores nothing", async (t) => {
  const cases: [string, number[]][] = [
    ["a lone continuation byte", [0x61, 0x80]],
    ["an overlong slash", [0xc0, 0xaf]],
    ["an encoded surrogate", [0xed, 0xa0, 0x80]],
    ["a truncated sequence at the end", [0x61, 0xe2, 0x82]],
    ["0xFF", [0xff]],
  ];
  for (const [name, bytes] of cases) {
    await t.step(name, async () => {
      const store = new ResultStore();
      await assert.rejects(
        store.put(new Uint8Array(bytes), complete),
        (error: unknown) => {
          assert.ok(error instanceof InvalidUtf8Error);
          assert.ok(error instanceof TypeError);
          assert.equal(error.code, "invalid_utf8");
          return true;
        },
      );
      assert.equal(store.count, 0);
      assert.equal(store.totalBytes, 0);
      const next = await store.put("ok", complete);
      assert.equal(next.result, "result-1", "no id was used up");
    });
  }
  await t.step("a string with a lone surrogate", async () => {
    const store = new ResultStore();
    await assert.rejects(store.put("a\ud800b", complete), InvalidUtf8Error);
    assert.equal(store.count, 0);
  });
  await t.step("bad options are a TypeError", async () => {
    const store = new ResultStore();
    await assert.rejects(
      store.put("x", { origin: "o", capture: "most" as unknown as "complete" }),
      TypeError,
    );
    await assert.rejects(
      store.put(42 as unknown as string, complete),
      TypeError,
    );
  });
});

Deno.test("ResultStore.put() keeps a 1,024-byte preview on a character boundary", async (t) => {
  await t.step("the head of a complete result", async () => {
    const store = new ResultStore();
    const text = "ab" + "€".repeat(400); // 2 + 1,200 bytes; 1,024 is inside a €
    const d = await store.put(text, complete);
    assert.equal(d.preview_start_byte, 0);
    assert.equal(d.preview_end_byte, 1022);
    assert.equal(d.preview, "ab" + "€".repeat(340));
    assert.equal(d.preview_truncated, true);
    assert.equal(d.utf8_bytes, 1202);
  });

  await t.step("the tail of a partial result", async () => {
    const store = new ResultStore();
    const text = "€".repeat(400) + "yz"; // 1,202 bytes; tail start 178 is inside a €
    const d = await store.put(text, partial);
    assert.equal(d.preview_end_byte, 1202);
    assert.equal(d.preview_start_byte, 180);
    assert.equal(d.preview, "€".repeat(340) + "yz");
    assert.equal(d.preview_truncated, true);
  });

  await t.step("exactly 1,024 bytes is not truncated", async () => {
    const store = new ResultStore();
    const d = await store.put("x".repeat(1024), partial);
    assert.equal(d.preview_truncated, false);
    assert.equal(d.preview.length, 1024);
    const e = await store.put("x".repeat(1025), complete);
    assert.equal(e.preview_truncated, true);
    assert.equal(e.preview_end_byte, 1024);
  });

  await t.step(
    "the preview never passes 1,024 bytes and matches its window",
    async () => {
      const store = new ResultStore();
      for (const unit of ["a", "é", "€", "𝄞"]) {
        for (const capture of ["complete", "partial"] as const) {
          const text = unit.repeat(1500);
          const d = await store.put(text, { origin: "o", capture });
          const bytes = encoder.encode(text);
          assert.ok(encoder.encode(d.preview).length <= 1024);
          assert.ok(encoder.encode(d.preview).length > 1020);
          assert.equal(
            d.preview,
            decoder.decode(
              bytes.subarray(d.preview_start_byte, d.preview_end_byte),
            ),
          );
        }
      }
    },
  );
});

Deno.test("ResultStore limits give descriptors without a reference when full", async (t) => {
  await t.step("a result over maxResultBytes is too_large", async () => {
    const store = new ResultStore({ maxResultBytes: 10 });
    const d = await store.put("x".repeat(11), complete);
    assert.deepEqual(d, {
      origin: complete.origin,
      capture: "complete",
      utf8_bytes: 11,
      preview: "x".repeat(11),
      preview_truncated: false,
      preview_start_byte: 0,
      preview_end_byte: 11,
      result_unavailable: "too_large",
    });
    assert.equal(store.count, 0);
    const ok = await store.put("x".repeat(10), complete);
    assert.equal(ok.result, "result-1");
  });

  await t.step("passing maxTotalBytes is store_full", async () => {
    const store = new ResultStore({ maxTotalBytes: 10 });
    const first = await store.put("12345678", complete);
    const full = await store.put("123", complete);
    assert.equal(full.result_unavailable, "store_full");
    assert.equal(full.result, undefined);
    assert.equal(full.sha256, undefined);
    assert.equal(full.reference, undefined);
    assert.equal(full.preview, "123");
    const fits = await store.put("12", complete);
    assert.equal(fits.result, "result-2");
    assert.equal(store.totalBytes, 10);
    assert.equal(store.get(first.result!)?.sha256, first.sha256);
  });

  await t.step("more than maxResults is store_full", async () => {
    const store = new ResultStore({ maxResults: 2 });
    await store.put("a", complete);
    await store.put("b", complete);
    const full = await store.put("c", partial);
    assert.equal(full.result_unavailable, "store_full");
    assert.equal(full.capture, "partial");
    assert.equal(store.count, 2);
  });

  await t.step("too_large wins over store_full", async () => {
    const store = new ResultStore({ maxResults: 0, maxResultBytes: 1 });
    assert.equal(
      (await store.put("ab", complete)).result_unavailable,
      "too_large",
    );
    assert.equal(
      (await store.put("a", complete)).result_unavailable,
      "store_full",
    );
  });

  await t.step(
    "the defaults are 16 MiB, 64 MiB and 1,024 results",
    async () => {
      const store = new ResultStore();
      const big = new Uint8Array(16 * 1024 * 1024 + 1).fill(0x20);
      assert.equal(
        (await store.put(big, complete)).result_unavailable,
        "too_large",
      );
      const max = big.subarray(1);
      for (let i = 0; i < 4; i++) {
        assert.equal(
          (await store.put(max, complete)).result,
          `result-${i + 1}`,
        );
      }
      assert.equal(store.totalBytes, 64 * 1024 * 1024);
      assert.equal(
        (await store.put("x", complete)).result_unavailable,
        "store_full",
      );
      const many = new ResultStore();
      for (let i = 0; i < 1024; i++) await many.put("", complete);
      assert.equal(
        (await many.put("", complete)).result_unavailable,
        "store_full",
      );
    },
  );

  await t.step("bad limits are a RangeError", () => {
    assert.throws(() => new ResultStore({ maxResults: -1 }), RangeError);
    assert.throws(() => new ResultStore({ maxTotalBytes: NaN }), RangeError);
  });
});

Deno.test("compactDescriptor() keeps only the compact fields", async () => {
  const store = new ResultStore({ maxResults: 1 });
  const d = await store.put("hello", complete);
  assert.deepEqual(compactDescriptor(d), {
    result: d.result,
    sha256: d.sha256,
    origin: d.origin,
    capture: "complete",
    utf8_bytes: 5,
    reference: d.reference,
  });
  const full = await store.put("again", partial);
  assert.deepEqual(compactDescriptor(full), {
    origin: "tests.run",
    capture: "partial",
    utf8_bytes: 5,
    result_unavailable: "store_full",
  });
});

Deno.test("ResultStore.list() pages the catalogue", async (t) => {
  await t.step("an empty store has one empty page", () => {
    assert.deepEqual(new ResultStore().list(0), {
      results: [],
      next_offset: null,
    });
  });

  await t.step("pages hold at most 8 items in id order", async () => {
    const store = new ResultStore();
    for (let i = 1; i <= 17; i++) {
      await store.put(`content ${i}`, { origin: `o${i}`, capture: "complete" });
    }
    const seen: string[] = [];
    let offset: number | null = 0;
    const sizes: number[] = [];
    while (offset !== null) {
      const page = store.list(offset);
      sizes.push(page.results.length);
      seen.push(...page.results.map((item) => item.reference.result));
      offset = page.next_offset;
    }
    assert.deepEqual(sizes, [8, 8, 1]);
    assert.deepEqual(
      seen,
      Array.from({ length: 17 }, (_, i) => `result-${i + 1}`),
    );
    assert.deepEqual(store.list(2).results[0], {
      origin: "o3",
      origin_truncated: false,
      capture: "complete",
      utf8_bytes: 9,
      reference: {
        result: "result-3",
        sha256: store.get("result-3")!.sha256,
        select: { kind: "whole" },
        rendering: "text",
      },
    });
    assert.deepEqual(store.list(17), { results: [], next_offset: null });
    assert.deepEqual(store.list(100), { results: [], next_offset: null });
  });

  await t.step(
    "origins are cut to 256 bytes on a character boundary",
    async () => {
      const store = new ResultStore();
      await store.put("x", {
        origin: "a" + "€".repeat(100),
        capture: "complete",
      });
      await store.put("y", { origin: "b".repeat(256), capture: "complete" });
      const [cut, whole] = store.list(0).results;
      assert.equal(cut!.origin, "a" + "€".repeat(85));
      assert.equal(cut!.origin_truncated, true);
      assert.equal(whole!.origin, "b".repeat(256));
      assert.equal(whole!.origin_truncated, false);
    },
  );

  await t.step(
    "pages stay within 8 KiB of JSON even with escape-heavy origins",
    async () => {
      const store = new ResultStore();
      for (let i = 0; i < 20; i++) {
        await store.put(String(i), {
          origin: "\u0001".repeat(300),
          capture: "complete",
        });
      }
      let offset: number | null = 0;
      let items = 0;
      while (offset !== null) {
        const page = store.list(offset);
        assert.ok(encoder.encode(JSON.stringify(page)).length <= 8192);
        assert.ok(page.results.length >= 1);
        assert.ok(page.results.length < 8);
        items += page.results.length;
        offset = page.next_offset;
      }
      assert.equal(items, 20);
    },
  );

  await t.step("a bad offset is a RangeError", () => {
    const store = new ResultStore();
    assert.throws(() => store.list(-1), RangeError);
    assert.throws(() => store.list(1.5), RangeError);
  });
});

Deno.test("ResultStore.stored() and restore() carry results across sessions", async (t) => {
  await t.step(
    "restored results keep ids and digests, and new ids continue after them",
    async () => {
      const old = new ResultStore();
      await old.put("one", complete);
      await old.put("two", partial);
      const store = new ResultStore();
      const saved = [...old.stored()];
      assert.deepEqual(saved.map((r) => r.id), ["result-1", "result-2"]);
      for (const r of saved) store.restore(r);
      assert.equal(store.get("result-2")!.sha256, old.get("result-2")!.sha256);
      assert.equal(store.get("result-2")!.capture, "partial");
      assert.equal((await store.put("three", complete)).result, "result-3");
    },
  );

  await t.step("out-of-order restores are listed in id order", () => {
    const store = new ResultStore();
    store.restore(storedResult("result-5", "e"));
    store.restore(storedResult("result-2", "b"));
    assert.deepEqual([...store.stored()].map((r) => r.id), [
      "result-2",
      "result-5",
    ]);
    assert.deepEqual(store.list(0).results.map((r) => r.reference.result), [
      "result-2",
      "result-5",
    ]);
  });

  await t.step(
    "a wrong digest, a bad id, a taken id and invalid UTF-8 are refused",
    () => {
      const store = new ResultStore();
      const good = storedResult("result-1", "abc", "o");
      const code = (f: () => void) => {
        try {
          f();
        } catch (error) {
          return (error as { code: string }).code;
        }
        return "none";
      };
      assert.equal(
        code(() => store.restore({ ...good, sha256: "0".repeat(64) })),
        "digest_mismatch",
      );
      assert.equal(
        code(() => store.restore({ ...good, id: "result-01" })),
        "invalid_result_id",
      );
      assert.equal(
        code(() => store.restore({ ...good, id: "event-1" })),
        "invalid_result_id",
      );
      store.restore(good);
      assert.equal(code(() => store.restore(good)), "duplicate_result");
      const bad = new Uint8Array([0xff]);
      assert.throws(
        () =>
          store.restore({
            ...good,
            id: "result-9",
            bytes: bad,
            sha256: sha256(bad),
          }),
        InvalidUtf8Error,
      );
      assert.throws(
        () => store.restore({ ...good, id: "result-3", sha256: "x" }),
        ResultRestoreError,
      );
      assert.equal(store.count, 1);
    },
  );

  await t.step("restore respects the limits", () => {
    const store = new ResultStore({ maxResults: 1, maxResultBytes: 3 });
    const r = (id: string, text: string) => storedResult(id, text, "o");
    assert.throws(() => store.restore(r("result-1", "abcd")), {
      code: "too_large",
    });
    store.restore(r("result-1", "abc"));
    assert.throws(() => store.restore(r("result-2", "a")), {
      code: "store_full",
    });
  });
});

Deno.test("ResultStore.put() keeps a leading byte-order mark in content and preview", async (t) => {
  for (const capture of ["complete", "partial"] as const) {
    await t.step(capture, async () => {
      const store = new ResultStore();
      const d = await store.put("\ufeff{}", { origin: "x", capture });
      assert.equal(d.utf8_bytes, 5);
      assert.equal(d.preview, "\ufeff{}");
      assert.equal(d.preview_end_byte, 5);
      assert.deepEqual(
        store.get(d.result!)!.bytes,
        new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
      );
    });
  }
  await t.step("a partial preview that starts at a BOM keeps it", async () => {
    const store = new ResultStore();
    const d = await store.put("x".repeat(2000) + "\ufeff" + "y".repeat(1021), {
      origin: "tests.run",
      capture: "partial",
    });
    assert.equal(d.preview_start_byte, 2000);
    assert.ok(d.preview.startsWith("\ufeffy"));
  });
});

Deno.test("ResultStore with evictOldest makes room by evicting the oldest results and says which were evicted", async () => {
  const store = new ResultStore({ maxTotalBytes: 10, evictOldest: true });
  await store.put("aaaa", { origin: "a", capture: "complete" });
  await store.put("bbbb", { origin: "b", capture: "complete" });
  const c = await store.put("cccccc", { origin: "c", capture: "complete" });
  assert.equal(c.result, "result-3");
  assert.equal(store.get("result-1"), undefined);
  assert.equal(store.evicted("result-1"), true);
  assert.equal(new TextDecoder().decode(store.get("result-2")?.bytes), "bbbb");
  assert.equal(store.evicted("result-2"), false);
  assert.equal(store.totalBytes, 10);
  const tooLarge = await store.put("x".repeat(11), {
    origin: "d",
    capture: "complete",
  });
  assert.equal(tooLarge.result_unavailable, "store_full");
  assert.ok(
    store.get("result-2") !== undefined,
    "a result too large evicts nothing",
  );
});

Deno.test("ResultStore without evictOldest keeps every earlier result when full", async () => {
  const store = new ResultStore({ maxTotalBytes: 8 });
  await store.put("aaaa", { origin: "a", capture: "complete" });
  await store.put("bbbb", { origin: "b", capture: "complete" });
  const full = await store.put("c", { origin: "c", capture: "complete" });
  assert.equal(full.result_unavailable, "store_full");
  assert.equal(store.evicted("result-1"), false);
  assert.equal(store.count, 2);
});

Deno.test("ResultStore with evictOldest makes room for a result restored or taken in from another process", async () => {
  const other = new ResultStore();
  for (const text of ["aaaa", "bbbb", "cccccc"]) {
    await other.put(text, { origin: "o", capture: "complete" });
  }
  const [a, b, c] = [...other.stored()];
  const store = new ResultStore({ maxTotalBytes: 10, evictOldest: true });
  store.restore(a!);
  store.restore(b!);
  const queue = [c!];
  const shared = new ResultStore({
    maxTotalBytes: 10,
    evictOldest: true,
    backing: {
      admit: () => Promise.reject(new Error("not in this test")),
      refresh: () => Promise.resolve(queue.splice(0)),
    },
  });
  shared.restore(a!);
  shared.restore(b!);
  assert.equal(await shared.refresh(), 1);
  assert.equal(shared.evicted("result-1"), true);
  assert.equal(shared.get("result-3")?.sha256, c!.sha256);
  store.restore(c!);
  assert.deepEqual([...store.stored()].map((r) => r.id), [
    "result-2",
    "result-3",
  ]);
  const strict = new ResultStore({ maxTotalBytes: 10 });
  strict.restore(a!);
  strict.restore(b!);
  assert.throws(() => strict.restore(c!), /the store is full/);
});

Deno.test("ResultStore.put() hands its note to the backing unchanged, and the backing's id is the result's", async () => {
  const notes: unknown[] = [];
  const store = new ResultStore({
    backing: {
      admit: (result, note) => {
        notes.push(note);
        return Promise.resolve({
          id: `result-${40 + notes.length}`,
          ...result,
        });
      },
      refresh: () => Promise.resolve([]),
    },
  });
  const note = { call: { server: "fs", tool: "read" }, persist: false };
  const d = await store.put("x", { origin: "o", capture: "complete", note });
  await store.put("y", { origin: "o", capture: "complete" });
  assert.equal(d.result, "result-41");
  assert.equal(notes[0], note);
  assert.equal(notes[1], undefined);
  assert.equal(store.get("result-42")?.origin, "o");
});

Deno.test("ResultStore.load() of a result whose body it holds under another id takes that body, without asking the backing", async () => {
  const other = new ResultStore();
  const text = "the same body, read twice";
  await other.put(text, { origin: "first read", capture: "complete" });
  await other.put(text, { origin: "second read", capture: "complete" });
  await other.put("another body", { origin: "third", capture: "complete" });
  const [a, b, c] = [...other.stored()];
  const catalogued = [a!, b!, c!].map(({ bytes, ...facts }) => ({
    ...facts,
    utf8_bytes: bytes.length,
  }));
  const asked: string[] = [];
  const shared = new ResultStore({
    backing: {
      admit: () => Promise.reject(new Error("not in this test")),
      refresh: () => Promise.resolve(catalogued.splice(0)),
      load: (id) => {
        asked.push(id);
        return Promise.resolve([a!, b!, c!].find((r) => r.id === id));
      },
    },
  });
  assert.equal(await shared.refresh(), 3);
  assert.equal(await shared.load("result-1"), true);
  assert.equal(await shared.load("result-2"), true);
  assert.equal(await shared.load("result-3"), true);
  assert.deepEqual(asked, ["result-1", "result-3"]);
  const second = shared.get("result-2")!;
  assert.equal(new TextDecoder().decode(second.bytes), text);
  assert.equal(second.origin, "second read");
  assert.equal(second.sha256, b!.sha256);
  assert.equal(second.bytes, shared.get("result-1")!.bytes, "one copy");
});
