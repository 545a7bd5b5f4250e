// The MCP test kit: every test and figure script that talks MCP starts its
// servers and connects its clients here. It runs the real `loom mcp` (this
// Deno, this checkout's cli.ts) over stdio or Streamable HTTP, the real
// upstream servers from npm (pinned in deno.json and the lock), the tests'
// fault server, and connects the official SDK client with the options the
// tests need (capabilities, environment, Deno flags, a call deadline).
//
// Private to the repository (not the `testing` entry): it starts a checkout's
// cli.ts with the test task's permissions and knows the tests' own fault
// server; a user testing their host against Loom runs `loom mcp` itself and
// the SDK client is their kit. Free of side effects, like `repo.ts`.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loomArgs, REPO_ROOT } from "./repo.ts";

// ---------------------------------------------------------------------------
// Servers

/** `@modelcontextprotocol/server-filesystem`, as pinned in deno.json. */
export const FILESYSTEM =
  "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
/** `@modelcontextprotocol/server-everything`, as pinned in deno.json. */
export const EVERYTHING =
  "npm:@modelcontextprotocol/server-everything@2026.8.31";
/** The tests' hostile upstream: crashes, hangs, garbage, huge answers. */
export const FAULT = `${REPO_ROOT}/tests/mcp/gateway/_fault_server.ts`;

/** The upstreams' own permissions (they are the user's programs). */
export const UPSTREAM_FLAGS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
];

/** A stdio entry of a servers file. */
export interface StdioEntry {
  readonly command: string;
  readonly args: string[];
  readonly cwd: string;
}

/**
 * The servers-file entry (and command line) of an upstream run by this Deno.
 *
 * @param spec A module: {@linkcode FILESYSTEM}, {@linkcode EVERYTHING},
 *   {@linkcode FAULT} or another file.
 * @param args The server's own arguments.
 * @returns `{command, args, cwd}`.
 */
export function denoEntry(
  spec: string,
  args: readonly string[] = [],
): StdioEntry {
  return {
    command: Deno.execPath(),
    args: ["run", "--quiet", ...UPSTREAM_FLAGS, spec, ...args],
    cwd: REPO_ROOT,
  };
}

/**
 * The fault server's entry opted in to persistence, but for `drift`, which
 * is declared self-reading (its answer changes: re-read, never persisted).
 *
 * @returns The entry.
 */
export function persistedFaultEntry(): Record<string, unknown> {
  return {
    ...denoEntry(FAULT),
    persist: true,
    tools: { drift: { selfReading: true, persist: true } },
  };
}

/**
 * Writes a servers file (`{"mcpServers": …}`) into `dir`.
 *
 * @param dir A folder the test owns.
 * @param servers The entries by name.
 * @returns The file's path (`DIR/.mcp.json`).
 */
export async function serversFile(
  dir: string,
  servers: Readonly<Record<string, unknown>>,
): Promise<string> {
  const path = `${dir}/.mcp.json`;
  await Deno.writeTextFile(path, JSON.stringify({ mcpServers: servers }));
  return path;
}

/**
 * Makes a folder for a server's root holding the given text files.
 *
 * @param path The folder (its parent exists).
 * @param files The files' text by name.
 * @returns `path`.
 */
export async function rootFolder(
  path: string,
  files: Readonly<Record<string, string>>,
): Promise<string> {
  await Deno.mkdir(path);
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${path}/${name}`, text);
  }
  return path;
}

/**
 * Writes `count` small files in nested folders under `root`.
 *
 * @param root The folder.
 * @param count How many files.
 */
export async function fillTree(root: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const dir = `${root}/pkg-${i % 30}/src-${i % 7}`;
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(`${dir}/file-${i}.ts`, `export const n = ${i};\n`);
  }
}

/**
 * The command line of `loom mcp ARGS` after the Deno executable.
 *
 * @param args `loom mcp`'s arguments, e.g. `--root DIR` or `--servers F`.
 * @param denoFlags Deno flags added to loom's own (e.g. `--allow-net=…`).
 * @returns The arguments.
 */
export function mcpArgs(
  args: readonly string[],
  denoFlags: readonly string[] = [],
): string[] {
  return loomArgs(["mcp", ...args], { denoFlags });
}

// ---------------------------------------------------------------------------
// Clients

/**
 * A `tools/call` answer as the tests read it: `content`, `structuredContent`,
 * `isError`, `_meta`, loosely typed (tests reach into their own answers).
 */
// deno-lint-ignore no-explicit-any
export type ToolAnswer = any;

/** A connected SDK client, and what its server wrote to standard error. */
export interface McpConnection extends AsyncDisposable {
  readonly client: Client;
  /** The server's process id over stdio; `undefined` over HTTP. */
  readonly pid: number | undefined;
  /** The server's standard error so far (empty over HTTP). */
  stderr(): string;
  /** `tools/list`, every page. */
  tools(): Promise<ListedTool[]>;
  /** `tools/call`, waiting up to the connection's deadline. */
  call(name: string, args?: Record<string, unknown>): Promise<ToolAnswer>;
  /** Closes the client (and over stdio stops the server). */
  close(): Promise<void>;
}

/** A tool as `tools/list` describes it (the fields the tests read). */
export interface ListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly outputSchema?: Record<string, unknown>;
  readonly annotations?: { readonly readOnlyHint?: boolean };
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** Options of every connect function. */
export interface ConnectOptions {
  /** The host's capabilities (sampling, elicitation, roots, …). */
  readonly capabilities?: Record<string, unknown>;
  /** How long a `call` may take, in milliseconds (default 300 s). */
  readonly timeoutMs?: number;
  /** The client's name in `initialize` (default `loom-tests`). */
  readonly name?: string;
}

/** Options of a server started over stdio. */
export interface StdioOptions extends ConnectOptions {
  /** Variables added to the server's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Options of `loom mcp` started by the kit. */
export interface LoomMcpOptions extends StdioOptions {
  /** Deno flags added to loom's own (e.g. `--allow-net=…`). */
  readonly denoFlags?: readonly string[];
}

function newClient(options: ConnectOptions): Client {
  return new Client({ name: options.name ?? "loom-tests", version: "1.0.0" }, {
    capabilities: options.capabilities ?? {},
  });
}

function connection(
  client: Client,
  pid: number | undefined,
  stderr: () => string,
  options: ConnectOptions,
): McpConnection {
  const timeout = options.timeoutMs ?? 300_000;
  const close = () => client.close();
  return {
    client,
    pid,
    stderr,
    tools: async () => {
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(
          cursor === undefined ? {} : { cursor },
        );
        tools.push(...page.tools as ListedTool[]);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
    },
    call: (name, args = {}) =>
      client.callTool({ name, arguments: args }, undefined, { timeout }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Starts any MCP server over stdio and connects the SDK client to it.
 *
 * @param command The program.
 * @param args Its arguments.
 * @param options Capabilities, environment, deadline.
 * @returns The connection; disposing it closes the client and the server.
 * @throws {Error} When the server does not answer `initialize`, with its
 *   standard error.
 */
export async function connectStdio(
  command: string,
  args: readonly string[],
  options: StdioOptions = {},
): Promise<McpConnection> {
  const transport = new StdioClientTransport({
    command,
    args: [...args],
    cwd: REPO_ROOT,
    env: { ...Deno.env.toObject(), ...options.env },
    stderr: "pipe",
  });
  let stderr = "";
  const decoder = new TextDecoder();
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderr += typeof chunk === "string"
      ? chunk
      : decoder.decode(chunk, { stream: true });
  });
  const client = newClient(options);
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close().catch(() => {});
    throw new Error(
      `Cannot connect to ${command} ${args.join(" ")}: ${
        String(error)
      }\n${stderr}`,
    );
  }
  return connection(client, transport.pid ?? undefined, () => stderr, options);
}

/**
 * Starts `loom mcp ARGS` over stdio and connects the SDK client to it.
 *
 * @param args `loom mcp`'s arguments.
 * @param options Capabilities, environment, Deno flags, deadline.
 * @returns The connection.
 */
export function connectLoom(
  args: readonly string[],
  options: LoomMcpOptions = {},
): Promise<McpConnection> {
  return connectStdio(
    Deno.execPath(),
    mcpArgs(args, options.denoFlags),
    options,
  );
}

/**
 * Starts `loom mcp --root ROOT` (Loom's own tools over a folder).
 *
 * @param root The root folder.
 * @param extra More arguments of `loom mcp`.
 * @param options As for {@linkcode connectLoom}.
 * @returns The connection.
 */
export function connectRoot(
  root: string,
  extra: readonly string[] = [],
  options: LoomMcpOptions = {},
): Promise<McpConnection> {
  return connectLoom(["--root", root, ...extra], options);
}

/**
 * Starts the gateway, `loom mcp --servers FILE`.
 *
 * @param servers The servers file.
 * @param extra More arguments of `loom mcp`.
 * @param options As for {@linkcode connectLoom}.
 * @returns The connection.
 */
export function connectGateway(
  servers: string,
  extra: readonly string[] = [],
  options: LoomMcpOptions = {},
): Promise<McpConnection> {
  return connectLoom(["--servers", servers, ...extra], options);
}

// ---------------------------------------------------------------------------
// Over HTTP

/** A running `loom mcp --http`. */
export interface HttpServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT/mcp`. */
  readonly url: URL;
  /** Its process id. */
  readonly pid: number;
  /** What it wrote to standard error so far. */
  stderr(): string;
  /** Stops it (SIGTERM) and returns its exit code. */
  stop(): Promise<number>;
}

/** A token file (mode 0600) and the token it holds. */
export interface TokenFile {
  readonly path: string;
  readonly token: string;
}

/**
 * Writes a fresh token to `DIR/token` (mode 0600).
 *
 * @param dir A folder the test owns.
 * @returns The file and the token.
 */
export async function tokenFile(dir: string): Promise<TokenFile> {
  const token = crypto.randomUUID().replaceAll("-", "");
  const path = `${dir}/token`;
  await Deno.writeTextFile(path, `${token}\n`, { mode: 0o600 });
  await Deno.chmod(path, 0o600);
  return { path, token };
}

/**
 * Starts `loom mcp ARGS --http 127.0.0.1:0 AUTH` and waits for its start-up
 * line, which names the port it got (or for its exit).
 *
 * @param args `loom mcp`'s arguments before `--http`.
 * @param auth `--token-file F` or `--insecure-no-token`.
 * @param options Variables added to its environment, more Deno flags.
 * @returns The server; disposing it stops it.
 * @throws {Error} When it exits before listening, with its standard error.
 */
export async function startHttp(
  args: readonly string[],
  auth: readonly string[],
  options: Omit<LoomMcpOptions, keyof ConnectOptions> = {},
): Promise<HttpServer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: mcpArgs([...args, "--http", "127.0.0.1:0", ...auth], [
      "--allow-net=127.0.0.1",
      ...options.denoFlags ?? [],
    ]),
    cwd: REPO_ROOT,
    env: { ...options.env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  const { promise: listening, resolve } = Promise.withResolvers<
    URL | undefined
  >();
  const read = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      text += decoder.decode(chunk, { stream: true });
      const match = / over HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text);
      if (match !== null) resolve(new URL(match[1]!));
    }
    resolve(undefined);
  })();
  const url = await listening;
  let code: number | undefined;
  const stop = async () => {
    if (code === undefined) {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      code = (await child.status).code;
      await read;
    }
    return code;
  };
  if (url === undefined) {
    await stop();
    throw new Error(`loom mcp --http did not start (exit ${code}):\n${text}`);
  }
  return {
    url,
    pid: child.pid,
    stderr: () => text,
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}

/**
 * Connects the SDK client over Streamable HTTP, with
 * `Authorization: Bearer TOKEN`.
 *
 * @param url The server's `/mcp` URL.
 * @param token The token, or `undefined` to send none.
 * @param options Capabilities, deadline (default 120 s).
 * @returns The connection.
 */
export async function connectHttp(
  url: URL,
  token: string | undefined,
  options: ConnectOptions = {},
): Promise<McpConnection> {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: {
      headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    },
  });
  const client = newClient(options);
  await client.connect(transport);
  return connection(client, undefined, () => "", {
    timeoutMs: 120_000,
    ...options,
  });
}

// ---------------------------------------------------------------------------
// Raw JSON-RPC, for tests that speak the wire without the SDK

/** The protocol version the raw messages declare. */
export const PROTOCOL_VERSION = "2025-06-18";

/**
 * A JSON-RPC `initialize` request as a host sends it.
 *
 * @param clientName The `clientInfo.name`.
 * @returns The message.
 */
export function initializeMessage(
  clientName = "raw",
): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: clientName, version: "1" },
    },
  };
}

/**
 * A JSON-RPC message POSTed as a Streamable HTTP host sends it
 * (`Content-Type` and `Accept` set), with more headers.
 *
 * @param url The `/mcp` URL.
 * @param message The JSON-RPC message.
 * @param headers More headers (e.g. `Authorization`).
 * @returns The request, for `fetch` or a handler.
 */
export function jsonRpcRequest(
  url: URL | string,
  message: unknown,
  headers: Record<string, string> = {},
): Request {
  return new Request(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

/**
 * An `initialize` POST as a host sends it, with the given headers.
 *
 * @param url The `/mcp` URL.
 * @param headers More headers.
 * @returns The request.
 */
export function initializeRequest(
  url: URL | string,
  headers: Record<string, string> = {},
): Request {
  return jsonRpcRequest(url, initializeMessage("attacker"), headers);
}

/**
 * A `tools/call` POST without a session, as a host sends it.
 *
 * @param url The `/mcp` URL.
 * @param name The tool.
 * @param args Its arguments.
 * @param headers More headers.
 * @returns The request.
 */
export function toolCallRequest(
  url: URL | string,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Request {
  return jsonRpcRequest(url, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: args },
  }, headers);
}

// ---------------------------------------------------------------------------
// Answers and descriptors

/** A reference as a descriptor carries it (wire-formats.md). */
export interface Reference {
  readonly result: string;
  readonly sha256: string;
  readonly select: Readonly<Record<string, unknown>>;
}

/** What the host sees instead of a large result (wire-formats.md). */
export interface Descriptor {
  readonly server?: string;
  readonly tool?: string;
  readonly part?: string;
  readonly result: string;
  readonly sha256: string;
  readonly utf8_bytes?: number;
  readonly bytes?: number;
  readonly lines?: number;
  readonly capture?: "complete" | "partial";
  readonly media_type?: string;
  readonly preview?: string;
  readonly preview_truncated?: boolean;
  readonly outline?: string;
  readonly reference: Reference;
}

/**
 * The text blocks of an answer, joined.
 *
 * @param answer A `tools/call` answer.
 * @returns Its text.
 */
export function textOf(answer: unknown): string {
  const content = (answer as { content?: { type: string; text?: string }[] })
    .content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

/**
 * Asserts that a `tools/call` answer is a tool error (`isError`) whose text
 * says what `pattern` expects.
 *
 * @param answer The answer.
 * @param pattern Its text, e.g. `/^digest_mismatch: /`.
 * @param message Shown when an assertion fails (default: the answer's text).
 * @returns The text, for further checks.
 */
export function assertToolError(
  answer: unknown,
  pattern: RegExp,
  message?: string,
): string {
  const text = textOf(answer);
  assert.equal(
    (answer as { isError?: unknown }).isError,
    true,
    message ?? text,
  );
  assert.match(text, pattern, message);
  return text;
}

/**
 * The descriptor an offloaded answer carries in its first text block.
 *
 * @param answer A `tools/call` answer that was offloaded.
 * @returns The parsed descriptor.
 * @throws {Error} When the first block is not a descriptor, with its text.
 */
export function descriptorOf(answer: unknown): Descriptor {
  const first =
    (answer as { content?: { text?: string }[] }).content?.[0]?.text ?? "";
  try {
    const parsed = JSON.parse(first) as Descriptor;
    if (typeof parsed.reference?.result === "string") return parsed;
  } catch { /* said below */ }
  throw new Error(`Not a descriptor: ${first.slice(0, 500)}`);
}

/** What names a stored result: a reference, or a descriptor holding one. */
export type Referencing =
  | { readonly result: string; readonly sha256: string }
  | {
    readonly reference: { readonly result: string; readonly sha256: string };
  };

/**
 * The arguments of `read_result`: a reference (or a descriptor's) with
 * another selection.
 *
 * @param of The reference, or the descriptor holding it.
 * @param select The selection, e.g. `{kind: "json_pointer", pointer: "/a"}`.
 * @returns `{reference: {...reference, select}}`.
 */
export function readArgs(
  of: Referencing,
  select: Readonly<Record<string, unknown>>,
): { reference: Record<string, unknown> } {
  const base = "reference" in of ? of.reference : of;
  return { reference: { ...base, select } };
}

// ---------------------------------------------------------------------------
// A client written elsewhere

/** The MCP Inspector, pinned; its CLI is fetched by npx. */
export const INSPECTOR = "@modelcontextprotocol/inspector@1.0.3";

/**
 * Runs the MCP Inspector's CLI (`npx INSPECTOR --cli ARGS`) and parses what
 * it prints. Not skipped when npx or the registry is missing: it fails and
 * says why.
 *
 * @param args The CLI's arguments: the server's command line, `--method …`.
 * @returns Its JSON output.
 * @throws {Error} When npx cannot start or the CLI fails.
 */
export async function inspectorCli(args: readonly string[]): Promise<unknown> {
  const argv = ["-y", INSPECTOR, "--cli", ...args];
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("npx", {
      args: argv,
      cwd: REPO_ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      // A cold npx cache installs the inspector first: never prompt.
      env: { npm_config_yes: "true", npm_config_update_notifier: "false" },
    }).output();
  } catch (error) {
    throw new Error(
      `Cannot run the MCP Inspector: npx could not be started (${
        String(error)
      }); this test needs node and npx on PATH, as CI has them`,
    );
  }
  const decoder = new TextDecoder();
  const stdout = decoder.decode(output.stdout);
  if (output.code !== 0) {
    throw new Error(
      `npx ${
        argv.join(" ")
      } exited ${output.code} (is the npm registry reachable to fetch ${INSPECTOR}?)\n${
        decoder.decode(output.stderr)
      }\n${stdout}`,
    );
  }
  return JSON.parse(stdout);
}
