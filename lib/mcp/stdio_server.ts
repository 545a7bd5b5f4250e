/**
 * The MCP protocol side of `loom mcp`: the official TypeScript SDK's
 * low-level `Server`, answering `tools/list` with {@linkcode MCP_TOOLS} and
 * `tools/call` through {@linkcode McpTools}, built apart from its transport
 * ({@linkcode createToolsServer}) and served here over stdio. The
 * SDK is imported when the server starts, so no other command pays for it
 * (and the bundle keeps it external). Standard output carries only
 * JSON-RPC; nothing here writes anything else to it.
 *
 * @module
 */
import type { McpTools, ToolAnswer } from "./mcp_tools.ts";
import { MCP_TOOLS } from "./tool_definitions.ts";
import { serveOverStdio } from "./stdio_loop.ts";
import { RETRIEVAL_TOOLS } from "../reference/retrieval_tools.ts";

/**
 * `_meta` of the retrieval tools: Claude Code spills a result over 50,000
 * characters to a file unless the tool allows more; a retrieval answer is
 * bounded (8 KiB of data, JSON-escaped, or one page of matches), so it must
 * reach the model as it is, not be spilled again.
 */
export const RETRIEVAL_TOOL_META: Readonly<Record<string, unknown>> = {
  "anthropic/maxResultSizeChars": 200_000,
};
import { VERSION } from "../version.ts";
import { type McpRequestExtra, traceServerRequest } from "../telemetry/mcp.ts";

/** What the server tells about itself and its end. */
export interface ServeOptions {
  /** Writes one diagnostic line to standard error. */
  readonly log: (line: string) => void;
  /** Instructions for the host's model, sent at initialisation. */
  readonly instructions?: string;
  /** How hosts reach the server, for telemetry (`stdio` by default). */
  readonly transport?: "stdio" | "http";
}

/** The result of a `tools/call`, as MCP's `CallToolResult`. */
export interface CallToolResult {
  /** The text rendering. */
  content: { type: "text"; text: string }[];
  /** The wire-format JSON of a successful call. */
  structuredContent?: Record<string, unknown>;
  /** Present (true) when the call failed. */
  isError?: true;
  /** MCP results are open objects. */
  [key: string]: unknown;
}

/**
 * The MCP result of a tool answer: `structuredContent` and its JSON as text,
 * or a tool error whose text starts with the failure code.
 *
 * @param answer What the tool answered.
 * @returns The `tools/call` result.
 *
 * @example
 * ```ts
 * import { callToolResult } from "./stdio_server.ts";
 * import assert from "node:assert/strict";
 * const failed = callToolResult({ ok: false, code: "unknown_result", message: "No stored result has the id result-9" });
 * assert.deepEqual(failed, {
 *   content: [{ type: "text", text: "unknown_result: No stored result has the id result-9" }],
 *   isError: true,
 * });
 * ```
 */
export function callToolResult(answer: ToolAnswer): CallToolResult {
  if (!answer.ok) {
    return {
      content: [{ type: "text", text: `${answer.code}: ${answer.message}` }],
      isError: true,
    };
  }
  return {
    content: [{ type: "text", text: JSON.stringify(answer.structured) }],
    structuredContent: answer.structured,
  };
}

/** The SDK pieces a tools server is built from (see `gateway/sdk.ts`). */
export interface ServerSdk {
  /** `Server` (server/index.js). */
  // deno-lint-ignore no-explicit-any
  readonly Server: any;
  /** types.js: the request schemas. */
  // deno-lint-ignore no-explicit-any
  readonly types: Record<string, any>;
}

/** An SDK server answering the tools, not yet connected to a transport. */
export interface ToolsServer {
  /** Connects the server to a transport and starts answering. */
  connect(transport: unknown): Promise<void>;
  /** Stops the server. */
  close(): Promise<void>;
  /** Called when the transport closes. */
  onclose?: () => void;
  /** Settles when every call in flight has been answered. */
  settled(): Promise<void>;
}

/**
 * Builds the MCP server of the tools, apart from its transport: `tools/list`
 * answers {@linkcode MCP_TOOLS}, `tools/call` goes through
 * {@linkcode McpTools.call}. Standard input and output connect one; HTTP
 * builds one per request over the same tools.
 *
 * @param tools The tools.
 * @param sdk The SDK's `Server` and types.
 * @param options Where diagnostics go, the instructions.
 * @returns The server, not yet connected.
 *
 * @example
 * ```ts
 * import { createToolsServer } from "./stdio_server.ts";
 * import { McpTools } from "./mcp_tools.ts";
 * import { loadSdk } from "./gateway/sdk.ts";
 * import assert from "node:assert/strict";
 * const tools = await McpTools.start({ root: await Deno.makeTempDir(), sandbox: null });
 * const server = createToolsServer(tools, await loadSdk(), { log: () => {} });
 * assert.equal(typeof server.connect, "function");
 * await server.settled();
 * await server.close();
 * tools.close();
 * ```
 */
export function createToolsServer(
  tools: McpTools,
  sdk: ServerSdk,
  options: ServeOptions,
): ToolsServer {
  const { Server, types } = sdk;
  const server = new Server(
    { name: "loom", version: VERSION },
    {
      capabilities: { tools: {} },
      ...(options.instructions === undefined
        ? {}
        : { instructions: options.instructions }),
    },
  );
  const transport = options.transport ?? "stdio";
  server.setRequestHandler(
    types.ListToolsRequestSchema,
    (request: { params?: Record<string, unknown> }, extra: McpRequestExtra) =>
      traceServerRequest(
        "tools/list",
        request,
        extra,
        transport,
        () =>
          Promise.resolve({
            tools: MCP_TOOLS.map((tool) => ({
              ...tool,
              inputSchema: tool.inputSchema as { type: "object" },
              outputSchema: tool.outputSchema as { type: "object" },
              ...(RETRIEVAL_TOOLS.some((r) => r.name === tool.name)
                ? { _meta: RETRIEVAL_TOOL_META }
                : {}),
            })),
          }),
      ),
  );
  // Calls still running when the input ends are answered before the stop.
  const inFlight = new Set<Promise<unknown>>();
  server.setRequestHandler(types.CallToolRequestSchema, (
    request: {
      params: { name: string; arguments?: Record<string, unknown> };
    },
    extra: McpRequestExtra,
  ) =>
    traceServerRequest("tools/call", request, extra, transport, async () => {
      const { name, arguments: args } = request.params;
      const call = tools.call(name, args ?? {});
      inFlight.add(call);
      try {
        const answer = await call;
        if (!answer.ok) {
          // The name is the host's: shown quoted unless it is a plain word.
          const shown = /^[a-z_]{1,32}$/.test(name)
            ? name
            : JSON.stringify(name.slice(0, 64));
          options.log(`${shown}: ${answer.code}`);
        }
        return callToolResult(answer);
      } finally {
        inFlight.delete(call);
      }
    }));
  server.onerror = (error: Error) =>
    options.log(`transport error: ${error.message}`);
  return Object.assign(server, {
    settled: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  }) as ToolsServer;
}

/**
 * Serves the tools over standard input and output until the input ends or
 * the process is asked to stop (SIGINT, SIGTERM).
 *
 * @param tools The tools (closed when the server stops).
 * @param options Where diagnostics go.
 * @returns When the server has stopped.
 */
export async function serveStdio(
  tools: McpTools,
  options: ServeOptions,
): Promise<void> {
  const [{ Server }, { StdioServerTransport }, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  const server = createToolsServer(tools, { Server, types }, options);
  try {
    await serveOverStdio(server, new StdioServerTransport(), () =>
      options.log(
        `serving ${MCP_TOOLS.length} tools over stdio, root ${tools.root}${
          tools.sandboxed ? " (bubblewrap)" : ""
        }`,
      ));
  } finally {
    tools.close();
  }
}
