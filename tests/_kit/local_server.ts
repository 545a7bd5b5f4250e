/**
 * The HTTP servers the tests stand up for a model service, a telemetry
 * receiver, a release host or an upstream: one on 127.0.0.1 at a free port
 * (tests run side by side), silent, stopped when disposed.
 *
 * @module
 */

/** A test server; `await using` stops it. */
export interface LocalServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
}

/**
 * Serves `handle` on 127.0.0.1 at a free port.
 *
 * @param handle Answers each request.
 * @returns The server.
 */
export function localServer(
  handle: (request: Request) => Response | Promise<Response>,
): LocalServer {
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    handle,
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    port: server.addr.port,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
