/**
 * The MCP tools' arguments, checked against closed schemas that match
 * `tool_definitions.ts`. References themselves are checked later by the
 * reference module, so a malformed one gets the wire format's
 * `invalid_reference` code rather than a generic one.
 *
 * @module
 */
import { z } from "zod";
import { describeIssue } from "../reference/schema.ts";
import { McpToolError } from "./mcp_tool_error.ts";

/** Checked arguments of one tool call. */
export type ToolArguments =
  | { readonly tool: "inspect_files"; readonly paths: readonly string[] }
  | { readonly tool: "read_result"; readonly reference: unknown }
  | { readonly tool: "list_results"; readonly offset: unknown }
  | {
    readonly tool: "write_file";
    readonly path: string;
    readonly contents: readonly unknown[];
  };

const SCHEMAS = {
  inspect_files: z.strictObject({
    paths: z.array(z.string()).min(1).max(64),
  }),
  read_result: z.strictObject({ reference: z.unknown() }),
  list_results: z.strictObject({ offset: z.unknown().optional() }),
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
  const parsed = SCHEMAS[tool].safeParse(args ?? {});
  if (!parsed.success) {
    throw new McpToolError(
      "invalid_arguments",
      `The arguments of ${tool} do not match its schema: ${
        describeIssue(parsed.error)
      }`,
    );
  }
  const value = parsed.data as Record<string, unknown>;
  switch (tool) {
    case "inspect_files":
      return { tool, paths: value.paths as string[] };
    case "read_result":
      return { tool, reference: value.reference };
    case "list_results":
      return { tool, offset: value.offset ?? 0 };
    case "write_file":
      return {
        tool,
        path: value.path as string,
        contents: value.contents as unknown[],
      };
  }
}
