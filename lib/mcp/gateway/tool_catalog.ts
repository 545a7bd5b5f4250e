/**
 * The gateway's tool catalogue (`--catalog full|search|auto`): in `search`
 * mode the host lists two constant tools instead of every upstream tool —
 * `search_tools`, which finds catalogued tools by words or exact name
 * (`tool_search.ts`), and `call_tool`, which calls one by its
 * `<server>__<tool>` name once its arguments fit its `inputSchema`
 * (`argument_check.ts`). Their definitions depend on the servers file only
 * (its server names), never on what an upstream lists, so the host's
 * `tools/list` stays byte-identical whatever the upstreams do.
 *
 * @module
 */
import { type CodeName, codeNames } from "../../code/code_names.ts";
import { declareTools } from "../../code/declarations.ts";
import { checkArguments } from "./argument_check.ts";
import type { CatalogEntry, ListedTool } from "./tool_listing.ts";
import { type McpResult, toolError } from "./tool_result.ts";
import { ToolIndex } from "./tool_search.ts";

/** `--catalog`: list every tool, only the search tools, or decide by size. */
export type CatalogMode = "full" | "search" | "auto";

/** The modes `--catalog` takes. */
export const CATALOG_MODES: readonly CatalogMode[] = ["full", "search", "auto"];

/** `auto` lists every tool while their definitions fit in this many bytes. */
export const AUTO_FULL_BYTES = 16 * 1024;

/** The search tool's name. */
export const SEARCH_TOOLS = "search_tools";

/** The call tool's name. */
export const CALL_TOOL = "call_tool";

/** What `search_tools` answers of each tool. */
export type SearchDetail = "names" | "summary" | "schema" | "typescript";

const DETAILS: readonly SearchDetail[] = [
  "names",
  "summary",
  "schema",
  "typescript",
];

/** Most tools one search answers. */
const MAX_LIMIT = 20;
/** Bytes one tool's entry may take at `summary` detail (5 fit in 4 KiB). */
const SUMMARY_ENTRY_BYTES = 780;
/** Bytes a `schema` or `typescript` answer may take; later tools' are left out. */
const MAX_DETAIL_ANSWER_BYTES = 32 * 1024;
/** Bytes of a tool's schema quoted in a refused call. */
const MAX_QUOTED_SCHEMA_BYTES = 8 * 1024;

/**
 * The mode a gateway runs in: `auto` is `full` while the upstream tools'
 * definitions, serialized as `tools/list` would send them, fit in 16 KiB.
 *
 * @param mode `--catalog`.
 * @param upstreamBytes The serialized size of the upstream tools' listing.
 * @returns `full` or `search`.
 *
 * @example
 * ```ts
 * import { chooseCatalog } from "./tool_catalog.ts";
 * import assert from "node:assert/strict";
 * assert.equal(chooseCatalog("auto", 12_000), "full");
 * assert.equal(chooseCatalog("auto", 400_000), "search");
 * assert.equal(chooseCatalog("search", 10), "search");
 * ```
 */
export function chooseCatalog(
  mode: CatalogMode,
  upstreamBytes: number,
): "full" | "search" {
  if (mode !== "auto") return mode;
  return upstreamBytes <= AUTO_FULL_BYTES ? "full" : "search";
}

/**
 * The definitions of `search_tools` and `call_tool`: the same bytes for
 * the same server names.
 *
 * @param servers The servers file's entry names, in its order.
 * @returns The two `tools/list` entries.
 *
 * @example
 * ```ts
 * import { catalogTools } from "./tool_catalog.ts";
 * import assert from "node:assert/strict";
 * const [search, call] = catalogTools(["fs", "github"]);
 * assert.equal(search?.name, "search_tools");
 * assert.equal(call?.name, "call_tool");
 * assert.deepEqual(JSON.stringify(catalogTools(["fs", "github"])), JSON.stringify([search, call]));
 * ```
 */
export function catalogTools(servers: readonly string[]): ListedTool[] {
  return [
    {
      name: SEARCH_TOOLS,
      title: "Search the tool catalogue",
      description:
        "Find tools of the user's MCP servers by words or by exact name, then call one with call_tool. Answers the best tools, an exact name first, each with its name <server>__<tool>, a one-sentence summary and its annotations; detail schema adds each input_schema, typescript its declaration as run_code calls it.",
      inputSchema: {
        type: "object",
        properties: {
          query: {
            type: "string",
            minLength: 1,
            maxLength: 1024,
            description: "What the tool should do, or its name",
          },
          ...(servers.length === 0 ? {} : {
            server: {
              type: "string",
              enum: [...servers],
              description: "Only this server's tools",
            },
          }),
          limit: {
            type: "integer",
            minimum: 1,
            maximum: MAX_LIMIT,
            description: "The most tools to answer (default 5)",
          },
          detail: {
            type: "string",
            enum: [...DETAILS],
            description: "How much of each tool (default summary)",
          },
        },
        required: ["query"],
        additionalProperties: false,
      },
      annotations: {
        title: "Search the tool catalogue",
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    {
      name: CALL_TOOL,
      title: "Call a catalogued tool",
      description:
        "Call a tool search_tools found, by its name, with arguments that fit its input schema: they are checked first, and a refusal names each wrong path and quotes the schema. Answers as the tool does; a large answer is stored and described, to read with read_result.",
      inputSchema: {
        type: "object",
        properties: {
          name: {
            type: "string",
            minLength: 1,
            maxLength: 256,
            description: "The tool's name, <server>__<tool>",
          },
          arguments: {
            type: "object",
            description: "The tool's arguments (default {})",
          },
        },
        required: ["name"],
        additionalProperties: false,
      },
      annotations: {
        title: "Call a catalogued tool",
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
  ];
}

/** A `call_tool` resolved to its tool, or refused. */
export type ResolvedCall =
  | {
    readonly entry: CatalogEntry;
    readonly arguments: Record<string, unknown>;
    /** Why the arguments went unchecked, when the schema could not be used. */
    readonly unchecked?: string;
  }
  | { readonly refused: McpResult };

/**
 * Searches and resolves calls over the catalogue the gateway holds now.
 *
 * @example
 * ```ts
 * import { ToolCatalog } from "./tool_catalog.ts";
 * import assert from "node:assert/strict";
 * const catalog = new ToolCatalog(() => [], ["fs"]);
 * const answer = catalog.search({ query: "read a file" });
 * assert.deepEqual(JSON.parse(answer.content[0].text), { tools: [], total_matches: 0, catalog_size: 0 });
 * ```
 */
export class ToolCatalog {
  readonly #entries: () => readonly CatalogEntry[];
  readonly #servers: readonly string[];
  #index:
    | {
      of: readonly CatalogEntry[];
      index: ToolIndex<CatalogEntry>;
      names?: Map<CatalogEntry, CodeName>;
    }
    | undefined;

  /**
   * A catalogue over the gateway's current entries.
   *
   * @param entries The catalogued tools now (a new array when they change).
   * @param servers The servers file's entry names.
   */
  constructor(
    entries: () => readonly CatalogEntry[],
    servers: readonly string[],
  ) {
    this.#entries = entries;
    this.#servers = servers;
  }

  #current(): ToolIndex<CatalogEntry> {
    const entries = this.#entries();
    if (this.#index?.of !== entries) {
      this.#index = { of: entries, index: new ToolIndex(entries) };
    }
    return this.#index.index;
  }

  /**
   * Each catalogued tool's names in `run_code`, computed over the whole
   * catalogue (so a name never depends on which tools an answer shows).
   */
  #codeNames(): Map<CatalogEntry, CodeName> {
    this.#current();
    const index = this.#index!;
    if (index.names === undefined) {
      const names = codeNames(index.of);
      index.names = new Map(index.of.map((e, i) => [e, names[i]!]));
    }
    return index.names;
  }

  /**
   * Answers `search_tools`.
   *
   * @param args `{query, server?, limit?, detail?}` (untrusted).
   * @returns `{"tools": […], "total_matches", "catalog_size"}` as JSON text,
   *   or an `invalid_arguments` tool error.
   */
  search(args: Record<string, unknown>): McpResult & {
    content: [{ type: "text"; text: string }];
  } {
    const { query, server, limit = 5, detail = "summary" } = args;
    const wrong = (why: string) =>
      toolError("invalid_arguments", `search_tools: ${why}`) as McpResult & {
        content: [{ type: "text"; text: string }];
      };
    const extra = Object.keys(args).find((k) =>
      !["query", "server", "limit", "detail"].includes(k)
    );
    if (extra !== undefined) {
      return wrong(`${JSON.stringify(extra.slice(0, 64))} is not an argument`);
    }
    if (typeof query !== "string" || query.trim() === "") {
      return wrong("query must be a non-empty string");
    }
    if (query.length > 1024) return wrong("query is over 1,024 characters");
    if (server !== undefined && !this.#servers.includes(server as string)) {
      return wrong(
        `server must be one of ${
          this.#servers.map((s) => JSON.stringify(s)).join(", ") || "(none)"
        }`,
      );
    }
    if (
      typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 ||
      limit > MAX_LIMIT
    ) return wrong(`limit must be an integer from 1 to ${MAX_LIMIT}`);
    if (!DETAILS.includes(detail as SearchDetail)) {
      return wrong(`detail must be one of ${DETAILS.join(", ")}`);
    }
    const index = this.#current();
    const found = index.search(query, {
      limit,
      ...(server === undefined ? {} : { server: server as string }),
    });
    const names = detail === "typescript" ? this.#codeNames() : undefined;
    const answer = shapeAnswer(
      found.tools,
      detail as SearchDetail,
      found.totalMatches,
      index.size,
      (tool) =>
        declareTools([{
          ...names!.get(tool)!,
          ...(tool.description === undefined
            ? {}
            : { description: tool.description }),
          inputSchema: tool.inputSchema,
          ...(tool.outputSchema === undefined
            ? {}
            : { outputSchema: tool.outputSchema }),
        }]).text,
    );
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  }

  /**
   * Resolves `call_tool`: the tool by its exact name, the arguments checked
   * against its `inputSchema`.
   *
   * @param args `{name, arguments?}` (untrusted).
   * @returns The tool and its arguments, or the tool error to answer.
   */
  resolve(args: Record<string, unknown>): ResolvedCall {
    const { name, arguments: given = {} } = args;
    const extra = Object.keys(args).find((k) =>
      !["name", "arguments"].includes(k)
    );
    if (extra !== undefined) {
      return {
        refused: toolError(
          "invalid_arguments",
          `call_tool: ${
            JSON.stringify(extra.slice(0, 64))
          } is not an argument; put the tool's arguments in "arguments"`,
        ),
      };
    }
    if (typeof name !== "string" || name === "") {
      return {
        refused: toolError(
          "invalid_arguments",
          "call_tool: name must be a tool's name, <server>__<tool>",
        ),
      };
    }
    if (
      typeof given !== "object" || given === null || Array.isArray(given)
    ) {
      return {
        refused: toolError(
          "invalid_arguments",
          "call_tool: arguments must be an object",
        ),
      };
    }
    const index = this.#current();
    const entry = this.#entries().find((e) => e.name === name);
    if (entry === undefined) {
      const closest = index.closest(name, 3);
      return {
        refused: toolError(
          "unknown_tool",
          `${JSON.stringify(name.slice(0, 64))} is not a catalogued tool${
            closest.length === 0
              ? ""
              : `; the closest names: ${closest.join(", ")}`
          } (search_tools finds tools by words)`,
        ),
      };
    }
    const checked = checkArguments(entry.inputSchema, given);
    if (checked.ok === true) {
      return { entry, arguments: given as Record<string, unknown> };
    }
    if (checked.ok === "unchecked") {
      return {
        entry,
        arguments: given as Record<string, unknown>,
        unchecked: checked.why,
      };
    }
    const schema = JSON.stringify(entry.inputSchema);
    const quoted = schema.length <= MAX_QUOTED_SCHEMA_BYTES
      ? schema
      : `${
        schema.slice(0, MAX_QUOTED_SCHEMA_BYTES)
      }… (cut; search_tools with detail schema answers it whole)`;
    const lines = checked.failures.map((f) =>
      `- ${f.path === "" ? "(the arguments)" : f.path}: expected ${f.expected}`
    );
    return {
      refused: toolError(
        "invalid_arguments",
        `The arguments do not fit the inputSchema of ${entry.name}; nothing was sent to server ${entry.server}:\n${
          lines.join("\n")
        }\nIts inputSchema: ${quoted}`,
      ),
    };
  }
}

/** The JSON answer of a search, within its size limits. */
function shapeAnswer(
  tools: readonly CatalogEntry[],
  detail: SearchDetail,
  totalMatches: number,
  catalogSize: number,
  declare: (tool: CatalogEntry) => string,
): Record<string, unknown> {
  const shown: Record<string, unknown>[] = [];
  const leftOut: string[] = [];
  let bytes = 0;
  for (const tool of tools) {
    const base: Record<string, unknown> = {
      name: tool.name,
      server: cut(tool.server, 64),
      tool: cut(tool.tool, 64),
    };
    if (detail === "names") {
      shown.push(base);
      continue;
    }
    const entry = fitted(base, tool);
    if (detail === "schema" || detail === "typescript") {
      const detailed = detail === "schema"
        ? { ...entry, input_schema: tool.inputSchema }
        : { ...entry, typescript: declare(tool) };
      const size = byteLength(JSON.stringify(detailed));
      if (bytes + size <= MAX_DETAIL_ANSWER_BYTES) {
        bytes += size;
        shown.push(detailed);
        continue;
      }
      leftOut.push(tool.name);
    }
    bytes += byteLength(JSON.stringify(entry));
    shown.push(entry);
  }
  return {
    tools: shown,
    total_matches: totalMatches,
    catalog_size: catalogSize,
    ...(leftOut.length === 0 ? {} : { detail_left_out: leftOut }),
  };
}

/** A tool's summary entry, cut to fit {@linkcode SUMMARY_ENTRY_BYTES}. */
function fitted(
  base: Record<string, unknown>,
  tool: CatalogEntry,
): Record<string, unknown> {
  let title = tool.title === undefined ? undefined : clean(tool.title, 100);
  let summary = summaryOf(tool.description ?? "");
  const hints = hintsOf(tool.annotations);
  const make = () => ({
    ...base,
    ...(title === undefined || title === "" ? {} : { title }),
    summary,
    ...(hints === undefined ? {} : { annotations: hints }),
  });
  let entry = make();
  // Escapes and non-ASCII text can make 300 characters 1,800 bytes.
  const shorter = (text: string) =>
    text.length < 8 ? "" : cut(text, Math.floor(text.length * 0.8));
  while (byteLength(JSON.stringify(entry)) > SUMMARY_ENTRY_BYTES) {
    if (summary !== "") summary = shorter(summary);
    else if (title !== undefined && title !== "") title = shorter(title);
    else break;
    entry = make();
  }
  return entry;
}

/**
 * The first sentence of a description, at most 200 characters, control
 * characters removed.
 *
 * @param description A tool's description (untrusted).
 * @returns Its summary.
 *
 * @example
 * ```ts
 * import { summaryOf } from "./tool_catalog.ts";
 * import assert from "node:assert/strict";
 * assert.equal(summaryOf("Read a file. Handles encodings."), "Read a file.");
 * assert.equal(summaryOf("# Files\n\nList a folder, e.g. src"), "Files");
 * ```
 */
export function summaryOf(description: string): string {
  const text = description.slice(0, 4096);
  const line = text.split(/\n/).map((l) => l.replace(/^[#>*\s-]+/, "").trim())
    .find((l) => l !== "") ?? "";
  const sentence = /^.*?[.!?](?=\s|$)/.exec(line)?.[0] ?? line;
  return clean(sentence, 200);
}

/** The standard hints of MCP's tool annotations. */
const HINT_NAMES = [
  "readOnlyHint",
  "destructiveHint",
  "idempotentHint",
  "openWorldHint",
] as const;

/** The standard hints of a tool's annotations, as booleans. */
function hintsOf(
  annotations: Record<string, unknown> | undefined,
): Record<string, boolean> | undefined {
  if (annotations === undefined) return undefined;
  const out: Record<string, boolean> = {};
  for (const key of HINT_NAMES) {
    if (typeof annotations[key] === "boolean") {
      out[key] = annotations[key] as boolean;
    }
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Control characters removed, cut to `max` characters (marked `…`). */
function clean(text: string, max: number): string {
  // deno-lint-ignore no-control-regex
  return cut(text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim(), max);
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = [...text];
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(0, max - 1)).join("")}…`;
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}
