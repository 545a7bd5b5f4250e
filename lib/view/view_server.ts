/**
 * The server of `loom view`: the page and its API on one address, for the
 * person at this machine only. Before anything else every request is
 * checked — the `Host` it was addressed to must be the server's own (a
 * page on another site reaching a loopback server through a rebound DNS
 * name sends its own name), it must carry the per-launch token (in the
 * URL's `token`, or `Authorization: Bearer`, compared in constant time),
 * and it must be a GET: anything else is refused and reads nothing. The
 * answers forbid framing, sniffing, caching and referrers; the page runs
 * under its hash-based Content-Security-Policy (lib/view/page.ts).
 *
 * @module
 */
import {
  bearerToken,
  hostOf,
  isLoopback,
  refusal,
  TokenCheck,
} from "../http_guard.ts";
import { viewPage } from "./page.ts";
import type { ViewApi } from "./view_api.ts";

/** Options of {@linkcode viewHandler}. */
export interface ViewHandlerOptions {
  /** The per-launch token. */
  readonly token: string;
  /** The address the server is bound to (its `Host` must name it). */
  readonly hostname: string;
  /** The port it listens on. */
  readonly port: number;
  /** The runs' API. */
  readonly api: ViewApi;
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cross-Origin-Opener-Policy": "same-origin",
};

/**
 * Whether a `Host` header names this server: its port, and its address —
 * any loopback name when it is bound to a loopback address.
 *
 * @param header The `Host` header.
 * @param hostname The bound address.
 * @param port The bound port.
 * @returns `true` when the request was addressed to this server.
 *
 * @example
 * ```ts
 * import { ownHost } from "./view_server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(ownHost("localhost:8123", "127.0.0.1", 8123), true);
 * assert.equal(ownHost("evil.example:8123", "127.0.0.1", 8123), false);
 * assert.equal(ownHost("127.0.0.1:9", "127.0.0.1", 8123), false);
 * ```
 */
export function ownHost(
  header: string | null,
  hostname: string,
  port: number,
): boolean {
  if (header === null) return false;
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+):([0-9]{1,5})$/.exec(header);
  if (match === null || Number(match[2]) !== port) return false;
  const host = hostOf(match[1]!).toLowerCase();
  const bound = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return host === bound || (isLoopback(bound) && isLoopback(host));
}

/**
 * The server's request handler.
 *
 * @param options Token, address and API.
 * @returns The handler for `Deno.serve`.
 *
 * @example
 * ```ts
 * import { viewHandler } from "./view_server.ts";
 * import { ViewApi } from "./view_api.ts";
 * import assert from "node:assert/strict";
 * const handle = viewHandler({
 *   token: "0123456789abcdef0123456789abcdef", hostname: "127.0.0.1", port: 8123,
 *   api: new ViewApi([]),
 * });
 * const url = "http://127.0.0.1:8123/api/runs";
 * const host = { host: "127.0.0.1:8123" };
 * assert.equal((await handle(new Request(url, { headers: host }))).status, 401);
 * const ok = await handle(new Request(`${url}?token=0123456789abcdef0123456789abcdef`, { headers: host }));
 * assert.equal(ok.status, 200);
 * ```
 */
export function viewHandler(
  options: ViewHandlerOptions,
): (request: Request) => Promise<Response> {
  const check = new TokenCheck(options.token);
  const page = viewPage(undefined);
  return async (request) => {
    if (!ownHost(request.headers.get("host"), options.hostname, options.port)) {
      return refused(
        403,
        "Forbidden: this server answers only requests addressed to it by its own address",
      );
    }
    const url = new URL(request.url);
    const given = bearerToken(request.headers.get("authorization")) ??
      url.searchParams.get("token");
    if (!check.matches(given)) {
      return refused(
        401,
        "Unauthorized: open the URL loom view printed, with its token",
      );
    }
    if (request.method !== "GET") {
      return refused(405, "Method not allowed: this server only reads", {
        Allow: "GET",
      });
    }
    if (url.pathname === "/") {
      return new Response(page.html, {
        headers: {
          ...SECURITY_HEADERS,
          "Content-Type": "text/html; charset=utf-8",
          "Content-Security-Policy": page.csp,
        },
      });
    }
    const answer = await route(options.api, url);
    return new Response(JSON.stringify(answer.body), {
      status: answer.status,
      headers: {
        ...SECURITY_HEADERS,
        "Content-Type": "application/json; charset=utf-8",
        "Content-Security-Policy": "default-src 'none'",
      },
    });
  };
}

async function route(
  api: ViewApi,
  url: URL,
): Promise<{ status: number; body: unknown }> {
  const parts = url.pathname.split("/").slice(1).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return "";
    }
  });
  if (parts[0] !== "api" || parts[1] !== "runs") {
    return { status: 404, body: { error: "Not found" } };
  }
  const [, , id, what, arg, action] = parts;
  if (id === undefined) return api.runs();
  if (what === undefined) return api.detail(id);
  const index = /^(0|[1-9][0-9]{0,8})$/.test(arg ?? "")
    ? Number(arg)
    : undefined;
  if (what === "requests" && index !== undefined && action === undefined) {
    return await api.request(id, index);
  }
  if (what === "replies" && index !== undefined && action === undefined) {
    return api.reply(id, index);
  }
  if (what === "results" && arg !== undefined) {
    if (action === "read") return await api.read(id, arg, url.searchParams);
    if (action === "find") return await api.find(id, arg, url.searchParams);
  }
  return { status: 404, body: { error: "Not found" } };
}

function refused(
  status: number,
  text: string,
  headers: Record<string, string> = {},
): Response {
  return refusal(status, text, { ...SECURITY_HEADERS, ...headers });
}

/** Options of {@linkcode serveView}. */
export interface ServeViewOptions {
  /** The address to bind. */
  readonly hostname: string;
  /** The port (0: one the system picks). */
  readonly port: number;
  /** The token (default: 32 random bytes, hex). */
  readonly token?: string;
  /** The runs' API. */
  readonly api: ViewApi;
  /** Told the page's URL once listening. */
  readonly onListen: (url: string) => void;
  /** Stops the server. */
  readonly signal?: AbortSignal;
}

/**
 * Serves the view until the signal aborts.
 *
 * @param options Address, API, what to do with the URL.
 * @returns When the server has stopped.
 * @throws {Deno.errors.AddrInUse} When the address is taken (and the other
 *   errors of `Deno.serve`).
 */
export async function serveView(options: ServeViewOptions): Promise<void> {
  const token = options.token ?? randomToken();
  let handler: ((request: Request) => Promise<Response>) | undefined;
  const server = Deno.serve(
    {
      hostname: options.hostname,
      port: options.port,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      onListen: ({ hostname, port }) => {
        handler = viewHandler({
          token,
          hostname: options.hostname,
          port,
          api: options.api,
        });
        const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
        options.onListen(`http://${shown}:${port}/?token=${token}`);
      },
      onError: () => refused(500, "Internal error"),
    },
    (request) =>
      handler === undefined
        ? Promise.resolve(refused(503, "Starting"))
        : handler(request),
  );
  await server.finished;
}

/**
 * A per-launch token: 32 random bytes as hex.
 *
 * @returns The token.
 *
 * @example
 * ```ts
 * import { randomToken } from "./view_server.ts";
 * import assert from "node:assert/strict";
 * assert.match(randomToken(), /^[0-9a-f]{64}$/);
 * assert.notEqual(randomToken(), randomToken());
 * ```
 */
export function randomToken(): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(32)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}
