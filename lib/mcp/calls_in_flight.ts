/**
 * The tool calls an MCP server is answering, tracked so that when its
 * input ends every call it read is answered before it stops: `loom mcp`'s
 * server and the gateway's both settle this way.
 *
 * @module
 */

/** An MCP server whose transport errors go to a log. */
interface LoggingServer {
  onerror?: (error: Error) => void;
}

/** The calls in flight of one server. */
export class CallsInFlight {
  readonly #calls = new Set<Promise<unknown>>();

  /**
   * Tracks a call until it settles.
   *
   * @param call The call's answer.
   * @returns The same answer.
   */
  async track<T>(call: Promise<T>): Promise<T> {
    this.#calls.add(call);
    try {
      return await call;
    } finally {
      this.#calls.delete(call);
    }
  }

  /**
   * Settles when every call in flight (started before or while waiting)
   * has been answered.
   */
  async settled(): Promise<void> {
    while (this.#calls.size > 0) await Promise.allSettled([...this.#calls]);
  }

  /**
   * The server, with its transport errors logged and a `settled()` that
   * waits for these calls.
   *
   * @param server The SDK server.
   * @param log Where diagnostics go.
   * @returns The same server.
   */
  settling<S extends LoggingServer>(
    server: S,
    log: (line: string) => void,
  ): S & { settled(): Promise<void> } {
    server.onerror = (error: Error) => log(`transport error: ${error.message}`);
    return Object.assign(server, { settled: () => this.settled() });
  }
}
