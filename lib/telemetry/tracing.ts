/**
 * Spans and histograms through `@opentelemetry/api`, whoever provides them:
 * Deno's own OpenTelemetry (`OTEL_DENO=true`) registers its providers and
 * W3C propagators with the API at start-up, and a library user's SDK
 * registers its own. With neither, the API hands out no-op spans and
 * instruments: nothing is recorded, and every helper here builds its
 * attributes only after `span.isRecording()` said yes.
 *
 * Parents are passed explicitly (a span's {@linkcode Context}) rather than
 * taken from the active context alone, so links hold also under an SDK
 * registered without a context manager.
 *
 * @module
 */
import {
  type Attributes,
  type Context,
  context,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { ATTR_ERROR_TYPE } from "./semconv.ts";

export { type Context, type Span, SpanKind };

/** The instrumentation scope of every span and instrument. */
export const SCOPE = "@loom/loom";

const TRACER = trace.getTracer(SCOPE);

/** Options of {@linkcode startSpan}. */
export interface StartOptions {
  /** `INTERNAL` unless given. */
  readonly kind?: SpanKind;
  /**
   * The few attributes samplers decide on (operation, provider, model):
   * constant strings, cheap enough to pass whether or not anything records.
   */
  readonly attributes?: Attributes;
  /** The parent; the active context when absent. */
  readonly parent?: Context;
}

/**
 * Starts a span under `options.parent` (or the active context).
 *
 * @param name The span name, e.g. `invoke_agent loom`.
 * @param options Kind, sampling attributes and parent.
 * @returns The span: a no-op one when nothing records.
 *
 * @example
 * ```ts
 * import { startSpan } from "./tracing.ts";
 * import assert from "node:assert/strict";
 * const span = startSpan("execute_tool tests.run");
 * assert.equal(span.isRecording(), false); // no provider registered here
 * span.end();
 * ```
 */
export function startSpan(name: string, options: StartOptions = {}): Span {
  return TRACER.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes === undefined
        ? {}
        : { attributes: options.attributes }),
    },
    options.parent ?? context.active(),
  );
}

/**
 * The context that makes `span` the parent of what starts in it.
 *
 * @param span The span.
 * @param parent The context to extend; the active one when absent.
 * @returns The context.
 */
export function contextOf(span: Span, parent?: Context): Context {
  return trace.setSpan(parent ?? context.active(), span);
}

/**
 * Runs `fn` with `span` active, so spans started inside (Deno's own `fetch`
 * spans, an SDK's spans, Loom's events on the active span) nest under it.
 *
 * @param span The span to make active.
 * @param fn What to run.
 * @returns What `fn` returns.
 */
export function withSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/**
 * The span active in the current context, if one records.
 *
 * @returns The span, or `undefined` when none records.
 */
export function recordingActiveSpan(): Span | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span : undefined;
}

/**
 * Marks a span failed: `error.type` and an `ERROR` status with a message
 * (never a secret: callers pass Loom's own error codes and messages).
 *
 * @param span The span.
 * @param type The low-cardinality error class, e.g. `provider_timeout`.
 * @param message The status description.
 */
export function failSpan(span: Span, type: string, message?: string): void {
  if (!span.isRecording()) return;
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    ...(message === undefined ? {} : { message: clip(message, 1024) }),
  });
}

/** A string cut to `max` characters (attribute values from outside Loom). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** A low-cardinality class of a thrown value: its `code`, or `_OTHER`. */
export function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[a-z_]{1,64}$/.test(code)
    ? code
    : "_OTHER";
}

/** Milliseconds since `started` (a `performance.now()`), in seconds. */
export function secondsSince(started: number): number {
  return (performance.now() - started) / 1000;
}

/** One histogram, bound to whichever meter provider is registered now. */
export class LazyHistogram {
  readonly #name: string;
  readonly #unit: string;
  readonly #description: string;
  readonly #buckets: readonly number[];
  #provider: MeterProvider | undefined;
  #histogram: Histogram | undefined;

  /**
   * @param name The metric name.
   * @param unit Its UCUM unit (`s`, `{token}`).
   * @param description What it measures.
   * @param buckets The conventions' explicit bucket boundaries.
   */
  constructor(
    name: string,
    unit: string,
    description: string,
    buckets: readonly number[],
  ) {
    this.#name = name;
    this.#unit = unit;
    this.#description = description;
    this.#buckets = buckets;
  }

  /**
   * Records a value (a no-op without a meter provider). The instrument is
   * made again when another provider was registered since: a library
   * user's SDK may start after Loom is imported.
   *
   * @param value The measurement.
   * @param attributes Its attributes.
   */
  record(value: number, attributes: Attributes): void {
    const provider = metrics.getMeterProvider();
    if (provider !== this.#provider || this.#histogram === undefined) {
      this.#provider = provider;
      const meter: Meter = provider.getMeter(SCOPE);
      this.#histogram = meter.createHistogram(this.#name, {
        unit: this.#unit,
        description: this.#description,
        advice: { explicitBucketBoundaries: [...this.#buckets] },
      });
    }
    this.#histogram.record(value, attributes);
  }
}
