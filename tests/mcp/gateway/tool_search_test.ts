// The catalogue's search, in process: exact names first whatever else the
// catalogue says, BM25 as specified, ties by name, the same answer for the
// same query whatever the order the tools came in.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  nameKey,
  type SearchableTool,
  ToolIndex,
  words,
} from "../../../lib/mcp/gateway/tool_search.ts";
import { generatedTools } from "./_catalog_tools.ts";

function tool(
  server: string,
  name: string,
  description = "",
  inputSchema: unknown = { type: "object" },
): SearchableTool {
  return {
    name: `${server}__${name}`,
    server,
    tool: name,
    description,
    inputSchema,
  };
}

Deno.test("words() splits names at _, -, . and case changes, lowercases and drops a plural s", () => {
  assert.deepEqual(words("get-tiny_image.v2"), ["get", "tiny", "image", "v2"]);
  assert.deepEqual(words("listPullRequests"), ["list", "pull", "request"]);
  assert.deepEqual(words("parseHTTPHeaders"), ["parse", "http", "header"]);
  assert.deepEqual(words("Directories, files; status"), [
    "directory",
    "file",
    "status",
  ]);
});

Deno.test("ToolIndex.search() answers an exact name first: with or without its server, any case, - and _ alike", async (t) => {
  // Every other tool shouts the name's words; BM25 alone would rank them first.
  const noise = "read file read file read file read_file";
  const index = new ToolIndex([
    tool("fs", "read_file", "Reads."),
    tool("fs", "read_files_fast", noise),
    tool("web", "read-file", "Fetches a page."),
    tool("zip", "extract", noise),
  ]);
  await t.step("the server's own name", () => {
    const answer = index.search("fs__read_file");
    assert.equal(answer.tools[0]?.name, "fs__read_file");
  });
  await t.step(
    "the tool's name names every server's tool of that name, by name",
    () => {
      for (const query of ["read_file", "READ-FILE", " Read_File "]) {
        const names = index.search(query).tools.map((x) => x.name);
        assert.deepEqual(names.slice(0, 2), [
          "fs__read_file",
          "web__read-file",
        ]);
      }
    },
  );
  await t.step("a server filter keeps to it", () => {
    const names = index.search("read_file", { server: "web" }).tools.map((x) =>
      x.name
    );
    assert.deepEqual(names, ["web__read-file"]);
  });
});

Deno.test("ToolIndex.search() finds every one of 2,000 generated tools first by its exact name, four ways", () => {
  const tools = generatedTools(2000).map((g) =>
    tool("catalog", g.name, g.description, g.inputSchema)
  );
  const index = new ToolIndex(tools);
  for (const { name, tool: own } of tools) {
    for (
      const query of [
        name,
        own,
        own.toUpperCase(),
        `catalog__${own.replaceAll("_", "-")}`,
      ]
    ) {
      assert.equal(index.search(query).tools[0]?.name, name, query);
    }
  }
});

Deno.test("ToolIndex.search() puts an exact name first over any catalogue (property)", () => {
  const word = fc.constantFrom(
    "read",
    "file",
    "list",
    "issue",
    "create",
    "repo",
    "page",
    "x",
  );
  const name = fc.array(word, { minLength: 1, maxLength: 3 }).map((w) =>
    w.join("_")
  );
  const catalog = fc.uniqueArray(
    fc.record({
      server: fc.constantFrom("a", "b", "gh"),
      tool: name,
      description: fc.array(word, { maxLength: 30 }).map((w) => w.join(" ")),
    }),
    { minLength: 1, maxLength: 40, selector: (t) => `${t.server}__${t.tool}` },
  );
  fc.assert(
    fc.property(catalog, fc.nat(), fc.boolean(), (tools, pick, prefixed) => {
      const entries = tools.map((t) => tool(t.server, t.tool, t.description));
      const wanted = entries[pick % entries.length]!;
      const query = prefixed ? wanted.name.toUpperCase() : wanted.tool;
      const answer = new ToolIndex(entries).search(query, { limit: 20 });
      // Every tool the query names exactly leads, in name order.
      const exact = entries.filter((e) =>
        nameKey(e.tool) === nameKey(query) || nameKey(e.name) === nameKey(query)
      ).map((e) => e.name).sort();
      assert.deepEqual(
        answer.tools.slice(0, exact.length).map((x) => x.name),
        exact.slice(0, 20),
      );
      assert.ok(exact.includes(wanted.name));
    }),
    { numRuns: 300 },
  );
});

/** BM25 written out plainly (k1 1.2, b 0.75, IDF ln(1 + (N − n + .5)/(n + .5))). */
function referenceRanking(tools: SearchableTool[], query: string): string[] {
  const bags = tools.map((t) => {
    const schema = t.inputSchema as {
      properties?: Record<string, { description?: string }>;
    };
    const params = Object.entries(schema?.properties ?? {}).flatMap((
      [name, p],
    ) => [name, p.description ?? ""]);
    return words(
      [t.name, t.title ?? "", t.description ?? "", ...params].join(" "),
    );
  });
  const avg = bags.reduce((sum, b) => sum + b.length, 0) / bags.length;
  const terms = [...new Set(words(query))];
  const scored = tools.map((t, i) => {
    let score = 0;
    for (const term of terms) {
      const n = bags.filter((b) => b.includes(term)).length;
      const tf = bags[i]!.filter((w) => w === term).length;
      if (tf === 0) continue;
      const idf = Math.log(1 + (tools.length - n + 0.5) / (n + 0.5));
      score += idf * tf * (1.2 + 1) /
        (tf + 1.2 * (1 - 0.75 + 0.75 * bags[i]!.length / avg));
    }
    return { name: t.name, score };
  });
  return scored.filter((s) => s.score > 0)
    .sort((a, b) =>
      b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    )
    .map((s) => s.name);
}

Deno.test("ToolIndex.search() ranks by BM25 over name, title, description and parameters, ties by name", async (t) => {
  await t.step("a worked example", () => {
    const index = new ToolIndex([
      tool("s", "zeta", "Sends an email to a contact."),
      tool("s", "alpha", "Sends an email to a contact."),
      tool("s", "mailer", "Queues an email. Email email email."),
      tool("s", "notes", "Keeps notes.", {
        type: "object",
        properties: { recipient: { description: "Who gets the email" } },
      }),
      tool("s", "other", "Nothing to do with it."),
    ]);
    const answer = index.search("email", { limit: 10 });
    // tf 4 first; equal texts tie by name; a parameter's words count, and
    // its longer text (9 words against 8) ranks it after the two.
    assert.deepEqual(answer.tools.map((x) => x.name), [
      "s__mailer",
      "s__alpha",
      "s__zeta",
      "s__notes",
    ]);
    assert.equal(answer.totalMatches, 4);
  });
  await t.step("the same order as BM25 written out plainly (property)", () => {
    const tools = generatedTools(300).map((g) =>
      tool("c", g.name, g.description, g.inputSchema)
    );
    const query = fc.array(
      fc.constantFrom(
        "create",
        "invoice",
        "in",
        "the",
        "eu",
        "region",
        "alerts",
        "list",
        "dns",
        "records",
        "id",
        "fields",
        "unknownword",
      ),
      { minLength: 1, maxLength: 6 },
    ).map((w) => w.join(" "));
    const index = new ToolIndex(tools);
    fc.assert(
      fc.property(query, (q) => {
        const expected = referenceRanking(tools, q);
        const answer = index.search(q, { limit: 20 });
        assert.deepEqual(
          answer.tools.map((x) => x.name),
          expected.slice(0, 20),
        );
        assert.equal(answer.totalMatches, expected.length);
      }),
      { numRuns: 60 },
    );
  });
});

Deno.test("ToolIndex.search() answers the same whatever order the tools came in (property)", () => {
  const tools = generatedTools(120).map((g) =>
    tool("c", g.name, g.description, g.inputSchema)
  );
  const queries = fc.constantFrom(
    "create invoice",
    "list alerts in the eu region",
    "delete",
    "customer crm",
    "export dashboard",
  );
  fc.assert(
    fc.property(
      fc.shuffledSubarray(tools, { minLength: tools.length }),
      queries,
      (order, query) => {
        const a = new ToolIndex(tools).search(query, { limit: 10 });
        const b = new ToolIndex(order).search(query, { limit: 10 });
        assert.deepEqual(
          b.tools.map((x) => x.name),
          a.tools.map((x) => x.name),
        );
        assert.equal(b.totalMatches, a.totalMatches);
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("ToolIndex.closest() answers the three closest names, ties by name", () => {
  const index = new ToolIndex([
    tool("gh", "create_issue"),
    tool("gh", "create_issues"),
    tool("gh", "close_issue"),
    tool("gh", "list_repos"),
  ]);
  assert.deepEqual(index.closest("gh__create_isue"), [
    "gh__create_issue",
    "gh__create_issues",
    "gh__close_issue",
  ]);
  assert.deepEqual(index.closest("CREATE-ISSUE", 1), ["gh__create_issue"]);
});
