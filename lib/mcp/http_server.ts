/**
 * `loom mcp --http HOST:PORT`: an MCP server (the tools' or the gateway's,
 * built by the same function as over stdio) served over Streamable HTTP at
 * the one path `/mcp`, through the SDK's web-standard Streamable HTTP
 * transport on `Deno.serve`. Every request must carry the bearer token
 * (`Authorization: Bearer …`, compared in constant time); one without it is
 * answered 401 with `WWW-Authenticate: Bearer` before anything else is
 * read, any other path 404. Only on a loopback address may the server run
 * without a token, and then it refuses a request whose `Host` or `Origin`
 * is not a loopback one (what a web page reaching it by DNS rebinding
 * would send).
 *
 * The transport is stateless: each POST gets a fresh transport and a fresh
 * server over the one set of tools and store, closed when its answer has
 * been sent. Several hosts, and several instances behind a load balancer,
 * can then answer any request, since what lasts lives in the store.
 *
 * @module
 */
import {
  bearerToken,
  hostOf,
  isLoopback,
  isLoopbackOrigin,
  refusal,
  TokenCheck,
} from "../http_guard.ts";
import { messageOf } from "../errors.ts";

/** The one path the server answers. */
export const MCP_PATH = "/mcp";

/** An SDK server, built per request (see `createToolsServer`, `createGatewayServer`). */
export interface RequestServer {
  /** Connects the server to a transport and starts answering. */
  connect(transport: unknown): Promise<void>;
  /** Stops the server. */
  close(): Promise<void>;
}

/** The SDK's web-standard Streamable HTTP transport (as `loadSdk()` gives it). */
export interface HttpSdk {
  /** `WebStandardStreamableHTTPServerTransport`. */
  // deno-lint-ignore no-explicit-any
  readonly WebStandardStreamableHTTPServerTransport: any;
}

/** Options of {@linkcode mcpHttpHandler}. */
export interface McpHttpOptions {
  /**
   * The bearer token every request must carry; `undefined` serves without
   * one (only on a loopback address: the CLI's `--insecure-no-token`).
   */
  readonly token: string | undefined;
  /** The SDK. */
  readonly sdk: HttpSdk;
  /** Builds the server of one request. */
  readonly server: () => RequestServer;
  /** Largest request body in bytes (default the SDK's, 4 MiB). */
  readonly maxRequestBytes?: number;
}

/** Options of {@linkcode serveHttp}. */
export interface ServeHttpOptions extends McpHttpOptions {
  /** The address bound, and only it. */
  readonly hostname: string;
  /** The port (0: one the system picks; the log line names it). */
  readonly port: number;
  /** One diagnostic line to standard error. */
  readonly log: (line: string) => void;
  /** What the start-up line says is served, e.g. `5 tools, root /srv`. */
  readonly what: string;
}

/**
 * The request handler: 404 off `/mcp`, 401 without the token, 403 for a
 * non-loopback `Host` or `Origin` when serving without a token, 405 for a
 * method other than POST (stateless: no GET stream, no session to DELETE),
 * else the SDK transport's answer.
 *
 * @param options The token, the SDK, the server factory.
 * @returns The handler for `Deno.serve`.
 *
 * @example
 * ```ts
 * import { mcpHttpHandler } from "./http_server.ts";
 * import assert from "node:assert/strict";
 * const handler = mcpHttpHandler({
 *   token: "s3cret-token-of-the-team",
 *   sdk: { WebStandardStreamableHTTPServerTransport: class {} },
 *   server: () => { throw new Error("not reached") },
 * });
 * const refused = await handler(new Request("http://127.0.0.1:1/mcp", { method: "POST" }));
 * assert.equal(refused.status, 401);
 * assert.match(refused.headers.get("www-authenticate") ?? "", /^Bearer/);
 * assert.equal((await handler(new Request("http://127.0.0.1:1/other"))).status, 404);
 * ```
 */
export function mcpHttpHandler(
  options: McpHttpOptions,
): (request: Request) => Promise<Response> {
  const expected = options.token === undefined
    ? undefined
    : new TokenCheck(options.token);
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== MCP_PATH) {
      return refusal(404, `Not found: the MCP endpoint is ${MCP_PATH}`);
    }
    if (expected !== undefined) {
      if (
        !expected.matches(bearerToken(request.headers.get("authorization")))
      ) {
        return refusal(401, "Unauthorized: send Authorization: Bearer TOKEN", {
          "WWW-Authenticate": 'Bearer realm="loom"',
        });
      }
    } else {
      const host = request.headers.get("host") ?? "";
      const origin = request.headers.get("origin");
      if (
        !isLoopback(hostOf(host)) ||
        (origin !== null && !isLoopbackOrigin(origin))
      ) {
        return refusal(
          403,
          "Forbidden: without a token this server answers only requests addressed to a loopback host",
        );
      }
    }
    if (request.method !== "POST") {
      return refusal(
        405,
        "Method not allowed: this server is stateless, send each JSON-RPC message as a POST",
        { Allow: "POST" },
      );
    }
    return await answer(request, options);
  };
}

/** One request through a fresh transport and server, both closed when its answer is sent. */
async function answer(
  request: Request,
  options: McpHttpOptions,
): Promise<Response> {
  const server = options.server();
  const transport = new options.sdk.WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    ...(options.maxRequestBytes === undefined
      ? {}
      : { maxRequestBodySize: options.maxRequestBytes }),
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    // Closing aborts calls still running (the client went away).
    void server.close().catch(() => {});
  };
  let response: Response;
  try {
    await server.connect(transport);
    response = await transport.handleRequest(request);
  } catch (error) {
    close();
    throw error;
  }
  const body = response.body;
  if (body === null) {
    close();
    return response;
  }
  const reader = body.getReader();
  const piped = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          close();
        } else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
        close();
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {});
      close();
    },
  });
  return new Response(piped, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * Serves until SIGINT or SIGTERM, then stops taking requests and lets the
 * ones in flight finish.
 *
 * @param options The address, the token, the SDK, the server factory.
 * @returns When the server has stopped.
 * @throws {Deno.errors.AddrInUse} When the address is taken (and the other
 *   errors of `Deno.serve`).
 */
export async function serveHttp(options: ServeHttpOptions): Promise<void> {
  const handler = mcpHttpHandler(options);
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    onListen: ({ hostname, port }) => {
      const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
      options.log(
        `serving ${options.what} over HTTP at http://${shown}:${port}${MCP_PATH}${
          options.token === undefined
            ? " WITHOUT A TOKEN (--insecure-no-token; loopback only)"
            : " (bearer token required)"
        }`,
      );
    },
    onError: (error) => {
      options.log(
        `request failed: ${messageOf(error)}`,
      );
      return refusal(500, "Internal error");
    },
  }, handler);
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  const stop = () => void server.shutdown();
  for (const signal of signals) Deno.addSignalListener(signal, stop);
  try {
    await server.finished;
  } finally {
    for (const signal of signals) Deno.removeSignalListener(signal, stop);
  }
}
