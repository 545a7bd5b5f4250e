/**
 * A local HTTP server on 127.0.0.1 whose every answer is written by the
 * test: stalls, slow bodies, odd statuses, malformed JSON. Pending handlers
 * are released when the server is disposed, so shutdown never waits on them.
 * A body that breaks a rule of the service its path belongs to is answered
 * with that service's own 400 (`_strict.ts`) before the handler sees it.
 */
import { refusal } from "./_strict.ts";
import { localServer } from "../_kit/local_server.ts";

/** What a handler gets besides the request. */
export interface HostileContext {
  /** 1-based number of this request. */
  readonly n: number;
  /** The request body, parsed as JSON. */
  readonly body: unknown;
  /** Aborted when the server is disposed or the client goes away. */
  readonly signal: AbortSignal;
}

export type HostileHandler = (
  context: HostileContext,
) => Response | Promise<Response>;

export interface HostileServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** Requests received so far. */
  readonly requests: number;
}

/** Starts a server that answers every request with `handler`. */
export function hostileServer(handler: HostileHandler): HostileServer {
  const closing = new AbortController();
  let requests = 0;
  const server = localServer(
    async (request) => {
      const text = await request.text();
      requests += 1;
      const body = text === "" ? undefined : JSON.parse(text);
      const refused = refusal(new URL(request.url).pathname, body);
      if (refused !== undefined) return refused;
      const signal = AbortSignal.any([closing.signal, request.signal]);
      return await handler({ n: requests, body, signal });
    },
  );
  return {
    url: server.url,
    get requests() {
      return requests;
    },
    async [Symbol.asyncDispose]() {
      closing.abort();
      await server[Symbol.asyncDispose]();
    },
  };
}

/** Never answers (until the server closes or the client leaves). */
export function stall(context: HostileContext): Promise<Response> {
  return new Promise((resolve) => {
    const done = () => resolve(new Response("closed", { status: 503 }));
    if (context.signal.aborted) done();
    else context.signal.addEventListener("abort", done, { once: true });
  });
}

/** Headers at once, then `body` one byte every `intervalMs`. */
export function drip(
  context: HostileContext,
  body: string,
  intervalMs: number,
): Response {
  const bytes = new TextEncoder().encode(body);
  let offset = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const stop = () => {
        clearInterval(timer);
        try {
          controller.close();
        } catch { /* already closed */ }
      };
      context.signal.addEventListener("abort", stop, { once: true });
      timer = setInterval(() => {
        if (offset >= bytes.length) {
          stop();
          return;
        }
        controller.enqueue(bytes.subarray(offset, offset + 1));
        offset += 1;
      }, intervalMs);
    },
    cancel() {
      clearInterval(timer);
    },
  });
  return new Response(stream, {
    headers: { "content-type": "application/json" },
  });
}

/** A JSON body with status 200. */
export function json(body: unknown, status = 200): Response {
  return Response.json(body, { status });
}

/** A raw text body, declared as JSON. */
export function raw(text: string, status = 200): Response {
  return new Response(text, {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** The assistant message that calls `name` with `args` (a JSON string). */
export function toolCallMessage(
  name: string,
  args: string,
  content: string | null = null,
): Record<string, unknown> {
  return {
    role: "assistant",
    content,
    tool_calls: [{
      id: "call_1",
      type: "function",
      function: { name, arguments: args },
    }],
  };
}

/** A chat completion of one choice, `message`, ended by `finishReason`. */
export function completionOf(
  message: Record<string, unknown>,
  finishReason = "tool_calls",
): Record<string, unknown> {
  return {
    id: "chatcmpl-h",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "fuzz",
    choices: [{ index: 0, finish_reason: finishReason, message }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  };
}

/** A chat completion whose one choice calls `name` with `args` (a JSON string). */
export function chatCompletion(
  name: string,
  args: string,
  extra: { finish_reason?: string; content?: string } = {},
): Record<string, unknown> {
  return completionOf(
    toolCallMessage(name, args, extra.content ?? null),
    extra.finish_reason,
  );
}
