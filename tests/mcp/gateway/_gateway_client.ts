// Transition only (issue 39): the MCP test kit is `tests/_kit/mcp.ts`. These
// names keep tests written against the old client working until the final
// pass of issue 39 removes this file; new tests import the kit.
import {
  connectGateway as kitConnectGateway,
  connectStdio,
  denoEntry,
  EVERYTHING,
  FAULT,
  FILESYSTEM,
  fillTree,
  mcpArgs,
  type McpConnection,
} from "../../_kit/mcp.ts";

export { denoEntry, EVERYTHING, FAULT, FILESYSTEM, fillTree };
/** @deprecated Use `McpConnection` of `tests/_kit/mcp.ts`. */
export type Connected = McpConnection;

/** @deprecated Use `mcpArgs(["--servers", servers, ...extra], denoFlags)`. */
export function gatewayArgs(
  servers: string,
  extra: readonly string[] = [],
  denoFlags: readonly string[] = [],
): string[] {
  return mcpArgs(["--servers", servers, ...extra], denoFlags);
}

/** @deprecated Use `connectStdio(command, args, {capabilities, env})`. */
export function connectTo(
  command: string,
  args: readonly string[],
  capabilities: Record<string, unknown> = {},
  env: Readonly<Record<string, string>> = {},
): Promise<McpConnection> {
  return connectStdio(command, args, { capabilities, env });
}

/** @deprecated Use `connectGateway(servers, extra, {capabilities, ...})`. */
export function connectGateway(
  servers: string,
  extra: readonly string[] = [],
  capabilities: Record<string, unknown> = {},
  options: {
    readonly env?: Readonly<Record<string, string>>;
    readonly denoFlags?: readonly string[];
  } = {},
): Promise<McpConnection> {
  return kitConnectGateway(servers, extra, { capabilities, ...options });
}
