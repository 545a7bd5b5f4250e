/**
 * A local HTTP server on 127.0.0.1 with canned responses, recording what it
 * received. A body that breaks a rule of the service its path belongs to is
 * answered with that service's own 400 (`_strict.ts`), not a canned response.
 */
import { refusal } from "./_strict.ts";
import { localServer } from "../_kit/local_server.ts";

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Headers;
  readonly body: unknown;
}

export interface CannedResponse {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

export interface FakeServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly received: ReceivedRequest[];
}

/**
 * Serves `responses` in order, one per request; the last one repeats once the
 * list is used up.
 */
export function fakeServer(responses: readonly CannedResponse[]): FakeServer {
  const received: ReceivedRequest[] = [];
  const server = localServer(
    async (request) => {
      const text = await request.text();
      const path = new URL(request.url).pathname;
      const body = text === "" ? undefined : JSON.parse(text);
      received.push({
        method: request.method,
        path,
        headers: request.headers,
        body,
      });
      const refused = refusal(path, body);
      if (refused !== undefined) return refused;
      const canned = responses[Math.min(received.length, responses.length) - 1];
      if (canned === undefined) {
        return new Response("no canned response", { status: 599 });
      }
      return Response.json(canned.body, {
        status: canned.status,
        headers: canned.headers ?? {},
      });
    },
  );
  return {
    url: server.url,
    received,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
    },
  };
}

/** A port on 127.0.0.1 where nothing listens (a server started and shut down). */
export async function closedPortUrl(): Promise<string> {
  await using server = localServer(() => new Response());
  return server.url;
}

/** Fast-retry headers: the SDKs honour `retry-after-ms`. */
export const RETRY_SOON: Record<string, string> = { "retry-after-ms": "1" };
