import assert from "node:assert/strict";
import fc from "fast-check";
import {
  CODE_NAME_MAX,
  codeIdentifier,
  codeNames,
} from "../../lib/code/code_names.ts";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

Deno.test("codeIdentifier() replaces each run of other characters by one _ and prefixes a leading digit", () => {
  assert.equal(codeIdentifier("get-tiny-image"), "get_tiny_image");
  assert.equal(codeIdentifier("read_file"), "read_file");
  assert.equal(codeIdentifier("$ref"), "$ref");
  assert.equal(codeIdentifier("a.-/b"), "a_b");
  assert.equal(codeIdentifier("3d"), "_3d");
  assert.equal(codeIdentifier("héllo wörld"), "h_llo_w_rld");
  assert.equal(codeIdentifier(""), "_");
  assert.equal(codeIdentifier("---"), "_");
  assert.equal(codeIdentifier("x".repeat(1000)).length, CODE_NAME_MAX);
});

Deno.test("codeNames() numbers colliding tools _2, _3 in order, and a name that is already an identifier keeps it", () => {
  const names = codeNames([
    { server: "s", tool: "a-b" },
    { server: "s", tool: "a.b" },
    { server: "s", tool: "a_b" },
    { server: "s", tool: "a b" },
    { server: "t", tool: "a-b" },
  ]);
  assert.deepEqual(names.map((n) => `${n.serverName}.${n.toolName}`), [
    "s.a_b_2",
    "s.a_b_3",
    "s.a_b",
    "s.a_b_4",
    "t.a_b",
  ]);
  assert.deepEqual(names[0], {
    server: "s",
    tool: "a-b",
    serverName: "s",
    toolName: "a_b_2",
  });
});

Deno.test("codeNames(): a repeated name never takes the name a tool of that name owns", () => {
  // fast-check's counterexample: the repeated `x` took `x_2`, and the tool
  // called `x_2` became `x_2_2`.
  const names = codeNames([
    { server: "1", tool: "x" },
    { server: "1", tool: "x" },
    { server: "1", tool: "x_2" },
  ]);
  assert.deepEqual(names.map((n) => n.toolName), ["x", "x_3", "x_2"]);
});

Deno.test("codeNames() names servers by the same rule, in the order they first appear", () => {
  const names = codeNames([
    { server: "my-fs", tool: "x" },
    { server: "my_fs", tool: "x" },
    { server: "my.fs", tool: "x" },
    { server: "my-fs", tool: "y" },
    { server: "9lives", tool: "x" },
  ]);
  assert.deepEqual(names.map((n) => `${n.serverName}.${n.toolName}`), [
    "my_fs_2.x",
    "my_fs.x",
    "my_fs_3.x",
    "my_fs_2.y",
    "_9lives.x",
  ]);
});

Deno.test("codeNames() gives unique identifiers for any names, the same on every call", () => {
  const pair = fc.record({
    server: fc.oneof(fc.constantFrom("a", "a-", "a_", "1"), fc.string()),
    tool: fc.oneof(fc.constantFrom("x", "x-", "x_", "x_2", "2"), fc.string()),
  });
  fc.assert(
    fc.property(fc.array(pair, { maxLength: 30 }), (tools) => {
      const names = codeNames(tools);
      assert.deepEqual(codeNames(tools), names);
      assert.equal(names.length, tools.length);
      const paths = new Set<string>();
      const serverOf = new Map<string, string>();
      for (const [i, n] of names.entries()) {
        assert.equal(n.server, tools[i]!.server);
        assert.match(n.serverName, IDENTIFIER);
        assert.match(n.toolName, IDENTIFIER);
        paths.add(`${n.serverName}.${n.toolName}`);
        const known = serverOf.get(n.serverName);
        assert.ok(known === undefined || known === n.server);
        serverOf.set(n.serverName, n.server);
        if (IDENTIFIER.test(n.tool) && n.tool.length <= CODE_NAME_MAX) {
          const first = tools.findIndex((t) =>
            t.server === n.server && t.tool === n.tool
          );
          if (first === i) assert.equal(n.toolName, n.tool);
        }
      }
      assert.equal(paths.size, tools.length);
    }),
  );
});
