// The gateway's test kit: the real upstream servers from npm (pinned in
// deno.json and the lock, run by this Deno from its cache), the tests'
// fault server, and the SDK's own client connected to the real
// `loom mcp --servers` (or straight to an upstream, for comparison).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { REPO_ROOT } from "../../_kit.ts";

/** The upstreams' own permissions (they are the user's programs). */
const UPSTREAM_FLAGS = [
  "run",
  "--quiet",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
];

export const FILESYSTEM =
  "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
export const EVERYTHING =
  "npm:@modelcontextprotocol/server-everything@2026.8.31";
export const FAULT = `${REPO_ROOT}/tests/mcp/gateway/_fault_server.ts`;

/** A stdio entry of a servers file running `spec` with this Deno. */
export function denoEntry(
  spec: string,
  args: readonly string[] = [],
): { command: string; args: string[]; cwd: string } {
  return {
    command: Deno.execPath(),
    args: [...UPSTREAM_FLAGS, spec, ...args],
    cwd: REPO_ROOT,
  };
}

/** The gateway's command line after the Deno executable. */
export function gatewayArgs(servers: string, extra: readonly string[] = []) {
  return [
    "run",
    "--quiet",
    "--unstable-worker-options",
    "--allow-read",
    "--allow-write",
    "--allow-run",
    "--allow-env",
    "cli.ts",
    "mcp",
    "--servers",
    servers,
    ...extra,
  ];
}

/** A connected SDK client and its server's standard error. */
export interface Connected extends AsyncDisposable {
  readonly client: Client;
  stderr(): string;
  // deno-lint-ignore no-explicit-any
  call(name: string, args?: Record<string, unknown>): Promise<any>;
}

/** Connects the SDK client to a command over stdio. */
export async function connectTo(
  command: string,
  args: readonly string[],
  capabilities: Record<string, unknown> = {},
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command,
    args: [...args],
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
  const client = new Client({ name: "loom-tests", version: "1.0.0" }, {
    capabilities,
  });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`Cannot connect: ${String(error)}\n${stderr}`);
  }
  return {
    client,
    stderr: () => stderr,
    call: (name, args = {}) =>
      client.callTool({ name, arguments: args }, undefined, {
        timeout: 300_000,
      }),
    [Symbol.asyncDispose]: () => client.close(),
  };
}

/** Connects to `loom mcp --servers FILE`. */
export function connectGateway(
  servers: string,
  extra: readonly string[] = [],
  capabilities: Record<string, unknown> = {},
): Promise<Connected> {
  return connectTo(Deno.execPath(), gatewayArgs(servers, extra), capabilities);
}

/** Writes `count` files in nested folders under `root`. */
export async function fillTree(root: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const dir = `${root}/pkg-${i % 30}/src-${i % 7}`;
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(`${dir}/file-${i}.ts`, `export const n = ${i};\n`);
  }
}
