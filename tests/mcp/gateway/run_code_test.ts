// The gateway's run_code room over fake upstreams (the real gateway and
// servers are in run_code_gateway_test.ts): its description, the servers
// file's "code": false, the persistence rule on what a run stores, and the
// confinement in every answer's _meta.
import assert from "node:assert/strict";
import { RUN_CODE, RunCode } from "../../../lib/mcp/gateway/run_code.ts";
import type { CodeCatalogEntry } from "../../../lib/mcp/gateway/run_code.ts";
import { parseGatewayConfig } from "../../../lib/mcp/gateway/gateway_config.ts";
import { ToolFigureBook } from "../../../lib/mcp/gateway/tool_figures.ts";
import { loadSdk } from "../../../lib/mcp/gateway/sdk.ts";
import { CodeRunner } from "../../../lib/code/code_runner.ts";
import {
  ResultStore,
  type StoredResult,
} from "../../../lib/store/result_store.ts";
import { HAVE_BWRAP } from "../../security/_bwrap.ts";

const sdk = await loadSdk();

/** Upstreams that answer `text` with the tool's name and arguments. */
function catalogue(
  file: Record<string, unknown>,
  tools: Record<
    string,
    { name: string; description?: string; inputSchema?: unknown }[]
  >,
): CodeCatalogEntry[] {
  const config = parseGatewayConfig(JSON.stringify({ mcpServers: file }), {
    file: "f",
    env: {},
  });
  return config.servers.flatMap((entry) =>
    (tools[entry.name] ?? []).map((tool) => ({
      upstream: {
        name: entry.name,
        entry,
        request: (
          _method: string,
          params: { name: string; arguments: unknown },
        ) =>
          Promise.resolve({
            result: {
              content: [{
                type: "text",
                text: JSON.stringify({
                  tool: params.name,
                  args: params.arguments,
                }),
              }],
            },
          }),
      } as unknown as CodeCatalogEntry["upstream"],
      tool: { inputSchema: { type: "object" }, ...tool },
    }))
  );
}

interface Admitted {
  readonly id: string;
  readonly note: Readonly<Record<string, unknown>> | undefined;
}

/** A store whose backing records the note of each result. */
function notingStore(): { store: ResultStore; admitted: Admitted[] } {
  const admitted: Admitted[] = [];
  let n = 0;
  const store = new ResultStore({
    backing: {
      admit: (result: Omit<StoredResult, "id">, note) => {
        const stored = { ...result, id: `result-${++n}` };
        admitted.push({ id: stored.id, note });
        return Promise.resolve(stored);
      },
      refresh: () => Promise.resolve([]),
    },
  });
  return { store, admitted };
}

const FILE = {
  fs: {
    command: "x",
    persist: true,
    tools: { write_file: { code: false }, read_any: { selfReading: true } },
  },
  notes: { command: "x", code: false },
};
const TOOLS = {
  fs: [
    {
      name: "read-file",
      description: "Reads a file",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
      },
    },
    { name: "write_file" },
    { name: "read_any" },
  ],
  notes: [{ name: "list" }],
};

Deno.test("RunCode: its description declares the callable tools, the same bytes on every listing", async () => {
  await using runner = await CodeRunner.start({ unconfined: !HAVE_BWRAP });
  let version = 1;
  const entries = catalogue(FILE, TOOLS);
  const runCode = new RunCode({
    runner,
    sdk,
    store: new ResultStore(),
    offloadBytes: 8192,
    maxResultBytes: 1 << 20,
    figures: new ToolFigureBook(),
    catalogue: () => entries,
    version: () => version,
  });
  const first = runCode.definition;
  assert.equal(first.name, RUN_CODE);
  const text = first.description as string;
  assert.match(
    text,
    /read_file\(args: \{ path: string \}\): Promise<CallToolResult>;/,
  );
  assert.match(text, /MCP name: "read-file"/);
  assert.doesNotMatch(text, /write_file|notes/);
  version++;
  assert.equal(JSON.stringify(runCode.definition), JSON.stringify(first));
  assert.equal(runCode.definition.description, text);
  // Past 6 KiB of declarations: the names, and where the types are.
  const many = catalogue({ big: { command: "x" } }, {
    big: Array.from({ length: 60 }, (_, i) => ({
      name: `tool_${i}`,
      description: `Does thing number ${i} with great care and at some length`,
      inputSchema: {
        type: "object",
        properties: {
          a: { type: "string", description: "The first argument of it" },
        },
      },
    })),
  });
  const big = new RunCode({
    runner,
    sdk,
    store: new ResultStore(),
    offloadBytes: 8192,
    maxResultBytes: 1 << 20,
    figures: new ToolFigureBook(),
    catalogue: () => many,
    version: () => 0,
  });
  const names = big.definition.description as string;
  assert.match(names, /tools\.big: tool_0, tool_1, .*tool_59/);
  assert.match(names, /inputSchema of the gateway's tool <server>__<tool>/);
  assert.doesNotMatch(names, /declare const tools/);
  // In search mode the description names no tool: constant whatever the upstreams.
  const search = new RunCode({
    runner,
    sdk,
    store: new ResultStore(),
    offloadBytes: 8192,
    maxResultBytes: 1 << 20,
    figures: new ToolFigureBook(),
    catalogue: () => entries,
    version: () => version++,
    describe: () => "search",
  });
  const once = search.definition.description;
  assert.match(once as string, /search_tools with detail: "typescript"/);
  assert.equal(search.definition.description, once);
});

Deno.test('RunCode: "code": false keeps a tool or a server out of reach, and says so', async () => {
  await using runner = await CodeRunner.start({ unconfined: !HAVE_BWRAP });
  const runCode = new RunCode({
    runner,
    sdk,
    store: new ResultStore(),
    offloadBytes: 8192,
    maxResultBytes: 1 << 20,
    figures: new ToolFigureBook(),
    catalogue: () => catalogue(FILE, TOOLS),
    version: () => 0,
  });
  const answer = await runCode.call({
    code: `const out = [json(await tools.fs.read_file({ path: "a" }))];
      for (const [s, t] of [["fs", "write_file"], ["notes", "list"]]) {
        try { await callTool(s, t, {}); } catch (e) { out.push([e.code, e.message]); }
      }
      out.push("write_file" in tools.fs);
      return out;`,
  }, {});
  assert.deepEqual(
    (answer.structuredContent as { result: unknown }).result,
    [
      { tool: "read-file", args: { path: "a" } },
      [
        "code_disabled",
        'fs/write_file is not callable from code: the servers file says "code": false',
      ],
      [
        "code_disabled",
        'notes/list is not callable from code: the servers file says "code": false',
      ],
      false,
    ],
  );
  assert.deepEqual(answer._meta, {
    "loom/code": { confinement: HAVE_BWRAP ? "bubblewrap" : "deno-flags-only" },
  });
});

Deno.test("RunCode: what a run stores is persisted only when every tool it called is, and never after a read", async () => {
  await using runner = await CodeRunner.start({ unconfined: !HAVE_BWRAP });
  const { store, admitted } = notingStore();
  const runCode = new RunCode({
    runner,
    sdk,
    store,
    offloadBytes: 256,
    maxResultBytes: 1 << 20,
    figures: new ToolFigureBook(),
    catalogue: () => catalogue(FILE, TOOLS),
    version: () => 0,
  });
  const big = "Array.from({ length: 200 }, (_, i) => ({ i }))";
  const run = async (code: string) => {
    const before = admitted.length;
    const answer = await runCode.call({ code }, {});
    assert.notEqual(answer.isError, true, JSON.stringify(answer));
    return {
      answer: answer.structuredContent as Record<string, unknown>,
      notes: admitted.slice(before).map((a) =>
        a.note as { persist: boolean; call: Record<string, unknown> }
      ),
    };
  };
  const persistable = await run(
    `await tools.fs.read_file({ path: "a" }); const d = await loom.store("a,b\\n1,2", { mediaType: "text/csv" }); return { d, rows: ${big} };`,
  );
  assert.deepEqual(persistable.notes.map((n) => n.persist), [true, true]);
  assert.deepEqual(
    { ...persistable.notes[1]!.call, arguments: undefined },
    {
      server: "loom",
      tool: "run_code",
      part: "content[0]",
      arguments: undefined,
    },
  );
  assert.match(
    String((persistable.notes[1]!.call.arguments as { code: string }).code),
    /loom\.store/,
  );
  const stored = persistable.answer.result_stored as {
    result: string;
    media_type: string;
  };
  assert.equal(stored.media_type, "application/json");
  const csv =
    (JSON.parse(new TextDecoder().decode(store.get(stored.result)!.bytes)) as {
      d: { media_type: string };
    }).d;
  assert.equal(csv.media_type, "text/csv");
  const selfReading = await run(`await tools.fs.read_any({}); return ${big};`);
  assert.deepEqual(selfReading.notes.map((n) => n.persist), [false]);
  const reader = await run(
    `await loom.read(${
      JSON.stringify(
        store.get("result-1") &&
          { result: "result-1", sha256: store.get("result-1")!.sha256 },
      )
    }); return ${big};`,
  );
  assert.deepEqual(reader.notes.map((n) => n.persist), [false]);
  const logs = await run(
    `for (let i = 0; i < 100; i++) console.log("x".repeat(100)); return 1;`,
  );
  assert.equal(logs.answer.logs_truncated, true);
  assert.deepEqual(logs.notes.map((n) => n.persist), [true]);
});
