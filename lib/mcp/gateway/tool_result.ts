/**
 * Tool results as the gateway answers them: an MCP `CallToolResult` (an
 * open object), a tool error whose text starts with a stable code, and the
 * serialized size the `--report` figures count.
 *
 * @module
 */

/** A `tools/call` result as MCP sends it (an open object). */
export type McpResult = Record<string, unknown>;

/**
 * A tool error (`isError`) whose text is `<code>: <message>`.
 *
 * @param code The stable code.
 * @param message What went wrong and why.
 * @returns The MCP result.
 *
 * @example
 * ```ts
 * import { toolError } from "./tool_result.ts";
 * import assert from "node:assert/strict";
 * assert.equal(toolError("unknown_tool", "No such tool").isError, true);
 * ```
 */
export function toolError(code: string, message: string): McpResult {
  return {
    content: [{ type: "text", text: `${code}: ${message}` }],
    isError: true,
  };
}

/**
 * The UTF-8 length of a value serialized as JSON.
 *
 * @param value Any JSON value.
 * @returns Its size in bytes.
 *
 * @example
 * ```ts
 * import { jsonBytes } from "./tool_result.ts";
 * import assert from "node:assert/strict";
 * assert.equal(jsonBytes({ a: "é" }), 10);
 * ```
 */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}
