/**
 * The telemetry test kit: an OTLP/HTTP receiver on 127.0.0.1 speaking
 * `http/json` (what Deno 2.9.6's exporter sends with
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`: `POST /v1/traces`, `/v1/metrics`
 * and `/v1/logs` with `application/json` bodies), the environment that
 * points a `loom` subprocess at it, and the received spans flattened.
 * Tests and the telemetry benchmark share it.
 */
import assert from "node:assert/strict";
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
  assertExportsNone(secrets: Readonly<Record<string, string>>): void;
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
      for (const secret of Object.values(secrets)) {
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
