// The tests' catalogue server: a stdio MCP server (raw JSON-RPC, no SDK)
// with a strict tool, tools that change its own listing or crash it, and
// any number of generated tools, listed in pages of 500. With --log FILE it
// appends every request it receives (method and params) as a JSON line, so
// a test can show what reached it and what never did.
// Usage: deno run _catalog_server.ts [--tools N] [--log FILE]
import {
  type CatalogTool,
  CONTROL_TOOLS,
  generatedTools,
  STRICT_TOOL,
} from "./_catalog_tools.ts";
import {
  answerInitialize,
  answerText as answer,
  send as out,
  stdinLines,
} from "./_stdin_lines.ts";

const flag = (name: string) => {
  const i = Deno.args.indexOf(name);
  return i < 0 ? undefined : Deno.args[i + 1];
};
const logFile = flag("--log");
const tools: CatalogTool[] = [
  STRICT_TOOL,
  ...CONTROL_TOOLS,
  ...generatedTools(Number(flag("--tools") ?? 0)),
];
const PAGE = 500;

for await (const line of stdinLines()) handle(JSON.parse(line));

// deno-lint-ignore no-explicit-any
function handle(message: { id?: unknown; method?: string; params?: any }) {
  const { id, method, params } = message;
  if (logFile !== undefined && method !== undefined) {
    Deno.writeTextFileSync(logFile, JSON.stringify({ method, params }) + "\n", {
      append: true,
    });
  }
  if (id === undefined || method === undefined) return;
  if (method === "initialize") {
    answerInitialize(id, params, "catalog", { tools: { listChanged: true } });
    return;
  }
  if (method === "tools/list") {
    const from = Number(params?.cursor ?? 0);
    out({
      jsonrpc: "2.0",
      id,
      result: {
        tools: tools.slice(from, from + PAGE),
        ...(from + PAGE < tools.length
          ? { nextCursor: String(from + PAGE) }
          : {}),
      },
    });
    return;
  }
  if (method !== "tools/call") {
    out({ jsonrpc: "2.0", id, error: { code: -32601, message: "no" } });
    return;
  }
  const args = params.arguments ?? {};
  switch (params.name) {
    case "crash":
      Deno.exit(1);
      break;
    case "mutate": {
      const at = tools.findIndex((t) => t.name === args.name);
      if (args.op === "add") {
        tools.push({
          name: args.name,
          description: `Added while running: ${args.name}`,
          inputSchema: { type: "object", properties: {} },
        });
      } else if (at >= 0 && args.op === "remove") {
        tools.splice(at, 1);
      } else if (at >= 0 && args.op === "rename") {
        tools[at] = { ...tools[at]!, name: args.to };
      }
      out({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      answer(id, `${args.op} ${args.name}`);
      return;
    }
    default:
      answer(id, `${params.name} ${JSON.stringify(args)}`);
  }
}
