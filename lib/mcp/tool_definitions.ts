/**
 * The four tools `loom mcp` offers, as MCP `tools/list` describes them:
 * names, descriptions, JSON Schema (2020-12) of their inputs and outputs, and
 * the annotations that tell hosts which tools only read. Hosts hand these
 * input schemas straight to the Anthropic and OpenAI APIs, so each is a
 * plain object at its root (no root `anyOf`, `oneOf`, `allOf`, `enum` or
 * `not`), with names that fit `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * @module
 */

/** A JSON Schema object, as plain JSON. */
export type JsonSchema = { readonly [key: string]: unknown };

/** MCP tool annotations (hints for the host; the server enforces nothing by them). */
export interface McpToolAnnotations {
  /** A human-readable title. */
  readonly title: string;
  /** The tool changes nothing outside the server's own result store. */
  readonly readOnlyHint: boolean;
  /** The tool may overwrite or delete what is there. */
  readonly destructiveHint: boolean;
  /** Calling it again with the same arguments changes nothing more. */
  readonly idempotentHint: boolean;
  /** The tool reaches only the server's root, never the open world. */
  readonly openWorldHint: boolean;
}

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
  | "read_result"
  | "list_results"
  | "write_file";

const DIGEST = { type: "string", pattern: "^[0-9a-f]{64}$" } as const;
const INDEX = { type: "integer", minimum: 0 } as const;

function closed(
  properties: Record<string, unknown>,
  required: readonly string[],
  extra: Record<string, unknown> = {},
): JsonSchema {
  return {
    type: "object",
    properties,
    required: [...required],
    additionalProperties: false,
    ...extra,
  };
}

const SELECTOR: JsonSchema = {
  description:
    "What to select: the whole result, bytes [start, end) on UTF-8 character boundaries, lines start..end (one-based, inclusive), or one RFC 6901 JSON pointer",
  anyOf: [
    closed({ kind: { type: "string", const: "whole" } }, ["kind"]),
    closed(
      { kind: { type: "string", const: "bytes" }, start: INDEX, end: INDEX },
      ["kind", "start", "end"],
    ),
    closed(
      {
        kind: { type: "string", const: "lines" },
        start: { type: "integer", minimum: 1 },
        end: { type: "integer", minimum: 1 },
      },
      ["kind", "start", "end"],
    ),
    closed(
      {
        kind: { type: "string", const: "json_pointer" },
        pointer: { type: "string" },
      },
      ["kind", "pointer"],
    ),
  ],
};

/** The wire-format reference (wire-formats.md "Reference"). */
const REFERENCE: JsonSchema = closed({
  result: {
    type: "string",
    minLength: 1,
    description: "The stored result's id, e.g. result-3",
  },
  sha256: {
    ...DIGEST,
    description: "The stored result's SHA-256 (from its descriptor)",
  },
  select: SELECTOR,
  rendering: {
    type: "string",
    enum: ["text", "json"],
    description:
      "text (default) decodes a string value; json returns a JSON value's exact lexeme (json_pointer only)",
  },
}, ["result", "sha256", "select"]);

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
 * assert.deepEqual(MCP_TOOLS.map((t) => t.name), ["inspect_files", "read_result", "list_results", "write_file"]);
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
  {
    name: "read_result",
    title: "Read a stored result",
    description:
      "Read part of a stored result by verified reference: the digest must match the stored content. Select bytes, lines or one RFC 6901 JSON pointer; at most 8 KiB per answer. Answers {selected_text} or {selected_json}; a failure is a tool error whose text starts with its code (digest_mismatch, unknown_result, pointer_not_found, answer_too_large, …).",
    inputSchema: closed({ reference: REFERENCE }, ["reference"]),
    outputSchema: closed(
      {
        selected_text: { type: "string" },
        selected_json: { type: "string" },
      },
      [],
      { minProperties: 1, maxProperties: 1 },
    ),
    annotations: { title: "Read a stored result", ...READ_ONLY },
  },
  {
    name: "list_results",
    title: "List stored results",
    description:
      "List the stored results, at most 8 per page, each with its origin, size and a whole-result reference. Pass next_offset of one page as offset to get the next; it is null on the last page.",
    inputSchema: closed({
      offset: {
        ...INDEX,
        description: "Index of the first result to list (default 0)",
      },
    }, []),
    outputSchema: closed({
      results: { type: "array", items: { type: "object" } },
      next_offset: { type: ["integer", "null"] },
    }, ["results", "next_offset"]),
    annotations: { title: "List stored results", ...READ_ONLY },
  },
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
