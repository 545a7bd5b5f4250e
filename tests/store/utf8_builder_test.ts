import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { isDigestedUtf8, Utf8Builder } from "../../lib/store/utf8_builder.ts";
import { InvalidUtf8Error, ResultStore } from "../../lib/store/result_store.ts";

const encoder = new TextEncoder();

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Builds `bytes` appended in the pieces that `cuts` (offsets) make. */
function build(bytes: Uint8Array, cuts: readonly number[], max = 1 << 24) {
  const builder = new Utf8Builder(max);
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    builder.append(bytes.subarray(at, Math.max(at, cut)));
    at = Math.max(at, cut);
  }
  builder.append(bytes.subarray(at));
  return builder;
}

Deno.test("Utf8Builder builds content from pieces, with its digest", async (t) => {
  await t.step(
    "every way of cutting valid UTF-8 gives its bytes and digest (property)",
    () => {
      fc.assert(
        fc.property(
          fc.string({ unit: "grapheme", maxLength: 300 }),
          fc.array(fc.nat({ max: 1200 }), { maxLength: 12 }),
          (text, cuts) => {
            const bytes = encoder.encode(text);
            const content = build(
              bytes,
              cuts.map((c) => c % (bytes.length + 1)),
            )
              .finish();
            assert.deepEqual(content.bytes, bytes);
            assert.equal(content.sha256, sha256(bytes));
          },
        ),
      );
    },
  );

  await t.step(
    "content of several MiB is checked and hashed as it grows",
    () => {
      const text = "0123456789abcdéf\n".repeat(400_000);
      const bytes = encoder.encode(text);
      const builder = new Utf8Builder(bytes.length);
      for (let at = 0; at < bytes.length; at += 65_537) {
        builder.append(bytes.subarray(at, at + 65_537));
      }
      const content = builder.finish();
      assert.equal(content.bytes.length, bytes.length);
      assert.equal(content.sha256, sha256(bytes));
    },
  );

  await t.step("any invalid UTF-8, however cut, is refused (property)", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.array(fc.nat({ max: 64 }), { maxLength: 6 }),
        (bytes, cuts) => {
          let valid = true;
          try {
            new TextDecoder("utf-8", { fatal: true }).decode(bytes);
          } catch {
            valid = false;
          }
          const builder = build(bytes, cuts.map((c) => c % (bytes.length + 1)));
          if (valid) assert.equal(builder.finish().sha256, sha256(bytes));
          else assert.throws(() => builder.finish(), InvalidUtf8Error);
        },
      ),
    );
  });

  await t.step(
    "a character cut at the end is refused, or dropped on request",
    () => {
      const bytes = encoder.encode("ab€");
      assert.throws(
        () => build(bytes.subarray(0, 4), [3]).finish(),
        (e: unknown) => e instanceof InvalidUtf8Error && e.offset === 2,
      );
      const builder = build(bytes.subarray(0, 4), [3]);
      builder.dropIncompleteTail();
      const content = builder.finish();
      assert.equal(new TextDecoder().decode(content.bytes), "ab");
      assert.equal(content.sha256, sha256(encoder.encode("ab")));
    },
  );

  await t.step(
    "it holds no more than its limit, and is done once finished",
    () => {
      const builder = new Utf8Builder(4);
      builder.append(encoder.encode("abcd"));
      assert.throws(() => builder.append(encoder.encode("e")), RangeError);
      builder.finish();
      assert.throws(() => builder.append(encoder.encode("")), RangeError);
      assert.throws(() => builder.finish(), RangeError);
      assert.throws(() => new Utf8Builder(-1), RangeError);
    },
  );
});

Deno.test("ResultStore.put() keeps a builder's content as it is, and nothing that only looks like one", async () => {
  const builder = new Utf8Builder(64);
  builder.append(encoder.encode("streamed"));
  const content = builder.finish();
  assert.ok(isDigestedUtf8(content));
  const store = new ResultStore();
  const descriptor = await store.put(content, {
    origin: "x",
    capture: "complete",
  });
  assert.equal(descriptor.sha256, sha256(encoder.encode("streamed")));
  assert.equal(store.get(descriptor.result!)!.bytes, content.bytes);
  // A look-alike with a digest that does not belong to its bytes.
  const forged = { bytes: encoder.encode("other"), sha256: content.sha256 };
  assert.ok(!isDigestedUtf8(forged));
  await assert.rejects(
    store.put(forged as never, { origin: "y", capture: "complete" }),
    TypeError,
  );
  assert.equal(store.count, 1);
});
