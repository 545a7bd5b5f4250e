/**
 * The MCP SDK's modules the gateway uses, imported when the gateway starts
 * (as `stdio_server.ts` does): no other command pays for them, and the
 * single-file bundle keeps them external. Under Deno the SDK's own types
 * resolve to `any`, so they are named loosely here.
 *
 * @module
 */

// deno-lint-ignore no-explicit-any
type Loose = any;

/** The SDK classes and schemas the gateway uses. */
export interface Sdk {
  /** `Client` (client/index.js). */
  readonly Client: Loose;
  /** `StreamableHTTPClientTransport`. */
  readonly StreamableHTTPClientTransport: Loose;
  /** `SSEClientTransport`. */
  readonly SSEClientTransport: Loose;
  /** `Server` (server/index.js). */
  readonly Server: Loose;
  /** `StdioServerTransport`. */
  readonly StdioServerTransport: Loose;
  /** `WebStandardStreamableHTTPServerTransport` (Streamable HTTP over `Request`/`Response`). */
  readonly WebStandardStreamableHTTPServerTransport: Loose;
  /** types.js: request schemas, `McpError`, `ErrorCode`, … */
  readonly types: Record<string, Loose>;
}

/**
 * Imports the SDK's modules.
 *
 * @returns The classes and schemas.
 *
 * @example
 * ```ts
 * import { loadSdk } from "./sdk.ts";
 * import assert from "node:assert/strict";
 * const sdk = await loadSdk();
 * assert.equal(typeof sdk.Client, "function");
 * assert.ok(sdk.types.CallToolResultSchema.safeParse({ content: [] }).success);
 * ```
 */
export async function loadSdk(): Promise<Sdk> {
  const [client, http, sse, server, stdio, web, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    SSEClientTransport: sse.SSEClientTransport,
    Server: server.Server,
    StdioServerTransport: stdio.StdioServerTransport,
    WebStandardStreamableHTTPServerTransport:
      web.WebStandardStreamableHTTPServerTransport,
    types,
  };
}
