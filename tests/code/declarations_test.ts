import assert from "node:assert/strict";
import fc from "fast-check";
import { join } from "node:path";
import { codeNames } from "../../lib/code/code_names.ts";
import {
  type DeclarableTool,
  declareTools,
} from "../../lib/code/declarations.ts";

/** Tools as an upstream lists them, named over the whole list. */
function named(
  listed:
    readonly (Record<string, unknown> & { server: string; name: string })[],
): DeclarableTool[] {
  const names = codeNames(
    listed.map((t) => ({ server: t.server, tool: t.name })),
  );
  return listed.map((t, i) => ({ ...t, ...names[i]! }));
}

function declare(
  inputSchema: unknown,
  extra: Record<string, unknown> = {},
): string {
  return declareTools(
    named([{ server: "s", name: "t", inputSchema, ...extra }]),
  )
    .text;
}

/** The part of a one-tool declaration between `t` and `;\n  };`. */
function signature(text: string): string {
  const start = text.indexOf("    t(");
  return text.slice(start + 5, text.lastIndexOf(";\n  };"));
}

Deno.test("declareTools() declares servers and tools as one object type, with descriptions as JSDoc", () => {
  const text = declareTools(named([
    {
      server: "fs",
      name: "read-file",
      description: "Reads a file",
      inputSchema: {
        type: "object",
        properties: {
          path: { type: "string", description: "Where" },
          head: { type: "integer" },
        },
        required: ["path"],
      },
      outputSchema: {
        type: "object",
        properties: { content: { type: "string" } },
        required: ["content"],
      },
    },
    {
      server: "fs",
      name: "list",
      inputSchema: { type: "object", properties: {} },
    },
    { server: "my-db", name: "delete", inputSchema: { type: "object" } },
  ])).text;
  assert.equal(
    text,
    `declare const tools: {
  fs: {
    /**
     * Reads a file
     *
     * MCP name: "read-file"
     */
    read_file(args: {
      /** Where */
      path: string;
      head?: number;
    }): Promise<CallToolResult<{ content: string }>>;
    list(args?: {}): Promise<CallToolResult>;
  };
  /** Server "my-db" */
  my_db: {
    delete(args?: { [key: string]: unknown }): Promise<CallToolResult>;
  };
};
`,
  );
});

Deno.test("declareTools() reports the UTF-8 size and gives the same bytes for the same tools", () => {
  const tools = named([{ server: "é", name: "ü", description: "∑ sums" }]);
  const first = declareTools(tools);
  assert.equal(first.bytes, new TextEncoder().encode(first.text).length);
  assert.ok(first.bytes > first.text.length);
  assert.deepEqual(declareTools(structuredClone(tools)), first);
});

Deno.test("declareTools() renders the JSON Schema keywords a tool schema uses", async (t) => {
  const cases: [string, unknown, string][] = [
    [
      "enum",
      { enum: ["a", 'say "hi"', 1, null] },
      '"a" | "say \\"hi\\"" | 1 | null',
    ],
    ["const", { const: "x" }, '"x"'],
    ["type list", { type: ["string", "null"] }, "string | null"],
    ["nullable", { type: "integer", nullable: true }, "number | null"],
    ["array", { type: "array", items: { type: "string" } }, "string[]"],
    [
      "array of a union",
      {
        type: "array",
        items: { anyOf: [{ type: "string" }, { type: "number" }] },
      },
      "(string | number)[]",
    ],
    [
      "tuple",
      { type: "array", prefixItems: [{ type: "string" }, { type: "boolean" }] },
      "[string, boolean]",
    ],
    [
      "intersection of a union",
      { allOf: [{ anyOf: [{ const: 1 }, { const: 2 }] }, { type: "number" }] },
      "(1 | 2) & number",
    ],
    [
      "record",
      { type: "object", additionalProperties: { type: "number" } },
      "{ [key: string]: number }",
    ],
    ["true schema", true, "unknown"],
    ["false schema", false, "never"],
    ["empty schema", {}, "unknown"],
    ["an unknown type", { type: "quaternion" }, "unknown"],
    ["a remote $ref", { $ref: "https://example.com/s.json" }, "unknown"],
  ];
  for (const [name, schema, type] of cases) {
    await t.step(name, () => {
      const text = declare({
        type: "object",
        properties: { v: schema },
        required: ["v"],
      });
      assert.equal(
        signature(text),
        `(args: { v: ${type} }): Promise<CallToolResult>`,
      );
    });
  }
});

Deno.test("declareTools() resolves $ref into $defs and definitions, and ends a reference cycle in unknown", () => {
  const text = declare({
    type: "object",
    $defs: {
      Node: {
        type: "object",
        description: "A tree node",
        properties: {
          name: { type: "string" },
          children: { type: "array", items: { $ref: "#/$defs/Node" } },
        },
        required: ["name"],
      },
    },
    definitions: { "a/b~c": { enum: ["x", "y"] } },
    properties: {
      root: { $ref: "#/$defs/Node" },
      mode: { $ref: "#/definitions/a~1b~0c" },
      self: { $ref: "#" },
      missing: { $ref: "#/$defs/Nope" },
    },
    required: ["root"],
  });
  assert.equal(
    signature(text),
    `(args: {
      /** A tree node */
      root: { name: string; children?: unknown[] };
      mode?: "x" | "y";
      self?: {
        /** A tree node */
        root: { name: string; children?: unknown[] };
        mode?: "x" | "y";
        self?: unknown;
        missing?: unknown;
      };
      missing?: unknown;
    }): Promise<CallToolResult>`,
  );
});

Deno.test("declareTools() quotes property names that are not identifiers and keeps descriptions inside their comments", () => {
  const text = declare({
    type: "object",
    properties: {
      "*/ evil": {
        type: "string",
        description: "ends */ here\r\nand /* opens\u2028next\u0000",
      },
      "a-b": { enum: ["*/", "\n"] },
      "": { type: "number" },
    },
  }, { description: "Tool */ declare const pwned: 1; /*" });
  assert.ok(!text.includes("ends */"));
  assert.match(
    text,
    /\* ends \*\\\/ here\n {7}\* and \/\* opens\n {7}\* next\n/,
  );
  assert.match(text, /"\*\/ evil"\?: string;/);
  assert.match(text, /"a-b"\?: "\*\/" \| "\\n";/);
  assert.match(text, /"": number;|""\?: number;/);
  assert.match(text, /Tool \*\\\/ declare const pwned: 1; \/\*/);
});

Deno.test("declareTools() bounds what hostile schemas cost: huge, deep, exponential and cyclic ones", async (t) => {
  const bounded = (schema: unknown, extra: Record<string, unknown> = {}) => {
    const started = performance.now();
    const text = declare(schema, extra);
    assert.ok(text.length < 40_000, `${text.length} characters`);
    assert.ok(performance.now() - started < 5_000);
    return text;
  };
  await t.step("a million properties", () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 1_000_000; i++) {
      properties[`p${i}`] = { type: "string" };
    }
    const text = bounded({ type: "object", properties });
    assert.match(text, /p0\?: string;/);
    assert.match(text, /\[key: string\]: unknown;/);
  });
  await t.step("nesting 100,000 levels deep", () => {
    let schema: unknown = { type: "string" };
    for (let i = 0; i < 100_000; i++) {
      schema = { type: "object", properties: { x: schema }, required: ["x"] };
    }
    assert.match(bounded(schema), /unknown/);
  });
  await t.step("references that double at each step", () => {
    const $defs: Record<string, unknown> = { d0: { type: "string" } };
    for (let i = 1; i <= 60; i++) {
      $defs[`d${i}`] = {
        type: "object",
        properties: {
          a: { $ref: `#/$defs/d${i - 1}` },
          b: { $ref: `#/$defs/d${i - 1}` },
        },
      };
    }
    bounded({ $defs, $ref: "#/$defs/d60" });
  });
  await t.step("an object that contains itself", () => {
    const schema: Record<string, unknown> = { type: "object" };
    schema.properties = { me: schema, list: { type: "array", items: schema } };
    bounded(schema);
  });
  await t.step("an enum of 100,000 strings and a description of 10 MB", () => {
    const values = Array.from({ length: 100_000 }, (_, i) => `v${i}`);
    const text = bounded(
      { type: "object", properties: { e: { enum: values } } },
      { description: "x".repeat(10_000_000) },
    );
    assert.match(text, /e\?: string/);
    assert.match(text, /x… \*\/\n/);
  });
  await t.step("values of every wrong type", () => {
    bounded({
      type: 7,
      properties: [1, 2],
      required: "x",
      items: "no",
      enum: { a: 1 },
      anyOf: {},
      allOf: null,
      $ref: 5,
    });
    bounded("not a schema", { description: 42, outputSchema: [1] });
  });
});

/** Hostile strings: comment ends, quotes, escapes, line breaks, surrogates. */
const nasty = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "*/",
    "/*",
    '"',
    "\\",
    "`${x}`",
    "\u2028",
    "\ud800",
    "\n",
    "</script>",
    "__proto__",
    "constructor",
  ),
  fc.string({ unit: "binary" }),
);

const schema = fc.letrec((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.boolean(),
    fc.record({
      type: fc.oneof(
        fc.constantFrom(
          "string",
          "number",
          "integer",
          "boolean",
          "null",
          "object",
          "array",
        ),
        fc.array(fc.constantFrom("string", "null", "object")),
        nasty,
      ),
      description: nasty,
      properties: fc.dictionary(nasty, tie("schema"), { maxKeys: 4 }),
      required: fc.array(nasty, { maxLength: 3 }),
      items: tie("schema"),
      enum: fc.array(
        fc.oneof(
          nasty,
          fc.double(),
          fc.boolean(),
          fc.constant(null),
          fc.object(),
        ),
        { maxLength: 4 },
      ),
      const: fc.jsonValue(),
      anyOf: fc.array(tie("schema"), { maxLength: 3 }),
      allOf: fc.array(tie("schema"), { maxLength: 3 }),
      $ref: fc.constantFrom(
        "#",
        "#/$defs/a",
        "#/properties/x",
        "#/nope",
        "http://x",
      ),
      $defs: fc.record({ a: tie("schema") }),
      additionalProperties: tie("schema"),
      nullable: fc.boolean(),
    }, { requiredKeys: [] }),
  ),
}));

Deno.test("declareTools() writes TypeScript that type-checks for any schema, names and descriptions", async () => {
  const tool = fc.record({
    server: nasty,
    name: nasty,
    description: fc.oneof(nasty, fc.constant(undefined)),
    inputSchema: schema.schema,
    outputSchema: fc.oneof(schema.schema, fc.constant(undefined)),
  });
  const samples = fc.sample(fc.array(tool, { minLength: 1, maxLength: 8 }), {
    numRuns: 60,
    seed: 35,
  });
  const dir = await Deno.makeTempDir();
  try {
    let source =
      "interface CallToolResult<T = unknown> { structuredContent?: T }\n";
    for (const [i, tools] of samples.entries()) {
      const text = declareTools(named(tools)).text;
      // Each declaration in a block of its own; it must also be used as typed.
      source +=
        `namespace n${i} {\n${text.replace("declare const", "declare const")}` +
        `export type T = typeof tools;\n}\n`;
    }
    const file = join(dir, "declarations.ts");
    await Deno.writeTextFile(file, source);
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--no-config", "--no-lock", file],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(
      run.code,
      0,
      new TextDecoder().decode(run.stderr).slice(0, 4000),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
