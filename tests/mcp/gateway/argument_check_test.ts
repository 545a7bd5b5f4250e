// call_tool's check of arguments against an upstream's (hostile) input
// schema: each failing path and what was expected, RE2 for patterns, and a
// schema ajv cannot use leaves the call unchecked rather than refused.
import assert from "node:assert/strict";
import { checkArguments } from "../../../lib/mcp/gateway/argument_check.ts";
import { STRICT_TOOL } from "./_catalog_tools.ts";

const schema = STRICT_TOOL.inputSchema;

Deno.test("checkArguments() names each failing path and what was expected", async (t) => {
  await t.step("fitting arguments pass", () => {
    assert.deepEqual(checkArguments(schema, { sku: "ABC-1234", quantity: 2 }), {
      ok: true,
    });
  });
  await t.step(
    "a wrong type, a missing field and an extra one, all at once",
    () => {
      const checked = checkArguments(schema, { quantity: "2", colour: "red" });
      assert.equal(checked.ok, false);
      const failures = checked.ok === false ? checked.failures : [];
      assert.deepEqual(
        failures.map((f) => f.path).sort(),
        ["/colour", "/quantity", "/sku"],
      );
      const by = Object.fromEntries(failures.map((f) => [f.path, f.expected]));
      assert.match(by["/quantity"]!, /integer/);
      assert.match(by["/sku"]!, /required/);
      assert.match(by["/colour"]!, /no such property/);
    },
  );
  await t.step("a pattern and a minimum", () => {
    const checked = checkArguments(schema, { sku: "abc", quantity: 0 });
    const failures = checked.ok === false ? checked.failures : [];
    assert.deepEqual(failures.map((f) => f.path).sort(), ["/quantity", "/sku"]);
    assert.match(failures.find((f) => f.path === "/sku")!.expected, /pattern/);
  });
  await t.step("a property name with / and ~ is a proper pointer token", () => {
    const checked = checkArguments(
      { type: "object", additionalProperties: false },
      { "a/b~c": 1 },
    );
    assert.deepEqual(
      checked.ok === false && checked.failures[0]?.path,
      "/a~1b~0c",
    );
  });
});

Deno.test("checkArguments() runs a schema's pattern in linear time (RE2), so a hostile one cannot stall the gateway", () => {
  // Exponential for a backtracking engine: ~2^40 steps on this input.
  const hostile = {
    type: "object",
    properties: { s: { type: "string", pattern: "^(a+)+$" } },
  };
  const started = performance.now();
  const checked = checkArguments(hostile, { s: `${"a".repeat(40)}!` });
  assert.equal(checked.ok, false);
  // Not a timing assertion of speed: a backtracking engine would not return
  // within the test's lifetime at all.
  assert.ok(performance.now() - started < 60_000);
});

Deno.test("checkArguments() takes draft-07 schemas and colliding $ids, and leaves what it cannot compile unchecked", async (t) => {
  await t.step("a draft-07 $schema is checked as 2020-12", () => {
    const draft7 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { n: { type: "number" } },
      required: ["n"],
    };
    assert.equal(checkArguments(draft7, {}).ok, false);
    assert.equal(checkArguments(draft7, { n: 1 }).ok, true);
  });
  await t.step("two schemas with the same $id both work", () => {
    const a = { $id: "urn:x", type: "object", required: ["a"] };
    const b = { $id: "urn:x", type: "object", required: ["b"] };
    assert.equal(checkArguments(a, { a: 1 }).ok, true);
    assert.equal(checkArguments(b, { b: 1 }).ok, true);
    assert.equal(checkArguments(b, { a: 1 }).ok, false);
  });
  await t.step(
    "a lookahead RE2 cannot run, a dangling $ref, a schema over 256 KiB: unchecked, saying why",
    () => {
      for (
        const bad of [
          { type: "object", properties: { s: { pattern: "^(?=a)" } } },
          { type: "object", properties: { s: { $ref: "#/$defs/missing" } } },
          {
            type: "object",
            properties: Object.fromEntries(
              Array.from({ length: 20_000 }, (_, i) => [`p${i}`, {
                type: "string",
              }]),
            ),
          },
        ]
      ) {
        const checked = checkArguments(bad, { s: "a" });
        assert.equal(checked.ok, "unchecked");
        assert.ok(checked.ok === "unchecked" && checked.why.length > 0);
      }
    },
  );
});
