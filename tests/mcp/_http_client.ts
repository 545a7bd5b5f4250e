// The HTTP side of the MCP tests: the real `loom mcp … --http 127.0.0.1:0`
// as a subprocess (its start-up line names the port it got), and the SDK's
// own StreamableHTTPClientTransport connected to it with a bearer token.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { REPO_ROOT } from "../_kit.ts";

/** The permissions of `loom mcp --http`: network on the loopback only. */
const HTTP_PERMISSIONS = [
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
  "--allow-net=127.0.0.1",
];

/** A running `loom mcp --http`. */
export interface HttpServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT/mcp`. */
  readonly url: URL;
  /** What it wrote to standard error so far. */
  stderr(): string;
  /** Stops it (SIGTERM) and returns its exit code. */
  stop(): Promise<number>;
}

/** A token file (mode 0600) holding a fresh token, and the token. */
export async function tokenFile(
  dir: string,
): Promise<{ path: string; token: string }> {
  const token = crypto.randomUUID().replaceAll("-", "");
  const path = `${dir}/token`;
  await Deno.writeTextFile(path, `${token}\n`, { mode: 0o600 });
  await Deno.chmod(path, 0o600);
  return { path, token };
}

/**
 * Starts `loom mcp ARGS --http 127.0.0.1:0 …` and waits for its start-up
 * line (or its exit).
 *
 * @param args `loom mcp`'s arguments before `--http`.
 * @param auth `--token-file F` or `--insecure-no-token`.
 * @returns The server.
 */
export async function startHttp(
  args: readonly string[],
  auth: readonly string[],
): Promise<HttpServer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...HTTP_PERMISSIONS,
      "cli.ts",
      "mcp",
      ...args,
      "--http",
      "127.0.0.1:0",
      ...auth,
    ],
    cwd: REPO_ROOT,
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
    stderr: () => text,
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}

/** An SDK client over Streamable HTTP, and a typed `tools/call`. */
export interface HttpClient extends AsyncDisposable {
  readonly client: Client;
  // deno-lint-ignore no-explicit-any
  call(name: string, args?: Record<string, unknown>): Promise<any>;
}

/**
 * Connects the SDK's client to a server with `Authorization: Bearer TOKEN`.
 *
 * @param url The server's `/mcp` URL.
 * @param token The token, or `undefined` to send none.
 * @returns The connected client.
 */
export async function connectHttp(
  url: URL,
  token: string | undefined,
): Promise<HttpClient> {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: {
      headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    },
  });
  const client = new Client({ name: "loom-tests", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    call: (name, args = {}) =>
      client.callTool({ name, arguments: args }, undefined, {
        timeout: 120_000,
      }),
    [Symbol.asyncDispose]: () => client.close(),
  };
}

/** A JSON-RPC `initialize` POST as a host sends it, with the given headers. */
export function initializeRequest(
  url: URL | string,
  headers: Record<string, string> = {},
): Request {
  return new Request(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "attacker", version: "1" },
      },
    }),
  });
}
