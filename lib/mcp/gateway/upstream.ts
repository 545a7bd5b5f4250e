/**
 * One upstream server of the gateway: the SDK's `Client` over the gateway's
 * linear stdio transport (or the SDK's Streamable HTTP / SSE transports for
 * remote entries), connected with the client capabilities the host
 * declared. Requests the upstream sends (sampling, elicitation, roots) go to
 * the relay when the host declared the capability and are refused with a
 * clear error otherwise; logging and list changes are relayed. A server
 * that fails to start, crashes or hangs fails only its own calls, with a
 * message naming it and the last lines of its standard error; the next call
 * restarts it after a backoff (250 ms, doubling, at most 30 s).
 *
 * @module
 */
import { z } from "zod";
import type { Sdk } from "./sdk.ts";
import { VERSION } from "../../version.ts";
import type { ServerEntry } from "./gateway_config.ts";
import { startClientRequest } from "../../telemetry/mcp.ts";
import {
  LinearStdioTransport,
  PARTIAL_META_KEY,
  type Transport,
} from "./linear_stdio_transport.ts";
import { messageOf } from "../../errors.ts";

/** The client capabilities a host declared (an open object). */
export type ClientCapabilities = Record<string, unknown>;

/** What the gateway does with what an upstream sends on its own. */
export interface UpstreamRelay {
  /** Relays `sampling/createMessage` to the host. */
  readonly createMessage?: (
    params: Record<string, unknown>,
    signal: AbortSignal,
  ) => Promise<Record<string, unknown>>;
  /** Relays `elicitation/create` to the host. */
  readonly elicit?: (
    params: Record<string, unknown>,
    signal: AbortSignal,
  ) => Promise<Record<string, unknown>>;
  /** Relays `roots/list` to the host. */
  readonly listRoots?: (
    params: Record<string, unknown>,
    signal: AbortSignal,
  ) => Promise<Record<string, unknown>>;
  /** A logging message of the upstream. */
  readonly log: (params: Record<string, unknown>) => void;
  /** The upstream's tools, resources or prompts changed. */
  readonly listChanged: (what: "tools" | "resources" | "prompts") => void;
}

/** Options of {@linkcode Upstream}. */
export interface UpstreamOptions {
  /** The MCP SDK (`loadSdk()`). */
  readonly sdk: Sdk;
  /** The host's client capabilities (sampling, elicitation, roots are passed on). */
  readonly capabilities: ClientCapabilities;
  /** The relay to the host. */
  readonly relay: UpstreamRelay;
  /** The longest message read from a stdio upstream. */
  readonly maxMessageBytes: number;
  /**
   * A string of a stdio upstream's `tools/call` answer longer than this
   * arrives as a `LargeText` (set it above the offload threshold, so that
   * every such answer is offloaded; default 1 MiB).
   */
  readonly largeStringBytes?: number;
  /** The deadline of one request, in milliseconds. */
  readonly callTimeoutMs: number;
  /**
   * The deadline of the server's start — its process up (or its URL
   * reached) and `initialize` answered — in milliseconds (default
   * {@linkcode DEFAULT_START_TIMEOUT_MS}). Apart from the calls' deadline:
   * a server started by `npx` or `deno run npm:…` on a loaded machine can
   * take seconds before it reads its input, however quick its calls are.
   */
  readonly startTimeoutMs?: number;
  /** The environment a stdio upstream starts with (the entry's `env` is added). */
  readonly env: Readonly<Record<string, string>>;
  /** Diagnostics to standard error. */
  readonly log: (line: string) => void;
  /**
   * Called when the server is connected again after it stopped (it was
   * restarted, and its tools may have changed).
   */
  readonly onReconnect?: () => void;
}

/** A failed upstream request: what the host is told, with a stable code. */
export class UpstreamFailure extends Error {
  /** `upstream_unavailable`, `upstream_timeout`, `upstream_error` or `upstream_cancelled`. */
  readonly code: string;
  /** The JSON-RPC error code of an `upstream_error`. */
  readonly rpcCode: number | undefined;

  /**
   * @param code The failure code.
   * @param message What failed, naming the server.
   * @param rpcCode The upstream's JSON-RPC error code.
   */
  constructor(code: string, message: string, rpcCode?: number) {
    super(message);
    this.name = "UpstreamFailure";
    this.code = code;
    this.rpcCode = rpcCode;
  }
}

/** A tool as the upstream lists it (open object). */
export type UpstreamTool = Record<string, unknown> & { name: string };

/** An answer of {@linkcode Upstream.request}. */
export interface UpstreamAnswer {
  /** The result object, as the upstream sent it. */
  readonly result: Record<string, unknown>;
  /** Set when the transport cut the answer at its limit: the full size. */
  readonly partialTotalBytes?: number;
}

const LOOSE = z.looseObject({});
const MAX_BACKOFF_MS = 30_000;

/** How long a server may take to start (`--start-timeout`), by default. */
export const DEFAULT_START_TIMEOUT_MS = 120_000;

/**
 * The gateway's connection to one upstream server.
 *
 * @example
 * ```ts
 * import { Upstream } from "./upstream.ts";
 * import { loadSdk } from "./sdk.ts";
 * import assert from "node:assert/strict";
 * const upstream = new Upstream(
 *   { name: "none", transport: "stdio", command: "/nonexistent/server", args: [], env: {},
 *     classification: { persist: false, selfReading: false }, tools: {} },
 *   { sdk: await loadSdk(), capabilities: {}, relay: { log: () => {}, listChanged: () => {} }, maxMessageBytes: 1 << 20,
 *     callTimeoutMs: 5000, env: {}, log: () => {} },
 * );
 * await assert.rejects(upstream.listTools(), (e: Error) => /none/.test(e.message));
 * await upstream.close();
 * ```
 */
export class Upstream {
  /** The entry. */
  readonly entry: ServerEntry;
  readonly #options: UpstreamOptions;
  // deno-lint-ignore no-explicit-any
  #client: any;
  #transport: Transport | undefined;
  // deno-lint-ignore no-explicit-any
  #connecting: Promise<any> | undefined;
  #failures = 0;
  #retryAt = 0;
  #lastFailure = "";
  #closed = false;
  #connectedBefore = false;
  #instructions: string | undefined;

  /**
   * Prepares the connection; nothing starts until the first request.
   *
   * @param entry The server's entry.
   * @param options Capabilities, relay, limits.
   */
  constructor(entry: ServerEntry, options: UpstreamOptions) {
    this.entry = entry;
    this.#options = options;
  }

  /** The server's entry name. */
  get name(): string {
    return this.entry.name;
  }

  /** What the upstream said about itself at initialisation. */
  get instructions(): string | undefined {
    return this.#instructions;
  }

  /** Whether the upstream is connected now. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /**
   * Lists every page of a `…/list` method whose answer holds `key`; an
   * upstream that does not offer the capability answers an empty list.
   *
   * @param method `resources/list` or `prompts/list`.
   * @param key `resources` or `prompts`.
   * @param capability The server capability the method needs.
   * @returns The items (open objects).
   * @throws {UpstreamFailure} When the server cannot be reached.
   */
  async listAll(
    method: string,
    key: string,
    capability: string,
  ): Promise<Record<string, unknown>[]> {
    const client = await this.#connect();
    const offered = (client.getServerCapabilities() ?? {}) as Record<
      string,
      unknown
    >;
    if (offered[capability] === undefined) return [];
    const items: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const { result } = await this.request(
        method,
        cursor === undefined ? {} : { cursor },
      );
      const listed = Array.isArray(result[key]) ? result[key] : [];
      for (const item of listed as unknown[]) {
        if (typeof item === "object" && item !== null && !Array.isArray(item)) {
          items.push(item as Record<string, unknown>);
        }
      }
      cursor = typeof result.nextCursor === "string"
        ? result.nextCursor
        : undefined;
      if (cursor === undefined) break;
    }
    return items;
  }

  /**
   * Lists the upstream's tools (every page).
   *
   * @returns The tools as the upstream lists them.
   * @throws {UpstreamFailure} When the server cannot be reached.
   */
  async listTools(): Promise<UpstreamTool[]> {
    const tools: UpstreamTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const { result } = await this.request(
        "tools/list",
        cursor === undefined ? {} : { cursor },
      );
      const listed = Array.isArray(result.tools) ? result.tools : [];
      for (const tool of listed) {
        if (
          typeof tool === "object" && tool !== null &&
          typeof (tool as { name?: unknown }).name === "string"
        ) tools.push(tool as UpstreamTool);
      }
      cursor = typeof result.nextCursor === "string"
        ? result.nextCursor
        : undefined;
      if (cursor === undefined) break;
    }
    return tools;
  }

  /**
   * Sends one request to the upstream, connecting first when needed.
   *
   * @param method The JSON-RPC method.
   * @param params Its parameters.
   * @param options The host's cancellation and a progress callback.
   * @returns The result object, untouched.
   * @throws {UpstreamFailure} On start failure, crash, deadline, cancellation
   *   or a JSON-RPC error of the upstream.
   */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: {
      readonly signal?: AbortSignal;
      readonly onprogress?: (progress: Record<string, unknown>) => void;
    } = {},
  ): Promise<UpstreamAnswer> {
    const client = await this.#connect();
    const transport = this.#transport;
    const timeout = this.#options.callTimeoutMs;
    // The CLIENT span; its trace context goes in the request's `_meta`.
    const entry = this.entry;
    const traced = startClientRequest(method, params, {
      server: entry.name,
      transport: entry.transport === "stdio" ? "stdio" : "http",
      ...(entry.transport === "stdio" ? {} : { url: entry.url }),
    });
    let result: Record<string, unknown>;
    try {
      result = await client.request(
        { method, params: traced.params } as never,
        LOOSE,
        {
          timeout,
          maxTotalTimeout: timeout,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
          ...(options.onprogress === undefined ? {} : {
            onprogress: (p: unknown) =>
              options.onprogress!(p as Record<string, unknown>),
          }),
        },
      ) as Record<string, unknown>;
    } catch (error) {
      const failure = await this.#failure(error, method, options.signal);
      traced.end({ error: failure.rpcCode === undefined ? failure : error });
      throw failure;
    }
    traced.end({ result });
    if (transport instanceof LinearStdioTransport) {
      const meta = result._meta as Record<string, unknown> | undefined;
      if (meta?.[PARTIAL_META_KEY] === transport.partialNonce) {
        const total = Number(meta["loom/partial_total_bytes"]);
        return { result, partialTotalBytes: total };
      }
    }
    return { result };
  }

  /** Tells the upstream the host's roots changed. */
  async rootsChanged(): Promise<void> {
    await this.#client?.sendRootsListChanged().catch(() => {});
  }

  /** Closes the connection and stops a stdio server. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => {});
  }

  // deno-lint-ignore no-explicit-any
  async #connect(): Promise<any> {
    if (this.#client !== undefined) return this.#client;
    this.#connecting ??= this.#start().finally(() => {
      this.#connecting = undefined;
    });
    return await this.#connecting;
  }

  // deno-lint-ignore no-explicit-any
  async #start(): Promise<any> {
    if (this.#closed) {
      throw new UpstreamFailure(
        "upstream_unavailable",
        `Server ${this.name} is closed`,
      );
    }
    const wait = this.#retryAt - Date.now();
    if (wait > 0) {
      if (wait > this.#options.callTimeoutMs) {
        throw new UpstreamFailure(
          "upstream_unavailable",
          `Server ${this.name} is unavailable (${this.#lastFailure}); it is retried in ${
            Math.ceil(wait / 1000)
          } s`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const { capabilities, relay, sdk } = this.#options;
    const {
      CreateMessageRequestSchema,
      ElicitRequestSchema,
      ErrorCode,
      ListRootsRequestSchema,
      LoggingMessageNotificationSchema,
      McpError,
      PromptListChangedNotificationSchema,
      ResourceListChangedNotificationSchema,
      ToolListChangedNotificationSchema,
    } = sdk.types;
    const passed: ClientCapabilities = {
      ...(capabilities.sampling ? { sampling: capabilities.sampling } : {}),
      ...(capabilities.elicitation
        ? { elicitation: capabilities.elicitation }
        : {}),
      ...(capabilities.roots ? { roots: capabilities.roots } : {}),
    };
    const client = new sdk.Client(
      { name: "loom-gateway", version: VERSION },
      { capabilities: passed },
    );
    const server = this.name;
    // What the host declared is relayed to it; the rest meets the fallback.
    const relayed = [
      [passed.sampling, CreateMessageRequestSchema, relay.createMessage],
      [passed.elicitation, ElicitRequestSchema, relay.elicit],
      [passed.roots, ListRootsRequestSchema, relay.listRoots],
    ] as const;
    for (const [declared, schema, forward] of relayed) {
      if (!declared || forward === undefined) continue;
      client.setRequestHandler(
        schema,
        (request: { params?: unknown }, extra: { signal: AbortSignal }) =>
          forward(
            (request.params ?? {}) as Record<string, unknown>,
            extra.signal,
          ) as never,
      );
    }
    client.fallbackRequestHandler = (request: { method: string }) => {
      const method = String(request.method).slice(0, 64);
      throw new McpError(
        ErrorCode.MethodNotFound,
        `Loom's gateway refuses ${
          JSON.stringify(method)
        } from server ${server}: the host did not declare the capability it needs, so it cannot be relayed`,
      );
    };
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (notification: { params: unknown }) =>
        relay.log(notification.params as Record<string, unknown>),
    );
    client.setNotificationHandler(
      ToolListChangedNotificationSchema,
      () => relay.listChanged("tools"),
    );
    client.setNotificationHandler(
      ResourceListChangedNotificationSchema,
      () => relay.listChanged("resources"),
    );
    client.setNotificationHandler(
      PromptListChangedNotificationSchema,
      () => relay.listChanged("prompts"),
    );
    const transport = this.#transportOf();
    this.#transport = transport;
    client.onclose = () => {
      if (this.#client === client) {
        this.#client = undefined;
        if (!this.#closed) {
          this.#noteFailure("it stopped");
          this.#options.log(`server ${server} stopped${this.#exitText()}`);
        }
      }
    };
    client.onerror = (error: Error) => {
      this.#options.log(`server ${server}: ${clean(error.message, 200)}`);
    };
    const startTimeoutMs = this.#options.startTimeoutMs ??
      DEFAULT_START_TIMEOUT_MS;
    try {
      await client.connect(transport, { timeout: startTimeoutMs });
    } catch (error) {
      await client.close().catch(() => {});
      this.#noteFailure("it failed to start");
      const timedOut = (error as { code?: unknown })?.code ===
        ErrorCode.RequestTimeout;
      throw new UpstreamFailure(
        "upstream_unavailable",
        this.#describe(
          `failed to start: ${
            timedOut
              ? `it did not answer initialize within ${
                startTimeoutMs / 1000
              } s (--start-timeout)`
              : clean(messageOf(error), 300)
          }`,
        ),
      );
    }
    this.#failures = 0;
    this.#retryAt = 0;
    this.#instructions = client.getInstructions();
    this.#client = client;
    if (this.#connectedBefore) {
      queueMicrotask(() => this.#options.onReconnect?.());
    }
    this.#connectedBefore = true;
    return client;
  }

  #transportOf(): Transport {
    const entry = this.entry;
    if (entry.transport === "stdio") {
      return new LinearStdioTransport({
        command: entry.command,
        args: entry.args,
        env: { ...this.#options.env, ...entry.env },
        ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }),
        maxMessageBytes: this.#options.maxMessageBytes,
        ...(this.#options.largeStringBytes === undefined
          ? {}
          : { largeStringBytes: this.#options.largeStringBytes }),
      });
    }
    const requestInit = { headers: { ...entry.headers } };
    const { SSEClientTransport, StreamableHTTPClientTransport } =
      this.#options.sdk;
    return entry.transport === "sse"
      ? new SSEClientTransport(new URL(entry.url), { requestInit })
      : new StreamableHTTPClientTransport(new URL(entry.url), {
        requestInit,
      }) as Transport;
  }

  #noteFailure(what: string): void {
    this.#failures += 1;
    this.#lastFailure = what;
    this.#retryAt = Date.now() +
      Math.min(MAX_BACKOFF_MS, 250 * 2 ** (this.#failures - 1));
  }

  async #failure(
    error: unknown,
    method: string,
    signal: AbortSignal | undefined,
  ): Promise<UpstreamFailure> {
    const { McpError, ErrorCode } = this.#options.sdk.types;
    if (error instanceof McpError) {
      const rpc = error as { code: number; message: string };
      if (rpc.code === ErrorCode.RequestTimeout) {
        return new UpstreamFailure(
          "upstream_timeout",
          this.#describe(
            `did not answer ${method} within ${
              this.#options.callTimeoutMs / 1000
            } s (--call-timeout); the request was cancelled`,
          ),
        );
      }
      if (rpc.code === ErrorCode.ConnectionClosed) {
        // Let the transport drain the last of standard error.
        await this.#transport?.close().catch(() => {});
        return new UpstreamFailure(
          "upstream_unavailable",
          this.#describe(
            `stopped while answering ${method}${this.#exitText()}; it is restarted on the next call`,
          ),
        );
      }
      return new UpstreamFailure(
        "upstream_error",
        `Server ${this.name} answered ${method} with error ${rpc.code}: ${
          clean(rpc.message.replace(/^MCP error -?\d+: /, ""), 2000)
        }`,
        rpc.code,
      );
    }
    if (signal?.aborted) {
      return new UpstreamFailure(
        "upstream_cancelled",
        `The host cancelled ${method} on server ${this.name}`,
      );
    }
    if (error instanceof UpstreamFailure) return error;
    return new UpstreamFailure(
      "upstream_unavailable",
      this.#describe(
        `failed on ${method}: ${clean(messageOf(error), 300)}`,
      ),
    );
  }

  #exitText(): string {
    const transport = this.#transport;
    if (!(transport instanceof LinearStdioTransport)) return "";
    const status = transport.exitStatus;
    if (status === undefined) return "";
    return status.signal === null
      ? ` (exit code ${status.code})`
      : ` (signal ${status.signal})`;
  }

  #describe(what: string): string {
    const transport = this.#transport;
    let text = `Server ${this.name} ${what}`;
    if (transport instanceof LinearStdioTransport) {
      if (transport.garbageLines > 0) {
        text +=
          `; it wrote ${transport.garbageLines} line(s) to standard output that are not JSON-RPC`;
      }
      const tail = lastLines(transport.stderrTail, 10, 1500);
      if (tail !== "") {
        text += `. Last lines of its standard error:\n${tail}`;
      }
    }
    return text;
  }
}

/** Control characters (but newline and tab) removed, cut to `max` characters. */
function clean(text: string, max: number): string {
  // deno-lint-ignore no-control-regex
  const out = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

function lastLines(text: string, lines: number, max: number): string {
  const all = clean(text, Infinity).trimEnd().split("\n");
  const tail = all.slice(-lines).join("\n");
  return tail.length > max ? tail.slice(tail.length - max) : tail;
}
