// The benchmark's "not compiled in" variant of lib/telemetry/mcp.ts.
export type McpRequestExtra = Record<string, unknown>;
export type McpTransport = "stdio" | "http";

export function traceServerRequest<T>(
  _method: string,
  _request: unknown,
  _extra: unknown,
  _transport: unknown,
  handler: () => Promise<T>,
): Promise<T> {
  return handler();
}

export function startClientRequest(
  _method: string,
  params: Record<string, unknown>,
  _peer: unknown,
): { params: Record<string, unknown>; end(outcome: unknown): void } {
  return { params, end: () => {} };
}

export function offloadAttributes(_offload: unknown): void {}
