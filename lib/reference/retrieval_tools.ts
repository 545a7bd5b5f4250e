/**
 * The retrieval tools as a host or SDK lists them: names, descriptions,
 * JSON Schema (2020-12) of their inputs and outputs, and annotations. One
 * definition serves `loom mcp`, the gateway and every SDK adapter, each of
 * which only turns it into its own tool form. Each input schema is a plain
 * object at its root (the Anthropic and OpenAI rules refuse a root
 * `anyOf`), with names that fit `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * @module
 */
import { MAX_READ_BYTES } from "./retrieval.ts";
import { DEFAULT_MAX_MATCHES, MAX_MATCHES } from "./find_in_result.ts";

/** A JSON Schema object, as plain JSON. */
export type JsonSchema = { readonly [key: string]: unknown };

/** MCP-style tool annotations (hints for the host; nothing is enforced by them). */
export interface ToolAnnotations {
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

/** The names of the retrieval tools. */
export type RetrievalToolName =
  | "read_result"
  | "find_in_result"
  | "list_results";

/** One retrieval tool, as `tools/list` answers it. */
export interface RetrievalToolDefinition {
  /** The tool name. */
  readonly name: RetrievalToolName;
  /** A human-readable title. */
  readonly title: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** JSON Schema of the arguments (`type: object` at the root). */
  readonly inputSchema: JsonSchema;
  /** JSON Schema of the structured answer of a successful call. */
  readonly outputSchema: JsonSchema;
  /** Hints for the host. */
  readonly annotations: ToolAnnotations;
}

const DIGEST = { type: "string", pattern: "^[0-9a-f]{64}$" } as const;
const INDEX = { type: "integer", minimum: 0 } as const;

/**
 * A closed object schema (`additionalProperties: false`).
 *
 * @param properties The properties.
 * @param required The required property names.
 * @param extra More keywords.
 * @returns The schema.
 */
export function closedSchema(
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
    closedSchema({ kind: { type: "string", const: "whole" } }, ["kind"]),
    closedSchema(
      { kind: { type: "string", const: "bytes" }, start: INDEX, end: INDEX },
      ["kind", "start", "end"],
    ),
    closedSchema(
      {
        kind: { type: "string", const: "lines" },
        start: { type: "integer", minimum: 1 },
        end: { type: "integer", minimum: 1 },
      },
      ["kind", "start", "end"],
    ),
    closedSchema(
      {
        kind: { type: "string", const: "json_pointer" },
        pointer: { type: "string" },
      },
      ["kind", "pointer"],
    ),
  ],
};

/** The wire-format reference (wire-formats.md "Reference"), as JSON Schema. */
export const REFERENCE_SCHEMA: JsonSchema = closedSchema({
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

const READ_ONLY: Omit<ToolAnnotations, "title"> = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

const NEXT = {
  type: "object",
  description:
    "A bytes reference to the rest of the selection: read it to continue",
};

/** What a whole read of a stored image, audio or blob answers beside its content block. */
const MEDIA = closedSchema(
  {
    type: { type: "string", enum: ["image", "audio", "resource"] },
    mime_type: { type: "string" },
    bytes: INDEX,
  },
  ["type", "bytes"],
  {
    description:
      "The stored result is an image, audio or blob: the answer's content holds it as the content block it came as",
  },
);

/**
 * The three retrieval tools, in the order hosts list them.
 *
 * @example
 * ```ts
 * import { RETRIEVAL_TOOLS } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * assert.deepEqual(RETRIEVAL_TOOLS.map((t) => t.name), ["read_result", "find_in_result", "list_results"]);
 * assert.ok(RETRIEVAL_TOOLS.every((t) => t.inputSchema.type === "object" && t.annotations.readOnlyHint));
 * ```
 */
export const RETRIEVAL_TOOLS: readonly RetrievalToolDefinition[] = [
  {
    name: "read_result",
    title: "Read a stored result",
    description:
      `Read part of a stored result by verified reference: the digest must match the stored content. Select the whole result, bytes, lines or one RFC 6901 JSON pointer. Answers {selected_text} or {selected_json} (a whole read of a stored image, audio or blob answers it as its content block, with {media}); a selection over ${MAX_READ_BYTES} bytes answers its first part with truncated: true, total_bytes and a next reference: read next to continue exactly where it stopped. A failure is a tool error whose text starts with its code (digest_mismatch, unknown_result, result_evicted, pointer_not_found, …).`,
    inputSchema: closedSchema({ reference: REFERENCE_SCHEMA }, ["reference"]),
    outputSchema: closedSchema(
      {
        selected_text: { type: "string" },
        selected_json: { type: "string" },
        truncated: { type: "boolean", const: true },
        total_bytes: INDEX,
        next: NEXT,
        media: MEDIA,
      },
      [],
      { minProperties: 1 },
    ),
    annotations: { title: "Read a stored result", ...READ_ONLY },
  },
  {
    name: "find_in_result",
    title: "Search a stored result",
    description:
      `Search a stored result (the selection of reference, usually {"kind":"whole"}) for a literal, or with regex: true an RE2 regular expression. Answers each match's line, byte range [start_byte, end_byte) and, in a JSON document, the RFC 6901 pointer of the innermost value holding it, so the next read can select exactly that value. At most max_matches (default ${DEFAULT_MAX_MATCHES}, at most ${MAX_MATCHES}); total_matches counts them all.`,
    inputSchema: closedSchema({
      reference: REFERENCE_SCHEMA,
      pattern: {
        type: "string",
        minLength: 1,
        maxLength: 1024,
        description: "The text to find, or an RE2 regular expression",
      },
      regex: {
        type: "boolean",
        description: "Treat pattern as a regular expression (default false)",
      },
      max_matches: {
        type: "integer",
        minimum: 1,
        maximum: MAX_MATCHES,
        description:
          `The most matches to answer (default ${DEFAULT_MAX_MATCHES})`,
      },
    }, ["reference", "pattern"]),
    outputSchema: closedSchema({
      matches: {
        type: "array",
        items: closedSchema({
          line: { type: "integer", minimum: 1 },
          start_byte: INDEX,
          end_byte: INDEX,
          pointer: { type: "string" },
          text: { type: "string" },
        }, ["line", "start_byte", "end_byte", "text"]),
      },
      total_matches: INDEX,
      truncated: { type: "boolean" },
    }, ["matches", "total_matches", "truncated"]),
    annotations: { title: "Search a stored result", ...READ_ONLY },
  },
  {
    name: "list_results",
    title: "List stored results",
    description:
      "List the stored results, at most 8 per page, each with its origin, size and a whole-result reference. Pass next_offset of one page as offset to get the next; it is null on the last page.",
    inputSchema: closedSchema({
      offset: {
        ...INDEX,
        description: "Index of the first result to list (default 0)",
      },
    }, []),
    outputSchema: closedSchema({
      results: { type: "array", items: { type: "object" } },
      next_offset: { type: ["integer", "null"] },
    }, ["results", "next_offset"]),
    annotations: { title: "List stored results", ...READ_ONLY },
  },
];
