/**
 * What the model reads about `run_code` (and the AI SDK's `codeTool`): how
 * to write the code, the helpers in scope (as TypeScript declarations), the
 * limits, and the tools — their declarations when they fit in 6 KiB, else
 * their names and where to find their declarations. The same input always
 * gives the same bytes, so a host's cached prefix does not move while the
 * tools do not change.
 *
 * @module
 */
import type { CodeName } from "./code_names.ts";
import type { CodeLimits } from "./code_runner.ts";

/** The input schema of `run_code` (and of the AI SDK's `codeTool`). */
export const CODE_INPUT_SCHEMA: Readonly<Record<string, unknown>> = {
  type: "object",
  properties: {
    code: {
      type: "string",
      description:
        "The body of an async function, TypeScript or JavaScript; what it returns (JSON) is the answer",
    },
    timeout_ms: {
      type: "integer",
      minimum: 1,
      description: "The run's deadline in milliseconds",
    },
  },
  required: ["code"],
  additionalProperties: false,
};

/**
 * Checks `run_code`'s arguments.
 *
 * @param input The arguments (untrusted).
 * @returns The code and the deadline asked for.
 * @throws {TypeError} `invalid_arguments: …` when they do not fit
 *   {@linkcode CODE_INPUT_SCHEMA}.
 *
 * @example
 * ```ts
 * import { codeArguments } from "./code_description.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(codeArguments({ code: "return 1" }), { code: "return 1" });
 * assert.throws(() => codeArguments({ code: 1 }), /invalid_arguments/);
 * ```
 */
export function codeArguments(
  input: unknown,
): { readonly code: string; readonly timeout_ms?: number } {
  const value = input as { code?: unknown; timeout_ms?: unknown } | null;
  const keys = typeof value === "object" && value !== null
    ? Object.keys(value)
    : [];
  if (
    typeof value?.code !== "string" ||
    keys.some((k) => k !== "code" && k !== "timeout_ms") ||
    (value.timeout_ms !== undefined &&
      (!Number.isSafeInteger(value.timeout_ms) ||
        (value.timeout_ms as number) < 1))
  ) {
    throw new TypeError(
      "invalid_arguments: run_code takes {code: string, timeout_ms?: integer >= 1} and nothing else",
    );
  }
  return value.timeout_ms === undefined
    ? { code: value.code }
    : { code: value.code, timeout_ms: value.timeout_ms as number };
}

/** Tool declarations shown whole up to this size (UTF-8 bytes). */
export const DECLARATIONS_MAX_BYTES = 6 * 1024;

/** The helpers every MCP run has in scope, declared. */
export const MCP_HELPERS = `interface CallToolResult<T = unknown> {
  content: ({ type: "text"; text: string } | { type: string; [key: string]: unknown })[];
  structuredContent?: T;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}
/** Calls a tool by its server's and its own MCP names. */
declare function callTool(server: string, tool: string, args?: object): Promise<CallToolResult>;
/** The result's text blocks, joined by "\\n". */
declare function text(result: CallToolResult): string;
/** structuredContent, else the text parsed as JSON; throws saying why when neither. */
declare function json<T>(result: CallToolResult<T>): T;
/** Thrown by a call whose result has isError, or that failed (code says why). */
declare class ToolError extends Error { server: string; tool: string; result: CallToolResult; code?: string }
`;

/** The helpers every AI SDK run has in scope, declared. */
export const VALUE_HELPERS = `/** Calls a tool by its own name. */
declare function callTool(name: string, args?: object): Promise<unknown>;
/** Thrown by a call that failed. */
declare class ToolError extends Error { tool: string; code?: string }
`;

const LOOM_HELPERS = `declare const loom: {
  /** What read_result selects, whole (no 8 KiB cut): text, or the JSON value a json_pointer selects. */
  read(reference: { result: string; sha256: string; select?: object; rendering?: "text" | "json" }): Promise<unknown>;
  /** Stores a string or JSON value; answers its descriptor (with a reference to read it by). */
  store(value: unknown, options?: { mediaType?: string }): Promise<Record<string, unknown>>;
};
`;

/** How the tools appear in a description. */
export type DescribedTools =
  | {
    /** Their declarations (see {@linkcode DECLARATIONS_MAX_BYTES}). */
    readonly declarations: string;
  }
  | {
    /** Their code names, without types. */
    readonly names: readonly CodeName[];
    /** Where the model finds their argument types. */
    readonly types: string;
  }
  | {
    /** Where the model finds the tools: the description names none. */
    readonly elsewhere: string;
  };

/** What a description says. */
export interface DescriptionInput {
  /** `mcp`: tools answer CallToolResults; `value`: their own outputs. */
  readonly results: "mcp" | "value";
  /** The runner's limits. */
  readonly limits: CodeLimits;
  /** Answers and logs over this many bytes are stored (`--offload-bytes`). */
  readonly offloadBytes: number;
  /** The tools. */
  readonly tools: DescribedTools;
  /** Set when runs are confined by Deno's flags alone (`--code-unconfined`). */
  readonly unconfined?: boolean;
}

/**
 * The description of `run_code`.
 *
 * @param input Results, limits, tools.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { codeDescription } from "./code_description.ts";
 * import assert from "node:assert/strict";
 * const text = codeDescription({
 *   results: "mcp",
 *   limits: { memoryMiB: 256, defaultTimeoutMs: 30000, maxTimeoutMs: 120000, maxCalls: 500, maxInFlight: 16, maxLogBytes: 1048576, maxRuns: 4 },
 *   offloadBytes: 8192,
 *   tools: { declarations: "declare const tools: {};\n" },
 * });
 * assert.match(text, /declare const tools: \{\};/);
 * assert.match(text, /500 tool calls/);
 * ```
 */
export function codeDescription(input: DescriptionInput): string {
  const l = input.limits;
  const secs = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  const mcp = input.results === "mcp";
  const parts = [
    "Runs TypeScript or JavaScript in a sandbox where tools are async functions, so data goes from tool to tool without passing through this conversation: filter, sort, join or copy large results in code and return only what you need.",
    "`code` is the body of an async function (use await; types are stripped, not checked). What it returns, a JSON value, is the answer: {result, logs, calls, ms}; console.log/info/warn/error go to logs.",
    mcp
      ? "A call answers the tool's CallToolResult as received (never offloaded); an error result throws ToolError."
      : "A call answers the tool's own output; a failed call throws ToolError.",
    `Limits: ${secs(l.defaultTimeoutMs)} (timeout_ms up to ${
      secs(l.maxTimeoutMs)
    }), ${l.maxCalls} tool calls (${l.maxInFlight} at a time), ${l.memoryMiB} MiB of heap, 1 MiB of logs. No files, network, environment, subprocesses or Workers. A result over ${input.offloadBytes} bytes is stored and answered as result_stored (a descriptor: read it with read_result), logs over 8 KiB as logs_stored.${
      input.unconfined === true
        ? " This gateway runs code confined by Deno's permission flags only (--code-unconfined), not by bubblewrap."
        : ""
    }`,
    "Helpers:",
    `\`\`\`ts\n${mcp ? MCP_HELPERS : VALUE_HELPERS}${LOOM_HELPERS}\`\`\``,
  ];
  const tools = input.tools;
  const rule =
    "each run of characters outside [A-Za-z0-9_$] in a name becomes _, a leading digit gets a _ before it";
  if ("declarations" in tools) {
    parts.push(
      `Tools (${mcp ? "tools.<server>.<tool>" : "tools.<name>"}; ${rule}):`,
      `\`\`\`ts\n${tools.declarations}\`\`\``,
    );
  } else if ("names" in tools) {
    const byServer = new Map<string, string[]>();
    for (const n of tools.names) {
      const key = n.serverName === "" ? "tools" : `tools.${n.serverName}`;
      byServer.set(key, [...byServer.get(key) ?? [], n.toolName]);
    }
    parts.push(
      `Tools (${rule}; ${tools.types}):`,
      [...byServer].map(([key, names]) => `${key}: ${names.join(", ")}`)
        .join("\n"),
    );
  } else {
    parts.push(`Tools (tools.<server>.<tool>; ${rule}): ${tools.elsewhere}`);
  }
  return parts.join("\n\n");
}
