import assert from "node:assert/strict";
import fc from "fast-check";
import {
  namespacedName,
  nameTools,
  TOOL_NAME_PATTERN,
} from "../../../lib/mcp/gateway/tool_names.ts";

Deno.test("nameTools() gives every upstream tool a unique name fitting the pattern", () => {
  fc.assert(fc.property(
    fc.array(
      fc.record({ server: fc.string({ minLength: 1 }), tool: fc.string() }),
      { maxLength: 30 },
    ),
    (tools) => {
      const { named, dropped } = nameTools(tools);
      assert.equal(named.length + dropped.length, tools.length);
      assert.ok(named.every((t) => TOOL_NAME_PATTERN.test(t.name)));
      assert.equal(new Set(named.map((t) => t.name)).size, named.length);
    },
  ));
});

Deno.test("namespacedName() keeps plain names and shortens others deterministically", () => {
  assert.equal(namespacedName("fs", "read_file"), "fs__read_file");
  const long = namespacedName("fs", "a".repeat(100));
  assert.equal(long.length, 64);
  assert.equal(long, namespacedName("fs", "a".repeat(100)));
  assert.notEqual(namespacedName("fs", "a b"), namespacedName("fs", "a_b"));
  const { named } = nameTools([
    { server: "fs", tool: "a b" },
    { server: "fs", tool: "a_b" },
  ]);
  assert.equal(named[1]?.name, "fs__a_b");
});
