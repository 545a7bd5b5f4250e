// The catalogue's two tools in process: constant definitions, search answers
// within their size limits whatever the upstreams' descriptions hold, and
// call_tool's refusals that let a model fix its call in one step.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  catalogTools,
  chooseCatalog,
  summaryOf,
  ToolCatalog,
} from "../../../lib/mcp/gateway/tool_catalog.ts";
import type { CatalogEntry } from "../../../lib/mcp/gateway/tool_listing.ts";
import { STRICT_TOOL } from "./_catalog_tools.ts";
import { assertToolError } from "../../_kit/mcp.ts";

const bytes = (text: string) => new TextEncoder().encode(text).length;

function entry(
  server: string,
  tool: string,
  fields: Partial<CatalogEntry> = {},
): CatalogEntry {
  const inputSchema = fields.inputSchema ?? { type: "object" };
  const listed = { name: `${server}__${tool}`, inputSchema };
  return {
    name: `${server}__${tool}`,
    server,
    tool,
    inputSchema,
    listed,
    route: {} as CatalogEntry["route"],
    alwaysLoad: false,
    ...fields,
  };
}

function answerOf(result: { content: [{ text: string }] }) {
  return JSON.parse(result.content[0].text);
}

Deno.test("catalogTools() is the same bytes for the same servers, and small", () => {
  const a = JSON.stringify(catalogTools(["fs", "github", "slack"]));
  const b = JSON.stringify(catalogTools(["fs", "github", "slack"]));
  assert.equal(a, b);
  assert.ok(bytes(a) <= 4096, `${bytes(a)} bytes`);
});

Deno.test("chooseCatalog() is full in auto mode up to 16 KiB of definitions", () => {
  assert.equal(chooseCatalog("auto", 16_384), "full");
  assert.equal(chooseCatalog("auto", 16_385), "search");
  assert.equal(chooseCatalog("full", 10_000_000), "full");
});

Deno.test("summaryOf() takes the first sentence, at most 200 characters, no control characters", () => {
  assert.equal(
    summaryOf("Creates an issue. Needs a token."),
    "Creates an issue.",
  );
  assert.equal(summaryOf("\n\n## Search\nFind code, e.g. foo.bar"), "Search");
  assert.equal(summaryOf("Version 1.2 of it? Yes"), "Version 1.2 of it?");
  assert.equal(summaryOf("a\u0000b\u001b[31m"), "a b [31m");
  const long = summaryOf("word ".repeat(100));
  assert.ok([...long].length <= 200 && long.endsWith("…"));
});

Deno.test("search_tools answers at most 4 KiB at summary detail with limit 5, whatever the descriptions hold (property)", () => {
  const hostile = fc.string({ unit: "binary", maxLength: 2000 });
  fc.assert(
    fc.property(
      fc.array(
        fc.record({ title: hostile, description: hostile, tool: hostile }),
        { minLength: 5, maxLength: 12 },
      ),
      (tools) => {
        const entries = tools.map((t, i) =>
          entry("s", `t${i}`, {
            tool: t.tool,
            title: t.title,
            // Every tool matches the query.
            description: `${t.description} match`,
            annotations: {
              readOnlyHint: true,
              title: t.title,
              huge: t.description,
            },
          })
        );
        const catalog = new ToolCatalog(() => entries, ["s"]);
        const text = catalog.search({ query: "match" }).content[0].text;
        assert.ok(bytes(text) <= 4096, `${bytes(text)} bytes`);
        const answer = JSON.parse(text);
        assert.equal(answer.tools.length, 5);
        for (const tool of answer.tools) {
          assert.ok([...tool.summary].length <= 200);
          assert.deepEqual(Object.keys(tool.annotations ?? {}), [
            "readOnlyHint",
          ]);
        }
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("search_tools answers the detail asked for, schemas within 32 KiB", async (t) => {
  const big = {
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [`field_${i}`, {
        type: "string",
        description: "a field",
      }]),
    ),
  };
  const entries = [
    entry("crm", "get_record", {
      description: "Gets a record.",
      inputSchema: big,
    }),
    entry("crm", "put_record", {
      description: "Puts a record.",
      inputSchema: big,
    }),
    entry("crm", "del_record", {
      description: "Deletes a record.",
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
    }),
  ];
  const catalog = new ToolCatalog(() => entries, ["crm"]);
  await t.step("names", () => {
    const answer = answerOf(
      catalog.search({ query: "record", detail: "names", limit: 2 }),
    );
    assert.deepEqual(answer.tools[0], {
      name: "crm__del_record",
      server: "crm",
      tool: "del_record",
    });
    assert.equal(answer.total_matches, 3);
    assert.equal(answer.catalog_size, 3);
  });
  await t.step("schema: each tool's input_schema while the answer fits", () => {
    const text =
      catalog.search({ query: "record", detail: "schema" }).content[0]
        .text;
    const answer = JSON.parse(text);
    assert.ok(bytes(text) <= 32 * 1024 + 4096);
    // The shortest text ranks first; the two long ones tie, by name.
    assert.deepEqual(answer.tools.map((x: { name: string }) => x.name), [
      "crm__del_record",
      "crm__get_record",
      "crm__put_record",
    ]);
    assert.deepEqual(answer.tools[0].input_schema, entries[2]!.inputSchema);
    assert.deepEqual(answer.tools[1].input_schema, big);
    assert.equal(answer.tools[2].input_schema, undefined);
    assert.equal(answer.tools[2].summary, "Puts a record.");
    assert.deepEqual(answer.detail_left_out, ["crm__put_record"]);
  });
  await t.step(
    "bad arguments are invalid_arguments naming the argument",
    () => {
      for (
        const [args, pattern] of [
          [{}, /query/],
          [{ query: "x", limit: 21 }, /limit/],
          [
            { query: "x", detail: "all" },
            /detail must be one of names, summary, schema, typescript/,
          ],
          [{ query: "x", server: "nope" }, /server must be one of "crm"/],
          [{ query: "x", q: 1 }, /"q" is not an argument/],
        ] as const
      ) {
        const result = catalog.search(args as Record<string, unknown>);
        assertToolError(result, /^invalid_arguments: /);
        assert.match(result.content[0].text, pattern);
      }
    },
  );
});

Deno.test("call_tool refuses what would fail upstream, naming why, and resolves what fits", () => {
  const entries = [
    entry("shop", "place_order", {
      inputSchema: STRICT_TOOL.inputSchema,
    }),
    entry("shop", "cancel_order"),
    entry("shop", "list_orders"),
    entry("mail", "send"),
  ];
  const catalog = new ToolCatalog(() => entries, ["shop", "mail"]);
  const refused = catalog.resolve({
    name: "shop__place_order",
    arguments: { sku: 7, express: "yes", note: "x" },
  });
  assert.ok("refused" in refused);
  const text = (refused.refused.content as { text: string }[])[0]!.text;
  assert.match(text, /^invalid_arguments: /);
  assert.match(text, /nothing was sent to server shop/);
  for (const path of ["/sku", "/express", "/note", "/quantity"]) {
    assert.match(text, new RegExp(`- ${path}: expected `));
  }
  assert.ok(text.includes(JSON.stringify(STRICT_TOOL.inputSchema)));

  const unknown = catalog.resolve({ name: "shop__place_ordr" });
  assert.ok("refused" in unknown);
  assert.match(
    (unknown.refused.content as { text: string }[])[0]!.text,
    /^unknown_tool: .*the closest names: shop__place_order, shop__cancel_order, shop__list_orders/,
  );

  const fits = catalog.resolve({
    name: "shop__place_order",
    arguments: { sku: "ABC-1234", quantity: 1 },
  });
  assert.ok("entry" in fits && fits.entry.name === "shop__place_order");
  const noArguments = catalog.resolve({ name: "mail__send" });
  assert.ok("entry" in noArguments);
  assert.deepEqual(noArguments.arguments, {});
});

Deno.test("search_tools with detail typescript answers run_code's declarations, named over the whole catalogue", () => {
  const entries = [
    entry("my-fs", "get-x", {
      description: "Gets x by id.",
      inputSchema: {
        type: "object",
        properties: { id: { type: "string", description: "The id" } },
        required: ["id"],
      },
      outputSchema: {
        type: "object",
        properties: { x: { type: "number" } },
      },
    }),
    entry("my-fs", "get_x", { description: "Gets x, the other way." }),
  ];
  const catalog = new ToolCatalog(() => entries, ["my-fs"]);
  const answer = answerOf(
    catalog.search({ query: "get-x", detail: "typescript", limit: 1 }),
  );
  const [tool] = answer.tools;
  assert.equal(tool.name, "my-fs__get-x");
  // get_x keeps its own name; get-x, rewritten onto it, is numbered.
  assert.match(tool.typescript, /^declare const tools: \{\n {2}\/\*\*/);
  assert.match(tool.typescript, /\n {2}my_fs: \{\n/);
  assert.match(tool.typescript, /\n {4}get_x_2\(args: \{\n/);
  assert.match(tool.typescript, /\/\*\* The id \*\/\n {6}id: string;/);
  assert.match(tool.typescript, /CallToolResult<\{/);
  assert.equal(tool.input_schema, undefined);
});
