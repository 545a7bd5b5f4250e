/**
 * The MCP spans (`open-telemetry/semantic-conventions-genai`,
 * `docs/gen-ai/mcp.md`): a `SERVER` span per request a host sends, parented
 * on the trace context the host put in `params._meta` (`traceparent`,
 * `tracestate`), and a `CLIENT` span per request sent upstream, whose
 * context is injected into that request's `params._meta`. Both are named
 * `{mcp.method.name} {target}` (the tool or prompt name) and timed by
 * `mcp.server.operation.duration` / `mcp.client.operation.duration`.
 *
 * @module
 */
import {
  type Attributes,
  context,
  propagation,
  type Span,
} from "@opentelemetry/api";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_LOOM_BYTES_TO_HOST,
  ATTR_LOOM_BYTES_UPSTREAM,
  ATTR_LOOM_RESULT_IDS,
  ATTR_LOOM_RESULT_SHA256,
  ATTR_LOOM_UPSTREAM,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_RESOURCE_URI,
  ATTR_MCP_SESSION_ID,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_NETWORK_TRANSPORT,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ERROR_TYPE_VALUE_TOOL_ERROR,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  MCP_DURATION_BUCKETS,
  METRIC_MCP_CLIENT_OPERATION_DURATION,
  METRIC_MCP_SERVER_OPERATION_DURATION,
  NETWORK_TRANSPORT_VALUE_PIPE,
  NETWORK_TRANSPORT_VALUE_TCP,
} from "./semconv.ts";
import {
  clip,
  contextOf,
  failSpan,
  LazyHistogram,
  recordingActiveSpan,
  secondsSince,
  SpanKind,
  startSpan,
} from "./tracing.ts";
import {
  contentMode,
  type ContentReference,
  referencesJson,
} from "./content.ts";

const serverDuration = new LazyHistogram(
  METRIC_MCP_SERVER_OPERATION_DURATION,
  "s",
  "MCP request duration as observed on the receiver",
  MCP_DURATION_BUCKETS,
);
const clientDuration = new LazyHistogram(
  METRIC_MCP_CLIENT_OPERATION_DURATION,
  "s",
  "MCP request duration as observed on the sender",
  MCP_DURATION_BUCKETS,
);

/** How a peer is reached: `stdio` (a pipe) or `http` (TCP). */
export type McpTransport = "stdio" | "http";

/** A request's parameters, as far as the spans read them (untrusted). */
type Params = Record<string, unknown> | undefined;

/** `{method} {target}` and the target's attributes. */
function naming(
  method: string,
  params: Params,
): { name: string; attributes: Attributes } {
  const attributes: Attributes = { [ATTR_MCP_METHOD_NAME]: method };
  const named = typeof params?.name === "string"
    ? clip(params.name, 128)
    : undefined;
  if (method === "tools/call" && named !== undefined) {
    attributes[ATTR_GEN_AI_TOOL_NAME] = named;
    attributes[ATTR_GEN_AI_OPERATION_NAME] =
      GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL;
    return { name: `${method} ${named}`, attributes };
  }
  if (method === "prompts/get" && named !== undefined) {
    attributes[ATTR_GEN_AI_PROMPT_NAME] = named;
    return { name: `${method} ${named}`, attributes };
  }
  return { name: method, attributes };
}

function transportAttributes(span: Span, transport: McpTransport): void {
  if (transport === "stdio") {
    span.setAttribute(ATTR_NETWORK_TRANSPORT, NETWORK_TRANSPORT_VALUE_PIPE);
  } else {
    span.setAttribute(ATTR_NETWORK_TRANSPORT, NETWORK_TRANSPORT_VALUE_TCP);
    span.setAttribute(ATTR_NETWORK_PROTOCOL_NAME, "http");
  }
}

/** How a request ended, read from its result or its error. */
function outcomeOf(
  method: string,
  result: unknown,
  error: unknown,
): { type: string; message?: string; rpcCode?: string } | undefined {
  if (error !== undefined) {
    const code = (error as { code?: unknown } | null)?.code;
    const rpcCode = typeof code === "number" ? String(code) : undefined;
    return {
      type: rpcCode ??
        (typeof code === "string" && /^[a-z_]{1,64}$/.test(code)
          ? code
          : "_OTHER"),
      message: error instanceof Error ? error.message : String(error),
      ...(rpcCode === undefined ? {} : { rpcCode }),
    };
  }
  if (
    method === "tools/call" &&
    (result as { isError?: unknown } | null)?.isError === true
  ) {
    return { type: ERROR_TYPE_VALUE_TOOL_ERROR };
  }
  return undefined;
}

function durationAttributes(
  attributes: Attributes,
  failure: { type: string; rpcCode?: string } | undefined,
): Attributes {
  return failure === undefined ? attributes : {
    ...attributes,
    "error.type": failure.type,
    ...(failure.rpcCode === undefined
      ? {}
      : { [ATTR_RPC_RESPONSE_STATUS_CODE]: failure.rpcCode }),
  };
}

function endWith(
  span: Span,
  failure: { type: string; message?: string; rpcCode?: string } | undefined,
): void {
  if (failure !== undefined && span.isRecording()) {
    if (failure.rpcCode !== undefined) {
      span.setAttribute(ATTR_RPC_RESPONSE_STATUS_CODE, failure.rpcCode);
    }
    failSpan(span, failure.type, failure.message);
  }
  span.end();
}

/** What the SDK tells a request handler about the request (`extra`). */
export interface McpRequestExtra {
  /** The JSON-RPC id. */
  readonly requestId?: string | number;
  /** The MCP session (Streamable HTTP's `Mcp-Session-Id`). */
  readonly sessionId?: string;
  /** The HTTP request's headers, over HTTP. */
  readonly requestInfo?: {
    readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  };
}

/**
 * Runs a request handler inside the request's `SERVER` span: parented on the
 * host's `params._meta` trace context, `error.type` set from a thrown
 * JSON-RPC error or an `isError` tool result, the duration recorded. In
 * `full` content mode a `tools/call` span carries the arguments and the
 * answer.
 *
 * @param method The request's method.
 * @param request The request (`params` untrusted).
 * @param extra The SDK's `extra` of the handler.
 * @param transport How the host is connected.
 * @param handler The handler.
 * @returns What the handler returns.
 */
export async function traceServerRequest<T>(
  method: string,
  request: { readonly params?: Params },
  extra: McpRequestExtra | undefined,
  transport: McpTransport,
  handler: () => Promise<T>,
): Promise<T> {
  const params = request.params;
  const meta = params?._meta;
  const parent = meta !== null && typeof meta === "object"
    ? propagation.extract(context.active(), meta)
    : context.active();
  const { name, attributes } = naming(method, params);
  const span = startSpan(name, {
    kind: SpanKind.SERVER,
    parent,
    attributes,
  });
  if (span.isRecording()) {
    transportAttributes(span, transport);
    const id = extra?.requestId;
    if (id !== undefined) {
      span.setAttribute(ATTR_JSONRPC_REQUEST_ID, String(id));
    }
    if (extra?.sessionId !== undefined) {
      span.setAttribute(ATTR_MCP_SESSION_ID, clip(extra.sessionId, 128));
    }
    const version = extra?.requestInfo?.headers?.["mcp-protocol-version"];
    if (typeof version === "string") {
      span.setAttribute(ATTR_MCP_PROTOCOL_VERSION, clip(version, 32));
    }
    if (typeof params?.uri === "string") {
      span.setAttribute(ATTR_MCP_RESOURCE_URI, clip(params.uri, 2048));
    }
  }
  const started = performance.now();
  let result: T | undefined;
  let thrown: unknown;
  try {
    result = await context.with(contextOf(span, parent), handler);
    return result;
  } catch (error) {
    thrown = error ?? new Error("unknown failure");
    throw error;
  } finally {
    const failure = outcomeOf(method, result, thrown);
    if (
      method === "tools/call" && span.isRecording() &&
      contentMode() === "full"
    ) {
      span.setAttribute(
        ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
        JSON.stringify(params?.arguments ?? {}),
      );
      if (result !== undefined) {
        span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, JSON.stringify(result));
      }
    }
    endWith(span, failure);
    serverDuration.record(
      secondsSince(started),
      durationAttributes(attributes, failure),
    );
  }
}

/** One upstream request in flight. */
export interface McpClientCall {
  /** The params to send: `_meta` carries this span's trace context. */
  readonly params: Record<string, unknown>;
  /** Ends the span with the result or the error. */
  end(outcome: { readonly result?: unknown; readonly error?: unknown }): void;
}

/**
 * Starts the `CLIENT` span of a request to an upstream and injects its
 * trace context into the request's `params._meta` (replacing a host's
 * `traceparent`/`tracestate` passed through, since this span now continues
 * that trace). Without a recording span the params go as they are.
 *
 * @param method The request's method.
 * @param params Its parameters.
 * @param peer The upstream's name, transport and, over HTTP, its URL.
 * @returns The params to send and the span's end.
 */
export function startClientRequest(
  method: string,
  params: Record<string, unknown>,
  peer: {
    readonly server: string;
    readonly transport: McpTransport;
    readonly url?: string;
  },
): McpClientCall {
  const { name, attributes } = naming(method, params);
  const span = startSpan(name, { kind: SpanKind.CLIENT, attributes });
  const started = performance.now();
  let sent = params;
  if (span.isRecording()) {
    transportAttributes(span, peer.transport);
    span.setAttribute(ATTR_LOOM_UPSTREAM, clip(peer.server, 128));
    if (peer.url !== undefined) {
      try {
        const url = new URL(peer.url);
        span.setAttribute(ATTR_SERVER_ADDRESS, url.hostname);
        span.setAttribute(
          ATTR_SERVER_PORT,
          Number(url.port || (url.protocol === "https:" ? 443 : 80)),
        );
      } catch {
        // Not a URL: no address.
      }
    }
    const meta: Record<string, unknown> = {
      ...(params._meta as Record<string, unknown> | undefined ?? {}),
    };
    for (const field of propagation.fields()) delete meta[field];
    propagation.inject(contextOf(span), meta);
    sent = { ...params, _meta: meta };
  }
  return {
    params: sent,
    end: ({ result, error }) => {
      const failure = outcomeOf(method, result, error);
      endWith(span, failure);
      clientDuration.record(
        secondsSince(started),
        durationAttributes(attributes, failure),
      );
    },
  };
}

/**
 * Puts an offloaded answer's figures on the active span (the host's
 * `tools/call` span): the result ids and digests, the bytes the upstream
 * sent and the bytes the host got; in `reference` mode its references as
 * the tool call's result.
 *
 * @param offload The stored parts and the sizes.
 */
export function offloadAttributes(offload: {
  readonly stored: readonly ContentReference[];
  readonly bytesUpstream: number;
  readonly bytesToHost: number;
}): void {
  const span = recordingActiveSpan();
  if (span === undefined) return;
  span.setAttribute(ATTR_LOOM_RESULT_IDS, offload.stored.map((s) => s.result));
  span.setAttribute(
    ATTR_LOOM_RESULT_SHA256,
    offload.stored.map((s) => s.sha256),
  );
  span.setAttribute(ATTR_LOOM_BYTES_UPSTREAM, offload.bytesUpstream);
  span.setAttribute(ATTR_LOOM_BYTES_TO_HOST, offload.bytesToHost);
  if (contentMode() === "reference" && offload.stored.length > 0) {
    span.setAttribute(
      ATTR_GEN_AI_TOOL_CALL_RESULT,
      referencesJson(offload.stored),
    );
  }
}
