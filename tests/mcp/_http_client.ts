// Transition only (issue 39): the MCP test kit is `tests/_kit/mcp.ts`. These
// names keep tests written against the old client working until the final
// pass of issue 39 removes this file; new tests import the kit.
import type { McpConnection } from "../_kit/mcp.ts";

export {
  connectHttp,
  type HttpServer,
  initializeRequest,
  startHttp,
  tokenFile,
} from "../_kit/mcp.ts";
/** @deprecated Use `McpConnection` of `tests/_kit/mcp.ts`. */
export type HttpClient = McpConnection;
