/**
 * The gateway's MCP server, apart from its transport: the SDK's low-level
 * `Server` answering `tools/list` and `tools/call` through a
 * {@linkcode Gateway}. When the host has initialised, the gateway connects
 * its upstreams with the host's client capabilities; what the upstreams ask
 * of the host (sampling, elicitation, roots) and tell it (logging, list
 * changes, progress) is relayed. The CLI connects the server to stdio, or
 * builds one per request over HTTP (`shared`: then nothing but progress
 * reaches a host).
 *
 * @module
 */
import { z } from "zod";
import type { Sdk } from "./sdk.ts";
import { VERSION } from "../../version.ts";
import type { Gateway } from "./gateway.ts";
import { type ClientCapabilities, UpstreamFailure } from "./upstream.ts";
import { serveOverStdio } from "../stdio_loop.ts";
import {
  type McpRequestExtra,
  traceServerRequest,
} from "../../telemetry/mcp.ts";

/** Options of {@linkcode createGatewayServer}. */
export interface GatewayServerOptions {
  /** The MCP SDK (`loadSdk()`). */
  readonly sdk: Sdk;
  /** Instructions for the host's model. */
  readonly instructions?: string;
  /** Diagnostics to standard error. */
  readonly log: (line: string) => void;
  /**
   * The server is one of many over one gateway (one per HTTP request):
   * the upstreams are connected without any host's client capabilities and
   * nothing is relayed to a host (no sampling, elicitation, roots, logging
   * or list changes), since no one host owns them. Default `false`: the
   * server's host is the gateway's only one.
   */
  readonly shared?: boolean;
  /**
   * How hosts reach the server, for telemetry: `http` when `shared`,
   * `stdio` otherwise, unless given.
   */
  readonly transport?: "stdio" | "http";
}

/** What the SDK hands a request handler besides the request. */
interface HandlerExtra extends McpRequestExtra {
  readonly signal: AbortSignal;
  readonly sendNotification: (n: unknown) => Promise<void>;
}

/** What the shared servers relay to a host: nothing. */
const NO_RELAY = { log: () => {}, listChanged: () => {} };

/** The SDK server the gateway answers on (the SDK's `Server`). */
export interface GatewayServer {
  /** Connects the server to a transport and starts answering. */
  connect(transport: unknown): Promise<void>;
  /** Stops the server. */
  close(): Promise<void>;
  /** Called when the transport closes. */
  onclose?: () => void;
  /** Settles when every call in flight has been answered. */
  readonly settled?: () => Promise<void>;
}

const LOOSE = z.looseObject({});

/** What the gateway tells the host's model at initialisation. */
export const GATEWAY_INSTRUCTIONS =
  "Loom's gateway: the tools named <server>__<tool> are the user's own MCP servers'; when search_tools is listed they are not, to keep the prompt small: find them with search_tools (by words, or by exact name) and call them with call_tool. An answer over the offload threshold is stored and answered with a descriptor (result id, sha256, size, lines, a preview and, for JSON, an outline) instead of its text. Read exactly what you need from it with read_result (bytes, lines or an RFC 6901 JSON pointer; digest-checked; long reads continue with next) and search it with find_in_result, which answers each match's line, byte range and JSON pointer.";

/**
 * Builds the gateway's MCP server.
 *
 * @param gateway The gateway.
 * @param options Instructions and the log.
 * @returns The server, not yet connected.
 *
 * @example
 * ```ts
 * import { createGatewayServer } from "./gateway_server.ts";
 * import { Gateway } from "./gateway.ts";
 * import { loadSdk } from "./sdk.ts";
 * import { ResultStore } from "../../store/result_store.ts";
 * import assert from "node:assert/strict";
 * const sdk = await loadSdk();
 * const gateway = new Gateway({
 *   sdk,
 *   config: { file: "x.json", servers: [], skipped: [] },
 *   store: new ResultStore(), offloadBytes: 8192, maxResultBytes: 1 << 20,
 *   callTimeoutMs: 1000, env: {}, log: () => {},
 * });
 * const server = createGatewayServer(gateway, { sdk, log: () => {} });
 * assert.equal(typeof server.connect, "function");
 * await server.close();
 * ```
 */
export function createGatewayServer(
  gateway: Gateway,
  options: GatewayServerOptions,
): GatewayServer {
  const {
    CallToolRequestSchema,
    GetPromptRequestSchema,
    ListPromptsRequestSchema,
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ListToolsRequestSchema,
    ReadResourceRequestSchema,
    RootsListChangedNotificationSchema,
    SetLevelRequestSchema,
  } = options.sdk.types;
  const asRpcError = (error: unknown) => rpcError(options.sdk, error);
  const server = new options.sdk.Server(
    { name: "loom", version: VERSION },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
        logging: {},
      },
      instructions: options.instructions ?? GATEWAY_INSTRUCTIONS,
    },
  );
  // Every request a host sends is one SERVER span (telemetry/mcp.ts).
  const transport = options.transport ??
    (options.shared === true ? "http" : "stdio");
  const traced = <R extends { params?: unknown }, T>(
    method: string,
    handler: (request: R, extra: McpRequestExtra) => Promise<T> | T,
  ) =>
  (request: R, extra: McpRequestExtra): Promise<T> =>
    traceServerRequest(
      method,
      request as { params?: Record<string, unknown> },
      extra,
      transport,
      async () => await handler(request, extra),
    );
  // Calls still running when the input ends are answered before the stop.
  const inFlight = new Set<Promise<unknown>>();
  const start = () => {
    if (options.shared === true) return gateway.start({}, NO_RELAY);
    const capabilities: ClientCapabilities = server.getClientCapabilities() ??
      {};
    return gateway.start(capabilities, {
      createMessage: (params, signal) =>
        server.request(
          { method: "sampling/createMessage", params },
          LOOSE,
          { signal },
        ),
      elicit: (params, signal) =>
        server.request(
          { method: "elicitation/create", params },
          LOOSE,
          { signal },
        ),
      listRoots: (params, signal) =>
        server.request({ method: "roots/list", params }, LOOSE, { signal }),
      log: (params) => {
        void server.notification({
          method: "notifications/message",
          params,
        }).catch(() => {});
      },
      listChanged: (what) => {
        const sent = what === "tools"
          ? server.sendToolListChanged()
          : what === "resources"
          ? server.sendResourceListChanged()
          : server.sendPromptListChanged();
        void Promise.resolve(sent).catch(() => {});
      },
    });
  };
  server.oninitialized = () => {
    void start();
  };
  server.setRequestHandler(
    ListToolsRequestSchema,
    traced("tools/list", async () => {
      await start();
      return { tools: gateway.tools() };
    }),
  );
  server.setRequestHandler(
    CallToolRequestSchema,
    traced("tools/call", async (
      request: {
        params: {
          name: string;
          arguments?: Record<string, unknown>;
          _meta?: Record<string, unknown>;
        };
      },
      extra: McpRequestExtra,
    ) => {
      await start();
      const { name, arguments: args, _meta: meta } = request.params;
      const token = meta?.progressToken;
      const call = gateway.call(name, args ?? {}, {
        signal: (extra as HandlerExtra).signal,
        ...(meta === undefined ? {} : { meta }),
        ...(token === undefined ? {} : {
          progress: (progress: Record<string, unknown>) => {
            void (extra as HandlerExtra).sendNotification({
              method: "notifications/progress",
              params: { ...progress, progressToken: token },
            }).catch(() => {});
          },
        }),
      });
      inFlight.add(call);
      try {
        return await call;
      } finally {
        inFlight.delete(call);
      }
    }),
  );
  server.setRequestHandler(
    ListResourcesRequestSchema,
    traced("resources/list", async () => {
      await start();
      return { resources: gateway.resources() };
    }),
  );
  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    traced("resources/templates/list", async () => {
      await start();
      return { resourceTemplates: gateway.resourceTemplates() };
    }),
  );
  server.setRequestHandler(
    ListPromptsRequestSchema,
    traced("prompts/list", async () => {
      await start();
      return { prompts: gateway.prompts() };
    }),
  );
  server.setRequestHandler(
    ReadResourceRequestSchema,
    traced("resources/read", async (request: { params: { uri: string } }) => {
      await start();
      try {
        return await gateway.readResource(request.params.uri);
      } catch (error) {
        throw asRpcError(error);
      }
    }),
  );
  server.setRequestHandler(
    GetPromptRequestSchema,
    traced("prompts/get", async (
      request: {
        params: { name: string; arguments?: Record<string, unknown> };
      },
    ) => {
      await start();
      try {
        return await gateway.getPrompt(
          request.params.name,
          request.params.arguments,
        );
      } catch (error) {
        throw asRpcError(error);
      }
    }),
  );
  server.setRequestHandler(
    SetLevelRequestSchema,
    traced("logging/setLevel", () => ({})),
  );
  server.setNotificationHandler(
    RootsListChangedNotificationSchema,
    () => void gateway.rootsChanged(),
  );
  server.onerror = (error: Error) =>
    options.log(`transport error: ${error.message}`);
  return Object.assign(server, {
    settled: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  }) as GatewayServer;
}

/** An upstream failure of a resource or prompt request, as a JSON-RPC error. */
function rpcError(sdk: Sdk, error: unknown): Error {
  const { ErrorCode, McpError } = sdk.types;
  if (error instanceof UpstreamFailure) {
    const code = error.code === "upstream_error" && error.rpcCode !== undefined
      ? error.rpcCode
      : error.code.startsWith("unknown_")
      ? ErrorCode.InvalidParams
      : ErrorCode.InternalError;
    return new McpError(code, `${error.code}: ${error.message}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Serves the gateway's server over standard input and output until the
 * input ends or SIGINT/SIGTERM; calls in flight are answered first.
 *
 * @param server The server of {@linkcode createGatewayServer}.
 * @param sdk The MCP SDK.
 * @returns When the server has stopped.
 */
export function serveGatewayStdio(
  server: GatewayServer,
  sdk: Sdk,
): Promise<void> {
  return serveOverStdio(server, new sdk.StdioServerTransport());
}
