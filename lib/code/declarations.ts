/**
 * TypeScript declarations of upstream tools, the way code in `run_code`
 * calls them: one `declare const tools` whose members are the servers and
 * whose methods are their tools, each with its description as JSDoc, its
 * `inputSchema` as the argument type and its `outputSchema` as the type
 * `json()` returns. One generator for `run_code`'s description and for
 * `search_tools` with `detail: "typescript"`.
 *
 * An object type rather than `declare namespace`: tool names such as
 * `delete` or `import` are valid member names but not valid function names.
 * Untrusted input never breaks the text: descriptions are bounded and
 * cannot close their comment, property names that are not identifiers are
 * quoted, literals are JSON-escaped, and a tool whose types are too large
 * or too deep is declared again shallower until it fits.
 *
 * @module
 */
import type { CodeName } from "./code_names.ts";
import { cleanText, docComment } from "./_doc_comment.ts";
import { SchemaTypes, type TypeLimits } from "./_schema_type.ts";

/** One tool to declare: its code names and what its upstream lists. */
export interface DeclarableTool extends CodeName {
  /** The tool's description (untrusted: anything is accepted). */
  readonly description?: unknown;
  /** Its `inputSchema` (untrusted). */
  readonly inputSchema?: unknown;
  /** Its `outputSchema`, the type of `json(result)` (untrusted). */
  readonly outputSchema?: unknown;
}

/** Options of {@linkcode declareTools}. */
export interface DeclareOptions {
  /**
   * What a call resolves to: `mcp` (default) an MCP `CallToolResult`, whose
   * `outputSchema` types `structuredContent`; `value` the tool's own output
   * (the AI SDK's tools), typed by its output schema.
   */
  readonly results?: "mcp" | "value";
}

/** Declarations and their size. */
export interface Declarations {
  /** The TypeScript text. */
  readonly text: string;
  /** Its size in UTF-8 bytes (what the 6 KiB rule of `run_code` compares). */
  readonly bytes: number;
}

/** Characters of a tool's description. */
const TOOL_DOC_CHARS = 4000;
/** Characters of one tool's argument and result types together. */
const TOOL_TYPES_CHARS = 12_000;
/** Ever shallower renderings of one tool, until its types fit. */
const ATTEMPTS: readonly TypeLimits[] = [
  { maxDepth: 8, maxNodes: 4000 },
  { maxDepth: 4, maxNodes: 800 },
  { maxDepth: 2, maxNodes: 150 },
];
const SERVER_INDENT = "  ";
const TOOL_INDENT = "    ";

/**
 * Declarations of `tools` as one `declare const tools: {…}`: servers in the
 * order they first appear, each server's tools in the order given. Declare
 * a whole catalogue for `run_code`'s description, or a few tools for a
 * search answer; names come from {@linkcode codeNames} over the whole
 * catalogue either way. The same input always gives the same bytes.
 *
 * @param tools The tools, with their code names.
 * @returns The text and its UTF-8 size.
 *
 * @example
 * ```ts
 * import { codeNames } from "./code_names.ts";
 * import { declareTools } from "./declarations.ts";
 * import assert from "node:assert/strict";
 * const listed = [{
 *   server: "fs",
 *   name: "read-file",
 *   description: "Reads a file",
 *   inputSchema: {
 *     type: "object",
 *     properties: { path: { type: "string", description: "Where" } },
 *     required: ["path"],
 *   },
 * }];
 * const [names] = codeNames(listed.map((t) => ({ server: t.server, tool: t.name })));
 * const { text } = declareTools([{ ...names!, ...listed[0]! }]);
 * assert.match(text, /read_file\(args: \{\n/);
 * assert.match(text, /\/\*\* Where \*\/\n {6}path: string;/);
 * ```
 */
export function declareTools(
  tools: readonly DeclarableTool[],
  options: DeclareOptions = {},
): Declarations {
  const results = options.results ?? "mcp";
  const servers = new Map<string, DeclarableTool[]>();
  for (const tool of tools) {
    const list = servers.get(tool.serverName) ?? [];
    list.push(tool);
    servers.set(tool.serverName, list);
  }
  let text = "declare const tools: {\n";
  for (const [serverName, list] of servers) {
    if (serverName === "") {
      // Tools without a server sit at the top: tools.<name>.
      for (const tool of list) text += declareOne(tool, SERVER_INDENT, results);
      continue;
    }
    const server = list[0]!.server;
    if (server !== serverName) {
      text += docComment(
        `Server ${JSON.stringify(server)}`,
        SERVER_INDENT,
        TOOL_DOC_CHARS,
      );
    }
    text += `${SERVER_INDENT}${serverName}: {\n`;
    for (const tool of list) text += declareOne(tool, TOOL_INDENT, results);
    text += `${SERVER_INDENT}};\n`;
  }
  text += "};\n";
  return { text, bytes: new TextEncoder().encode(text).length };
}

/** One tool's method: JSDoc, arguments, result. */
function declareOne(
  tool: DeclarableTool,
  indent: string,
  results: "mcp" | "value",
): string {
  const notes: string[] = [];
  if (typeof tool.description === "string") {
    notes.push(cleanText(tool.description, TOOL_DOC_CHARS));
  }
  if (tool.tool !== tool.toolName) {
    notes.push(
      `${results === "mcp" ? "MCP name" : "Name"}: ${
        JSON.stringify(tool.tool)
      }`,
    );
  }
  const doc = docComment(
    notes.filter((n) => n !== "").join("\n\n"),
    indent,
    TOOL_DOC_CHARS * 2,
  );
  const signature = typesOf(tool, indent, results);
  return `${doc}${indent}${tool.toolName}${signature};\n`;
}

/** `(args: …): Promise<CallToolResult<…>>` (or `Promise<…>`), as deep as fits. */
function typesOf(
  tool: DeclarableTool,
  indent: string,
  results: "mcp" | "value",
): string {
  const wrap = (type: string | undefined) =>
    results === "value"
      ? type ?? "unknown"
      : type === undefined
      ? "CallToolResult"
      : `CallToolResult<${type}>`;
  for (const limits of ATTEMPTS) {
    const input = new SchemaTypes(tool.inputSchema, limits);
    const args = tool.inputSchema === undefined
      ? "Record<string, unknown>"
      : input.type(tool.inputSchema, indent);
    const optional = !hasRequired(input.resolved(tool.inputSchema));
    let type: string | undefined;
    if (tool.outputSchema !== undefined) {
      const output = new SchemaTypes(tool.outputSchema, limits);
      const rendered = output.type(tool.outputSchema, indent);
      if (rendered !== "unknown") type = rendered;
    }
    const result = wrap(type);
    if (args.length + result.length <= TOOL_TYPES_CHARS) {
      return `(args${optional ? "?" : ""}: ${args}): Promise<${result}>`;
    }
  }
  return `(args?: Record<string, unknown>): Promise<${wrap(undefined)}>`;
}

function hasRequired(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  const required = (schema as { required?: unknown }).required;
  return Array.isArray(required) && required.some((r) => typeof r === "string");
}
