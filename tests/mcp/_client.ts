// An MCP client for the tests: the SDK's own Client over its
// StdioClientTransport, spawning the real `loom mcp` (this Deno, cli.ts,
// explicit permission flags) on a root folder.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { REPO_ROOT } from "../_kit.ts";

/** The permission flags the server runs with (no network). */
export const SERVER_PERMISSIONS: readonly string[] = [
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
];

/** The command line of `loom mcp` after the Deno executable. */
export function serverArgs(
  root: string,
  extra: readonly string[] = [],
): string[] {
  return [
    "run",
    "--quiet",
    ...SERVER_PERMISSIONS,
    "cli.ts",
    "mcp",
    "--root",
    root,
    ...extra,
  ];
}

/** A tool as `tools/list` describes it (the fields the tests read). */
export interface ListedTool {
  readonly name: string;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations?: { readonly readOnlyHint?: boolean };
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** A `tools/call` result (the fields the tests read). */
export interface ToolResult {
  readonly content: readonly { type: string; text?: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** A connected client, typed, and what its server wrote to standard error. */
export interface Connected extends AsyncDisposable {
  readonly client: Client;
  /** `tools/list`. */
  tools(): Promise<ListedTool[]>;
  /** `tools/call`. */
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** The server's standard error so far. */
  stderr(): string;
}

/** A text block of a tool result (the tests' servers answer one). */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] })
    .content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

/**
 * Starts `loom mcp --root ROOT` and connects the SDK client to it.
 *
 * @param root The root folder.
 * @param extra More arguments of `loom mcp`.
 */
export async function connect(
  root: string,
  extra: readonly string[] = [],
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: serverArgs(root, extra),
    cwd: REPO_ROOT,
    env: Deno.env.toObject(),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderr += typeof chunk === "string"
      ? chunk
      : new TextDecoder().decode(chunk);
  });
  const client = new Client({ name: "loom-tests", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`Cannot connect to loom mcp: ${String(error)}\n${stderr}`);
  }
  return {
    client,
    tools: async () =>
      ((await client.listTools()) as { tools: ListedTool[] }).tools,
    call: async (name, args) =>
      (await client.callTool({ name, arguments: args })) as ToolResult,
    stderr: () => stderr,
    [Symbol.asyncDispose]: () => client.close(),
  };
}
