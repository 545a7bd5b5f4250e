import assert from "node:assert/strict";
import { jsonOutline, OUTLINE_MAX_BYTES } from "../../lib/reference/outline.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("jsonOutline() names the top-level type, its keys or length, and the types under them", async (t) => {
  const cases: [string, unknown, string][] = [
    [
      "an object",
      { a: 1, b: "x", c: [1, 2], d: { e: null }, f: true },
      "object{a: number, b: string, c: array[2] of number, d: object{e: null}, f: boolean}",
    ],
    ["an array of objects, merged", [{ name: "a", type: "file" }, {
      name: "b",
      type: "dir",
      children: [],
    }], "array[2] of object{name: string, type: string, children: array}"],
    ["a mixed array", [1, "a", null], "array[3] of (number | string | null)"],
    ["an empty array", [], "array[0]"],
    ["a scalar", "text", "string"],
    [
      "odd member names, quoted",
      { "a b": 1, "ü": 2 },
      'object{"a b": number, "ü": number}',
    ],
  ];
  for (const [name, value, expected] of cases) {
    await t.step(
      name,
      () => assert.equal(jsonOutline(bytes(JSON.stringify(value))), expected),
    );
  }
});

Deno.test("jsonOutline() stays within 1 KiB on a character boundary and refuses what is not strict JSON", () => {
  const wide = Object.fromEntries(
    Array.from({ length: 500 }, (_, i) => [`ключ_${i}`, i]),
  );
  const outline = jsonOutline(bytes(JSON.stringify(wide)))!;
  assert.ok(new TextEncoder().encode(outline).length <= OUTLINE_MAX_BYTES);
  assert.ok(outline.endsWith("…"));
  assert.ok(outline.isWellFormed());
  assert.equal(jsonOutline(bytes('{"a": 1, "a": 2}')), undefined);
  assert.equal(jsonOutline(bytes("[1,")), undefined);
});
