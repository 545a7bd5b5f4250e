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

/**
 * codeNames() examples: each row is a tool's server and name and the
 * `server.tool` path code calls it by.
 */
const NAMING_CASES: readonly {
  readonly name: string;
  readonly rows: readonly (readonly [string, string, string])[];
}[] = [
  {
    name:
      "codeNames() numbers colliding tools _2, _3 in order, and a name that is already an identifier keeps it",
    rows: [
      ["s", "a-b", "s.a_b_2"],
      ["s", "a.b", "s.a_b_3"],
      ["s", "a_b", "s.a_b"],
      ["s", "a b", "s.a_b_4"],
      ["t", "a-b", "t.a_b"],
    ],
  },
  {
    // fast-check's counterexample: the repeated `x` took `x_2`, and the tool
    // called `x_2` became `x_2_2`.
    name:
      "codeNames(): a repeated name never takes the name a tool of that name owns",
    rows: [
      ["1", "x", "_1.x"],
      ["1", "x", "_1.x_3"],
      ["1", "x_2", "_1.x_2"],
    ],
  },
  {
    name:
      "codeNames() names servers by the same rule, in the order they first appear",
    rows: [
      ["my-fs", "x", "my_fs_2.x"],
      ["my_fs", "x", "my_fs.x"],
      ["my.fs", "x", "my_fs_3.x"],
      ["my-fs", "y", "my_fs_2.y"],
      ["9lives", "x", "_9lives.x"],
    ],
  },
];

for (const c of NAMING_CASES) {
  Deno.test(c.name, () => {
    const names = codeNames(c.rows.map(([server, tool]) => ({ server, tool })));
    // Each entry keeps its server and tool, and gets the expected names.
    assert.deepEqual(
      names,
      c.rows.map(([server, tool, path]) => {
        const [serverName, toolName] = path.split(".");
        return { server, tool, serverName, toolName };
      }),
    );
  });
}

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
