// The benchmark's "not compiled in" variant of lib/telemetry/tracing.ts.
export function withSpan<T>(_span: unknown, fn: () => T): T {
  return fn();
}
