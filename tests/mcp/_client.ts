// Transition only (issue 39): the MCP test kit is `tests/_kit/mcp.ts`. These
// names keep tests written against the old client working until the final
// pass of issue 39 removes this file; new tests import the kit.
import {
  connectRoot,
  type ListedTool,
  mcpArgs,
  type McpConnection,
  textOf,
  type ToolAnswer,
} from "../_kit/mcp.ts";
import { LOOM_PERMISSIONS } from "../_kit/repo.ts";

export { type ListedTool, textOf };
/** @deprecated Use `LOOM_PERMISSIONS` of `tests/_kit/repo.ts`. */
export const SERVER_PERMISSIONS: readonly string[] = LOOM_PERMISSIONS;
/** @deprecated Use `ToolAnswer` of `tests/_kit/mcp.ts`. */
export type ToolResult = ToolAnswer;
/** @deprecated Use `McpConnection` of `tests/_kit/mcp.ts`. */
export type Connected = McpConnection;

/** @deprecated Use `mcpArgs(["--root", root, ...extra])`. */
export function serverArgs(
  root: string,
  extra: readonly string[] = [],
): string[] {
  return mcpArgs(["--root", root, ...extra]);
}

/** @deprecated Use `connectRoot` of `tests/_kit/mcp.ts`. */
export function connect(
  root: string,
  extra: readonly string[] = [],
): Promise<McpConnection> {
  return connectRoot(root, extra);
}
