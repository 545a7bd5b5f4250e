/**
 * The five tools `loom mcp` offers, as MCP `tools/list` describes them:
 * names, descriptions, JSON Schema (2020-12) of their inputs and outputs, and
 * the annotations that tell hosts which tools only read. The three retrieval
 * tools are the shared definitions of `lib/reference/retrieval_tools.ts`. Hosts hand these
 * input schemas straight to the Anthropic and OpenAI APIs, so each is a
 * plain object at its root (no root `anyOf`, `oneOf`, `allOf`, `enum` or
 * `not`), with names that fit `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * @module
 */
import {
  closedSchema as closed,
  type JsonSchema,
  REFERENCE_SCHEMA as REFERENCE,
  RETRIEVAL_TOOLS,
  type RetrievalToolName,
  type ToolAnnotations,
} from "../reference/retrieval_tools.ts";

export type { JsonSchema };

/** MCP tool annotations (hints for the host; the server enforces nothing by them). */
export type McpToolAnnotations = ToolAnnotations;

/** One tool of the MCP server, as `tools/list` answers it. */
export interface McpToolDefinition {
  /** The tool name. */
  readonly name: McpToolName;
  /** A human-readable title. */
  readonly title: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** JSON Schema of the arguments (`type: object` at the root). */
  readonly inputSchema: JsonSchema;
  /** JSON Schema of the `structuredContent` of a successful call. */
  readonly outputSchema: JsonSchema;
  /** Hints for the host. */
  readonly annotations: McpToolAnnotations;
}

/** The names of the MCP server's tools. */
export type McpToolName =
  | "inspect_files"
  | RetrievalToolName
  | "write_file";

const DIGEST = { type: "string", pattern: "^[0-9a-f]{64}$" } as const;
const INDEX = { type: "integer", minimum: 0 } as const;

const DESCRIPTOR: JsonSchema = {
  type: "object",
  description:
    "A result descriptor: result id, sha256, origin, capture, utf8_bytes, a preview of at most 1,024 bytes and a whole-result reference (or result_unavailable)",
  properties: {
    result: { type: "string" },
    sha256: DIGEST,
    origin: { type: "string" },
    capture: { type: "string", enum: ["complete", "partial"] },
    utf8_bytes: INDEX,
    preview: { type: "string" },
    preview_truncated: { type: "boolean" },
    preview_start_byte: INDEX,
    preview_end_byte: INDEX,
    reference: { type: "object" },
    result_unavailable: { type: "string", enum: ["store_full", "too_large"] },
  },
  required: [
    "origin",
    "capture",
    "utf8_bytes",
    "preview",
    "preview_truncated",
    "preview_start_byte",
    "preview_end_byte",
  ],
  additionalProperties: false,
};

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/**
 * The tools, in the order `tools/list` shows them.
 *
 * @example
 * ```ts
 * import { MCP_TOOLS } from "./tool_definitions.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(MCP_TOOLS.map((t) => t.name), ["inspect_files", "read_result", "find_in_result", "list_results", "write_file"]);
 * assert.ok(MCP_TOOLS.every((t) => t.inputSchema.type === "object"));
 * ```
 */
export const MCP_TOOLS: readonly McpToolDefinition[] = [
  {
    name: "inspect_files",
    title: "Inspect files",
    description:
      "Store files of the root in Loom's result store and answer one descriptor per file: result id, sha256, size, a preview of at most 1,024 bytes and a whole-file reference. The full text is never returned: read exact parts with read_result (bytes, lines or a JSON pointer). Paths are relative to the root (or absolute inside it); when one path cannot be read the call fails and stores nothing.",
    inputSchema: closed({
      paths: {
        type: "array",
        items: { type: "string", minLength: 1 },
        minItems: 1,
        maxItems: 64,
        description: "Files to inspect, relative to the server's root",
      },
    }, ["paths"]),
    outputSchema: closed({
      files: { type: "array", items: DESCRIPTOR },
    }, ["files"]),
    annotations: { title: "Inspect files", ...READ_ONLY },
  },
  ...RETRIEVAL_TOOLS,
  {
    name: "write_file",
    title: "Write a file",
    description:
      "Write a file inside the root, atomically, composed from literal strings and references to stored results (copied exactly, digest-checked, without retyping them). Writes into .git and through symlinks leaving the root are refused. Answers the new file's descriptor.",
    inputSchema: closed({
      path: {
        type: "string",
        minLength: 1,
        description: "The file to write, relative to the server's root",
      },
      contents: {
        type: "array",
        maxItems: 256,
        description:
          "The file's contents in order: each item a literal string or a reference to (part of) a stored result",
        items: { anyOf: [{ type: "string" }, REFERENCE] },
      },
    }, ["path", "contents"]),
    outputSchema: DESCRIPTOR,
    annotations: {
      title: "Write a file",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
];
