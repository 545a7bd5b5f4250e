/**
 * The life of an MCP server on standard input and output, shared by
 * `loom mcp --root` and the gateway: connect, serve until the input ends or
 * SIGINT/SIGTERM, answer the calls still in flight, then close. Requests
 * read together with the end of the input start before the stop.
 *
 * @module
 */

/** What {@linkcode serveOverStdio} needs of a server (the SDK's `Server`). */
export interface StdioServable {
  /** Connects a transport. */
  connect(transport: never): Promise<void>;
  /** Closes the server. */
  close(): Promise<void>;
  /** Called when the transport closes. */
  onclose?: (() => void) | undefined;
  /** Resolves once every call in flight has been answered. */
  settled?: () => Promise<void>;
}

/**
 * Serves `server` over a stdio transport until the input ends or the
 * process is asked to stop.
 *
 * @param server The server, not yet connected.
 * @param transport A new stdio transport (the SDK's `StdioServerTransport`).
 * @param onConnected Called once the server is connected (a log line).
 * @returns When the server has stopped and closed.
 */
export async function serveOverStdio(
  server: StdioServable,
  transport: unknown,
  onConnected: () => void = () => {},
): Promise<void> {
  const { default: process } = await import("node:process");
  const { promise: stopped, resolve: stop } = Promise.withResolvers<void>();
  server.onclose = () => stop();
  // Requests read with the end of the input start first, then the stop.
  process.stdin.once("end", () => setTimeout(stop, 0));
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, stop);
  try {
    await server.connect(transport as never);
    onConnected();
    await stopped;
    await server.settled?.();
    // The SDK sends an answer in the tasks after its handler returns.
    await new Promise((resolve) => setTimeout(resolve, 0));
  } finally {
    for (const signal of signals) Deno.removeSignalListener(signal, stop);
    await server.close().catch(() => {});
  }
}
