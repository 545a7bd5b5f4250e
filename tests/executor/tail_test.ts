import assert from "node:assert/strict";
import fc from "fast-check";
import { decodeTail } from "../../lib/executor/_tail.ts";

const encoder = new TextEncoder();

Deno.test("decodeTail() keeps the last bytes on a character boundary", async (t) => {
  await t.step("short output is kept whole", () => {
    assert.equal(decodeTail(encoder.encode("ok\n"), 8192), "ok\n");
    assert.equal(decodeTail(new Uint8Array(0), 8192), "");
  });

  await t.step("a character cut at the front is dropped whole", () => {
    // "€" is 3 bytes: the last 4 bytes of "€€" start inside the first one.
    assert.equal(decodeTail(encoder.encode("€€"), 4), "€");
    assert.equal(decodeTail(encoder.encode("a😀"), 4), "😀");
    assert.equal(decodeTail(encoder.encode("a😀"), 3), "");
  });

  await t.step("invalid bytes become U+FFFD and still fit the limit", () => {
    const text = decodeTail(new Uint8Array([0xff, 0xff, 0xff, 0x41]), 4);
    assert.equal(text, "\ufffdA");
    assert.ok(encoder.encode(text).length <= 4);
  });

  await t.step(
    "valid UTF-8: the longest suffix that fits, on a boundary (property)",
    () => {
      fc.assert(
        fc.property(
          fc.string({ unit: "grapheme", maxLength: 200 }),
          fc.integer({ min: 0, max: 300 }),
          (text, max) => {
            const tail = decodeTail(encoder.encode(text), max);
            const size = encoder.encode(tail).length;
            assert.ok(size <= max);
            assert.ok(text.endsWith(tail));
            // One more code point from the front would not fit.
            const before = [...text.slice(0, text.length - tail.length)].at(-1);
            if (before !== undefined) {
              assert.ok(size + encoder.encode(before).length > max);
            }
          },
        ),
      );
    },
  );

  await t.step(
    "any bytes: the result never exceeds the limit (property)",
    () => {
      fc.assert(
        fc.property(
          fc.uint8Array({ maxLength: 300 }),
          fc.integer({ min: 0, max: 64 }),
          (bytes, max) => {
            assert.ok(encoder.encode(decodeTail(bytes, max)).length <= max);
          },
        ),
      );
    },
  );
});
