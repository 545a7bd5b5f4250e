/**
 * The MCP tools' arguments, checked against closed schemas that match
 * `tool_definitions.ts`. The retrieval tools' arguments and references are
 * checked by the reference module, so a malformed reference gets the wire
 * format's `invalid_reference` code rather than a generic one.
 *
 * @module
 */
import { z } from "zod";
import { checkArguments } from "../reference/schema.ts";
import { McpToolError } from "./mcp_tool_error.ts";
import type { RetrievalToolName } from "../reference/retrieval_tools.ts";

/** Checked arguments of one tool call. */
export type ToolArguments =
  | { readonly tool: "inspect_files"; readonly paths: readonly string[] }
  | { readonly tool: RetrievalToolName; readonly args: unknown }
  | {
    readonly tool: "write_file";
    readonly path: string;
    readonly contents: readonly unknown[];
  };

const SCHEMAS = {
  inspect_files: z.strictObject({
    paths: z.array(z.string()).min(1).max(64),
  }),
  // The retrieval tools check their own arguments (lib/reference/retrieval.ts).
  read_result: z.unknown(),
  find_in_result: z.unknown(),
  list_results: z.unknown(),
  write_file: z.strictObject({
    path: z.string(),
    contents: z.array(z.union([z.string(), z.record(z.string(), z.unknown())]))
      .max(256),
  }),
} as const;

/**
 * Checks a tool call's name and arguments.
 *
 * @throws {McpToolError} `unknown_tool` or `invalid_arguments`.
 */
export function parseToolArguments(
  name: string,
  args: unknown,
): ToolArguments {
  if (!Object.hasOwn(SCHEMAS, name)) {
    throw new McpToolError(
      "unknown_tool",
      `${
        JSON.stringify(String(name).slice(0, 64))
      } is not a tool of this server; its tools are ${
        Object.keys(SCHEMAS).join(", ")
      }`,
    );
  }
  const tool = name as keyof typeof SCHEMAS;
  const checked = checkArguments(SCHEMAS[tool], args ?? {}, tool);
  if (!checked.ok) throw new McpToolError("invalid_arguments", checked.message);
  const value = checked.value as Record<string, unknown>;
  switch (tool) {
    case "inspect_files":
      return { tool, paths: value.paths as string[] };
    case "read_result":
    case "find_in_result":
    case "list_results":
      return { tool, args: value };
    case "write_file":
      return {
        tool,
        path: value.path as string,
        contents: value.contents as unknown[],
      };
  }
}
