// `loom mcp --servers --catalog search` end to end: the SDK's own client
// against the real gateway in front of the real upstream servers from npm
// (server-filesystem, server-everything) and the tests' catalogue server
// with 2,000 generated tools, whose own log shows what reached it. The
// host's listing must not move, whatever the upstreams do.
import assert from "node:assert/strict";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { REPO_ROOT, tempDir } from "../../_kit.ts";
import {
  assertToolError,
  connectGateway,
  connectHttp,
  denoEntry,
  EVERYTHING,
  FILESYSTEM,
  mcpArgs,
  type McpConnection,
  rootFolder,
  serversFile,
  startHttp,
} from "../../_kit/mcp.ts";
import { REAL_SERVER_QUERIES } from "./_catalog_queries.ts";
import { generatedTools, STRICT_TOOL } from "./_catalog_tools.ts";

const CATALOG = `${REPO_ROOT}/tests/mcp/gateway/_catalog_server.ts`;
const bytes = (text: string) => new TextEncoder().encode(text).length;

/** `search_tools`' answer, and its size in bytes. */
async function search(
  gateway: McpConnection,
  args: Record<string, unknown>,
): Promise<{ answer: SearchAnswer; bytes: number }> {
  const result = await gateway.call("search_tools", args);
  assert.notEqual(result.isError, true, JSON.stringify(result));
  const text = result.content[0].text as string;
  return { answer: JSON.parse(text), bytes: bytes(text) };
}

interface SearchAnswer {
  tools: { name: string; summary?: string; input_schema?: unknown }[];
  total_matches: number;
  catalog_size: number;
}

/** Searches until `found` holds (the catalogue follows a change in the background). */
async function searchUntil(
  gateway: McpConnection,
  query: string,
  found: (names: string[]) => boolean,
): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { answer } = await search(gateway, { query, limit: 3 });
    const names = answer.tools.map((t) => t.name);
    if (found(names)) return names;
    if (Date.now() > deadline) {
      throw new Error(
        `${query}: still ${names.join(", ")}\n${gateway.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The calls the catalogue server's log shows for one tool. */
async function calls(log: string, tool: string): Promise<unknown[]> {
  const text = await Deno.readTextFile(log).catch(() => "");
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
    .filter((m) => m.method === "tools/call" && m.params.name === tool)
    .map((m) => m.params.arguments);
}

Deno.test("loom mcp --catalog search: a constant listing, searches that find, calls checked before they leave", async (t) => {
  await using dir = await tempDir();
  const root = await rootFolder(`${dir.path}/root`, {
    "notes.txt": "first line\nsecond line\n",
    "big.json": JSON.stringify({
      rows: Array.from({ length: 2000 }, (_, i) => ({ i })),
    }),
  });
  const log = `${dir.path}/catalog.log`;
  const servers = await serversFile(dir.path, {
    fs: {
      ...denoEntry(FILESYSTEM, [root]),
      tools: { write_file: { disabled: true } },
    },
    everything: denoEntry(EVERYTHING, ["stdio"]),
    catalog: denoEntry(CATALOG, ["--tools", "2000", "--log", log]),
  });
  await using gateway = await connectGateway(servers, ["--catalog", "search"]);
  let notified = 0;
  gateway.client.setNotificationHandler(
    ToolListChangedNotificationSchema,
    () => void (notified += 1),
  );
  const listing = async () =>
    JSON.stringify((await gateway.client.listTools()).tools);
  const first = await listing();

  await t.step(
    "the listing holds Loom's tools and the two catalogue tools, nothing else",
    () => {
      const names = JSON.parse(first).map((tool: { name: string }) =>
        tool.name
      );
      assert.deepEqual(names, [
        "read_result",
        "find_in_result",
        "list_results",
        "search_tools",
        "call_tool",
      ]);
    },
  );

  await t.step(
    "every exact name is found first: real tools, and generated ones asked four ways",
    async () => {
      const real = [
        "fs__read_text_file",
        "fs__list_directory",
        "fs__search_files",
        "everything__echo",
        "everything__get-tiny-image",
        "everything__get-sum",
        "everything__trigger-long-running-operation",
      ];
      for (const name of real) {
        const own = name.split("__")[1]!;
        for (const query of [name, own, own.toUpperCase()]) {
          const { answer } = await search(gateway, { query });
          assert.equal(answer.tools[0]?.name, name, query);
        }
      }
      const generated = generatedTools(2000);
      for (let i = 0; i < generated.length; i += 97) {
        const own = generated[i]!.name;
        for (
          const query of [
            `catalog__${own}`,
            own,
            own.replaceAll("_", "-"),
            own.toUpperCase(),
          ]
        ) {
          const { answer } = await search(gateway, { query });
          assert.equal(answer.tools[0]?.name, `catalog__${own}`, query);
        }
      }
    },
  );

  await t.step(
    "words find the real servers' tools: recall in the first 5 of at least 90%, each answer within 4 KiB",
    async () => {
      let found = 0;
      for (const { query, expect } of REAL_SERVER_QUERIES) {
        const { answer, bytes } = await search(gateway, { query });
        assert.ok(bytes <= 4096, `${query}: ${bytes} bytes`);
        if (answer.tools.some((tool) => tool.name === expect)) found += 1;
      }
      assert.ok(
        found / REAL_SERVER_QUERIES.length >= 0.9,
        `${found} of ${REAL_SERVER_QUERIES.length}`,
      );
    },
  );

  await t.step(
    "detail schema and typescript answer what a call needs: the input schema, or run_code's declaration",
    async () => {
      const { answer: schema } = await search(gateway, {
        query: "everything__get-sum",
        detail: "schema",
        limit: 1,
      });
      const input = schema.tools[0]!.input_schema as { properties?: object };
      assert.deepEqual(Object.keys(input.properties ?? {}), ["a", "b"]);
      const { answer: typed } = await search(gateway, {
        query: "everything__get-sum",
        detail: "typescript",
        limit: 1,
      });
      const typescript = (typed.tools[0] as { typescript?: string }).typescript;
      assert.match(typescript ?? "", /\n {2}everything: \{\n/);
      assert.match(typescript ?? "", /\n {4}get_sum\(args: \{\n/);
    },
  );

  await t.step("a disabled tool is in no search and no call", async () => {
    const { answer } = await search(gateway, {
      query: "write_file",
      server: "fs",
      limit: 20,
    });
    assert.ok(!answer.tools.some((tool) => tool.name === "fs__write_file"));
    const refused = await gateway.call("call_tool", {
      name: "fs__write_file",
      arguments: { path: `${root}/x`, content: "x" },
    });
    assertToolError(refused, /^unknown_tool: /);
    await assert.rejects(Deno.stat(`${root}/x`));
  });

  await t.step(
    "arguments that miss the schema are refused before the upstream is called; fitting ones reach it",
    async () => {
      for (
        const [args, path] of [
          [{ sku: "ABC-1234", quantity: "two" }, "/quantity"],
          [{ quantity: 2 }, "/sku"],
          [{ sku: "ABC-1234", quantity: 2, gift: true }, "/gift"],
        ] as const
      ) {
        const refused = await gateway.call("call_tool", {
          name: "catalog__place_order",
          arguments: args,
        });
        assert.equal(refused.isError, true);
        const text = refused.content[0].text as string;
        assert.match(text, /^invalid_arguments: /);
        assert.ok(text.includes(`- ${path}: expected `), text);
        assert.ok(text.includes(JSON.stringify(STRICT_TOOL.inputSchema)));
      }
      // The upstream's own log: not one call of the tool yet.
      assert.deepEqual(await calls(log, "place_order"), []);
      const placed = await gateway.call("call_tool", {
        name: "catalog__place_order",
        arguments: { sku: "ABC-1234", quantity: 2 },
      });
      assert.notEqual(placed.isError, true);
      assert.deepEqual(await calls(log, "place_order"), [
        { sku: "ABC-1234", quantity: 2 },
      ]);
    },
  );

  await t.step(
    "an unknown name is refused with the three closest",
    async () => {
      const refused = await gateway.call("call_tool", {
        name: "fs__read_txt_file",
      });
      assert.match(
        refused.content[0].text,
        /^unknown_tool: .*closest names: fs__read_text_file, fs__read_file, /,
      );
    },
  );

  await t.step(
    "call_tool takes a real tool's path: small answers pass, large ones are offloaded and read back",
    async () => {
      const small = await gateway.call("call_tool", {
        name: "fs__read_text_file",
        arguments: { path: `${root}/notes.txt` },
      });
      assert.equal(small.content[0].text, "first line\nsecond line\n");
      const large = await gateway.call("call_tool", {
        name: "fs__read_text_file",
        arguments: { path: `${root}/big.json` },
      });
      const descriptor = JSON.parse(large.content[0].text);
      assert.equal(descriptor.server, "fs");
      assert.equal(descriptor.tool, "read_text_file");
      const read = await gateway.call("read_result", {
        reference: {
          ...descriptor.reference,
          select: { kind: "json_pointer", pointer: "/rows/1999/i" },
          rendering: "json",
        },
      });
      assert.deepEqual(read.structuredContent, { selected_json: "1999" });
    },
  );

  await t.step(
    "an upstream adds, renames and removes tools: searches follow, the listing does not move, the host hears nothing",
    async () => {
      // Each change, then searches until the catalogue shows it.
      const mutate = async (
        change: Record<string, string>,
        query: string,
        shows: (names: string[]) => boolean,
      ) => {
        await gateway.call("call_tool", {
          name: "catalog__mutate",
          arguments: change,
        });
        await searchUntil(gateway, query, shows);
      };
      await mutate(
        { op: "add", name: "summon_unicorn" },
        "summon_unicorn",
        (n) => n[0] === "catalog__summon_unicorn",
      );
      await mutate(
        { op: "rename", name: "summon_unicorn", to: "summon_dragon" },
        "summon_dragon",
        (n) => n[0] === "catalog__summon_dragon",
      );
      await mutate(
        { op: "remove", name: "create_invoice" },
        "create_invoice",
        (n) => n[0] !== "catalog__create_invoice",
      );
      const gone = await gateway.call("call_tool", {
        name: "catalog__create_invoice",
      });
      assert.match(gone.content[0].text, /^unknown_tool: /);
      assert.equal(await listing(), first);
      assert.equal(notified, 0);
    },
  );

  await t.step(
    "an upstream crashes and restarts: searches still answer, the restarted server is listed again, the listing does not move",
    async () => {
      const crashed = await gateway.call("call_tool", {
        name: "catalog__crash",
      });
      assert.match(crashed.content[0].text, /^upstream_unavailable: .*catalog/);
      assert.equal(await listing(), first);
      const { answer } = await search(gateway, { query: "summon_dragon" });
      assert.equal(answer.tools[0]?.name, "catalog__summon_dragon");
      // The next call restarts it; it comes back with its first tool list.
      const again = await gateway.call("call_tool", {
        name: "catalog__place_order",
        arguments: { sku: "XYZ-0001", quantity: 1 },
      });
      assert.notEqual(again.isError, true, JSON.stringify(again));
      await searchUntil(
        gateway,
        "create_invoice",
        (n) => n[0] === "catalog__create_invoice",
      );
      await searchUntil(
        gateway,
        "summon_dragon",
        (n) => n[0] !== "catalog__summon_dragon",
      );
      assert.equal(await listing(), first);
      assert.equal(notified, 0);
    },
  );
});

Deno.test("alwaysLoad keeps a tool listed in search mode, and --list reports the catalogue, alwaysLoad and disabled", async (t) => {
  await using dir = await tempDir();
  const servers = await serversFile(dir.path, {
    catalog: {
      ...denoEntry(CATALOG, ["--tools", "100"]),
      tools: {
        place_order: { alwaysLoad: true },
        crash: { disabled: true },
      },
    },
  });
  await t.step("--list", async () => {
    const { code, stdout } = await new Deno.Command(Deno.execPath(), {
      args: mcpArgs(["--servers", servers, "--list"]),
      cwd: REPO_ROOT,
      stdin: "null",
    }).output();
    assert.equal(code, 0);
    const text = new TextDecoder().decode(stdout);
    assert.match(
      text,
      /^catalog: search \(auto: the upstream tool definitions are [\d,]+ bytes, over 16,384\); tools\/list is [\d,]+ bytes\n/,
    );
    assert.match(
      text,
      /\n {2}place_order: as catalog__place_order, always listed \(alwaysLoad\);/,
    );
    assert.match(text, /\n {2}crash: disabled by the servers file\n/);
    assert.match(
      text,
      /\n {2}create_invoice: as catalog__create_invoice, in the catalogue \(search_tools, call_tool\);/,
    );
  });
  await t.step("tools/list", async () => {
    await using gateway = await connectGateway(servers);
    const names = (await gateway.client.listTools()).tools.map((
      tool: { name: string },
    ) => tool.name);
    assert.deepEqual(names.slice(3), [
      "search_tools",
      "call_tool",
      "catalog__place_order",
    ]);
    const crash = await gateway.call("catalog__crash");
    assert.match(crash.content[0].text, /^unknown_tool: /);
  });
});

Deno.test("loom mcp --http --catalog search answers searches while an upstream is down, and the call names the server", async () => {
  await using dir = await tempDir();
  const servers = await serversFile(dir.path, {
    catalog: denoEntry(CATALOG, ["--tools", "50"]),
  });
  await using server = await startHttp(
    ["--servers", servers, "--catalog", "search", "--call-timeout", "5s"],
    ["--insecure-no-token"],
  );
  await using host = await connectHttp(server.url, undefined);
  const before = JSON.stringify((await host.client.listTools()).tools);
  const found = await search(host, { query: "list support tickets" });
  assert.equal(found.answer.tools[0]?.name, "catalog__list_ticket");
  const crashed = await host.call("call_tool", { name: "catalog__crash" });
  assert.match(
    crashed.content[0].text,
    /^upstream_unavailable: Server catalog /,
  );
  // A second host, the upstream down: the same listing, the same answer.
  await using other = await connectHttp(server.url, undefined);
  assert.equal(JSON.stringify((await other.client.listTools()).tools), before);
  assert.deepEqual(
    (await search(other, { query: "list support tickets" })).answer,
    found.answer,
  );
});
