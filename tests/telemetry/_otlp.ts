/**
 * The telemetry test kit: an OTLP/HTTP receiver on 127.0.0.1 speaking
 * `http/json` (what Deno 2.9.6's exporter sends with
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`: `POST /v1/traces`, `/v1/metrics`
 * and `/v1/logs` with `application/json` bodies), the environment that
 * points a `loom` subprocess at it, and the received spans flattened.
 * Tests and the telemetry benchmark share it. And the gateway the MCP
 * telemetry tests trace: `loom mcp --servers` over the tests' fault server,
 * exporting here in `reference` mode with fake keys in its environment.
 */
import assert from "node:assert/strict";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  connectGateway,
  denoEntry,
  FAULT,
  type McpConnection,
  serversFile,
} from "../_kit/mcp.ts";
import { localServer } from "../_kit/local_server.ts";

/** An OTLP attribute value as JSON carries it. */
type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
};

/** A received span, its attributes made plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's kind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events: readonly {
    readonly name: string;
    readonly attributes: Readonly<Record<string, unknown>>;
  }[];
  readonly status: { readonly code: number; readonly message?: string };
  readonly scope: string;
}

/** OTLP's span kinds, as `ReceivedSpan.kind` holds them. */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

/** A received metric: its name and the attributes of each data point. */
export interface ReceivedMetric {
  readonly name: string;
  readonly unit: string;
  readonly points: readonly Readonly<Record<string, unknown>>[];
}

/** A running receiver. */
export interface OtlpReceiver extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Every request body received, as text, in order (for grepping). */
  readonly bodies: readonly string[];
  /** The environment that makes a Deno process export here. */
  env(): Record<string, string>;
  /** The spans received so far. */
  spans(): ReceivedSpan[];
  /** The metrics received so far. */
  metrics(): ReceivedMetric[];
  /** Resolves once `ready()` holds of the spans (checked on every export). */
  until(ready: (spans: ReceivedSpan[]) => boolean): Promise<void>;
  /**
   * Asserts that nothing received (spans, metrics, logs) carries any of
   * `secrets`, the environment's values the run was given.
   */
  assertExportsNone(
    secrets: Readonly<Record<string, string>> | readonly string[],
  ): void;
}

function plain(value: AnyValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  // Deno 2.9.6 exports every JS number as doubleValue; SDKs send intValue.
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) {
    return (value.arrayValue.values ?? []).map(plain);
  }
  return undefined;
}

function attributes(
  list: { key: string; value: AnyValue }[] | undefined,
): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, plain(a.value)]));
}

/**
 * Starts a receiver on a free port of 127.0.0.1.
 *
 * @returns The receiver; disposing it stops the server.
 */
export function otlpReceiver(): OtlpReceiver {
  const bodies: string[] = [];
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const waiters: { ready: (s: ReceivedSpan[]) => boolean; done: () => void }[] =
    [];
  const server = localServer(
    async (request) => {
      const text = await request.text();
      bodies.push(text);
      const path = new URL(request.url).pathname;
      const body = JSON.parse(text);
      if (path === "/v1/traces") {
        for (const rs of body.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? "",
                name: s.name,
                kind: s.kind,
                attributes: attributes(s.attributes),
                events: (s.events ?? []).map((
                  e: { name: string; attributes: [] },
                ) => ({ name: e.name, attributes: attributes(e.attributes) })),
                status: s.status ?? { code: 0 },
                scope: ss.scope?.name ?? "",
              });
            }
          }
        }
        for (const w of [...waiters]) {
          if (w.ready(spans)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.done();
          }
        }
      } else if (path === "/v1/metrics") {
        for (const rm of body.resourceMetrics ?? []) {
          for (const sm of rm.scopeMetrics ?? []) {
            for (const m of sm.metrics ?? []) {
              const data = m.histogram ?? m.sum ?? m.gauge ?? {};
              metrics.push({
                name: m.name,
                unit: m.unit ?? "",
                points: (data.dataPoints ?? []).map((
                  p: { attributes: [] },
                ) => attributes(p.attributes)),
              });
            }
          }
        }
      }
      return Response.json({});
    },
  );
  const url = server.url;
  return {
    url,
    bodies,
    env: () => ({
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_SERVICE_NAME: "loom-test",
      // Export soon after a span ends (default 5 s), so tests wait less.
      OTEL_BSP_SCHEDULE_DELAY: "100",
    }),
    spans: () => [...spans],
    metrics: () => [...metrics],
    assertExportsNone: (secrets) => {
      const everything = bodies.join("\n");
      const texts = Array.isArray(secrets) ? secrets : Object.values(secrets);
      for (const secret of texts) {
        assert.ok(!everything.includes(secret), `${secret} was exported`);
      }
    },
    until: (ready) =>
      ready(spans) ? Promise.resolve() : new Promise<void>((done) => {
        waiters.push({ ready, done });
      }),
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
    },
  };
}

/** The spans named `name`. */
export function named(
  spans: readonly ReceivedSpan[],
  name: string,
): ReceivedSpan[] {
  return spans.filter((s) => s.name === name);
}

/**
 * The host whose trace the traced gateways' calls continue: its trace, the
 * span its request came from, and the `traceparent` it sends.
 */
export const HOST = {
  trace: "4bf92f3577b34da6a3ce929d0e0e4736",
  span: "00f067aa0ba902b7",
  traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
} as const;

/**
 * Asserts that `span` is a gateway's SERVER span continuing the
 * {@linkcode HOST}'s request.
 *
 * @param span The span.
 */
export function assertUnderHost(span: ReceivedSpan): void {
  assert.equal(span.kind, KIND.SERVER, span.name);
  assert.equal(span.traceId, HOST.trace);
  assert.equal(span.parentSpanId, HOST.span);
}

/** A traced gateway's `--offload-bytes`: larger answers are stored. */
const OFFLOAD_BYTES = 4096;

/**
 * Asserts that `span` records one answer offloaded into the store: the
 * stored result's id and digest, more than `upstream` bytes from upstream
 * and, to the host, a descriptor below the traced gateway's offload size.
 *
 * @param span The span of the call whose answer was offloaded.
 * @param stored The stored result's id and digest.
 * @param upstream A size the upstream's answer exceeded, in bytes.
 */
export function assertOffloaded(
  span: ReceivedSpan,
  stored: Readonly<Record<string, unknown>>,
  upstream: number,
): void {
  const { attributes } = span;
  assert.deepEqual(attributes["loom.result.ids"], [stored.result]);
  assert.deepEqual(attributes["loom.result.sha256"], [stored.sha256]);
  assert.ok((attributes["loom.offload.bytes_upstream"] as number) > upstream);
  assert.ok(
    (attributes["loom.offload.bytes_to_host"] as number) < OFFLOAD_BYTES,
  );
}

/** Fake keys in a traced gateway's environment: none may be exported. */
export const FAKE_SECRETS: Readonly<Record<string, string>> = {
  ANTHROPIC_API_KEY: "sk-ant-FAKE-gateway-secret-3b7e",
  GITHUB_TOKEN: "ghp_FAKEgatewaySecret0c4d",
};

/** A gateway exporting to a receiver, and its session folder. */
export interface TracedGateway extends AsyncDisposable {
  readonly gateway: McpConnection;
  readonly session: string;
  /** `tools/call` as a host sends it, its trace context in `_meta`. */
  call(
    name: string,
    args: Record<string, unknown>,
    meta: { readonly traceparent: string; readonly tracestate?: string },
  ): Promise<Record<string, unknown>>;
}

/**
 * `loom mcp --servers` over the fault server (as `fault`, persisted) with a
 * session in `dir`, exporting to `receiver` in `reference` mode, with
 * {@linkcode FAKE_SECRETS} in its environment.
 *
 * @param receiver Where it exports.
 * @param dir A folder the test owns.
 * @param extra More `loom mcp` flags.
 */
export async function tracedGateway(
  receiver: OtlpReceiver,
  dir: string,
  extra: readonly string[] = [],
): Promise<TracedGateway> {
  const servers = await serversFile(dir, {
    fault: { ...denoEntry(FAULT), persist: true },
  });
  const session = `${dir}/session`;
  const gateway = await connectGateway(
    servers,
    [
      "--session",
      session,
      "--offload-bytes",
      String(OFFLOAD_BYTES),
      ...extra,
    ],
    {
      env: {
        ...receiver.env(),
        ...FAKE_SECRETS,
        LOOM_OTEL_CONTENT: "reference",
      },
    },
  );
  return {
    gateway,
    session,
    call: async (name, args, meta) =>
      await gateway.client.request({
        method: "tools/call",
        params: { name, arguments: args, _meta: { ...meta } },
      }, CallToolResultSchema),
    [Symbol.asyncDispose]: () => gateway[Symbol.asyncDispose](),
  };
}

/**
 * Asserts that none of `texts` (and no fake key) is in anything received.
 *
 * @param receiver The receiver.
 * @param texts Content that must not be exported.
 */
export function assertNotExported(
  receiver: OtlpReceiver,
  texts: readonly string[] = [],
): void {
  receiver.assertExportsNone([...Object.values(FAKE_SECRETS), ...texts]);
}
