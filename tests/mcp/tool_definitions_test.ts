// Hosts hand MCP tool schemas straight to the model services: one schema the
// Anthropic or OpenAI API refuses breaks every request of the host. Each of
// loom mcp's tools goes into a body of each service and through the request
// rules of lib/providers/request_rules.ts (issue 17).
import assert from "node:assert/strict";
import { MCP_TOOLS } from "../../lib/mcp/tool_definitions.ts";
import {
  checkAnthropicRequest,
  checkOpenAIRequest,
  type RuleBreach,
} from "../../lib/providers/request_rules.ts";

/** A tool as `tools/list` gives it to a host. */
interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
}

/** A model service: how a host hands it an MCP tool, and its rules. */
interface Service {
  readonly name: string;
  readonly model: string;
  tool(tool: Tool): unknown;
  check(body: unknown): RuleBreach[];
}

const SERVICES: readonly Service[] = [
  {
    name: "Anthropic",
    model: "claude-sonnet-4-5",
    tool: (t: Tool) => ({
      name: t.name,
      description: t.description,
      input_schema: t.inputSchema,
    }),
    check: checkAnthropicRequest,
  },
  {
    name: "OpenAI",
    model: "gpt-4.1",
    tool: (t: Tool) => ({
      type: "function",
      function: {
        name: t.name,
        description: t.description,
        parameters: t.inputSchema,
      },
    }),
    check: checkOpenAIRequest,
  },
];

/** The rules a request of `service` carrying `tools` breaks. */
function breaches(service: Service, tools: readonly Tool[]): RuleBreach[] {
  return service.check({
    model: service.model,
    max_tokens: 1024,
    messages: [{ role: "user", content: "Inspect events.json" }],
    tools: tools.map(service.tool),
  });
}

Deno.test("every loom mcp tool schema passes the Anthropic and OpenAI request rules, alone and all together", () => {
  for (const service of SERVICES) {
    for (const tool of MCP_TOOLS) {
      assert.deepEqual(
        breaches(service, [tool]),
        [],
        `${service.name}: ${tool.name}`,
      );
    }
    assert.deepEqual(breaches(service, MCP_TOOLS), [], service.name);
  }
});

Deno.test("the rules check does bite: the reference as a root union would break both services", () => {
  const readResult = MCP_TOOLS.find((t) => t.name === "read_result")!;
  const reference = (readResult.inputSchema.properties as Record<
    string,
    { properties: { select: unknown } }
  >)
    .reference!;
  // The selector union lifted to the root, as a naive schema would write it.
  const rootUnion = {
    ...readResult,
    inputSchema: { type: "object", ...(reference.properties.select as object) },
  };
  assert.deepEqual(
    SERVICES.map((s) => breaches(s, [rootUnion]).map((b) => b.rule)),
    [["anthropic.tool_schema_root"], ["openai.function_parameters_root"]],
  );
});

Deno.test("the tools' names fit both services and their annotations mark which only read", () => {
  for (const tool of MCP_TOOLS) {
    assert.match(tool.name, /^[a-zA-Z0-9_-]{1,64}$/);
    assert.equal(tool.inputSchema.type, "object");
    assert.equal(tool.outputSchema.type, "object");
  }
  const readOnly = MCP_TOOLS.filter((t) => t.annotations.readOnlyHint).map((
    t,
  ) => t.name);
  assert.deepEqual(readOnly, [
    "inspect_files",
    "read_result",
    "find_in_result",
    "list_results",
  ]);
  assert.ok(MCP_TOOLS.every((t) => t.annotations.openWorldHint === false));
});
