/**
 * Why the MCP server refused a tool call before any effect: its arguments
 * do not match the tool's schema, the tool is unknown, or a path is not one
 * the server may use. The host sees it as a tool error (`isError`) whose
 * text starts with the code.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * A refused MCP tool call: `invalid_arguments`, `unknown_tool`, or a path
 * refusal (`invalid_path`, `outside_root`, `symlink_escape`, `git_write`,
 * `not_a_file`, `not_regular_file`). Nothing was read, stored or written.
 *
 * @example
 * ```ts
 * import { McpToolError } from "./mcp_tool_error.ts";
 * import assert from "node:assert/strict";
 * const error = new McpToolError("outside_root", "The path lies outside the root");
 * assert.equal(error.code, "outside_root");
 * ```
 */
export class McpToolError extends LoomError.RangeError<"McpToolError"> {}
