/**
 * A fake Anthropic / OpenAI server on 127.0.0.1 driven by a scripted model:
 * each request body is checked against the services' rules (a breach gets
 * the service's own 400, `../providers/_strict.ts`), recorded, and answered
 * with the move the script makes from what the body holds — a tool call or
 * a final text — in the wire format of the path: Anthropic Messages
 * (`/v1/messages`), OpenAI Responses (`/v1/responses`) or Chat Completions
 * (`/v1/chat/completions`).
 */
import { refusal } from "../providers/_strict.ts";
import { localServer } from "../_kit/local_server.ts";

/** The three wires. */
export type Wire = "anthropic" | "responses" | "chat";

/** What the scripted model does next. */
export type Move =
  | { readonly call: { readonly name: string; readonly input: unknown } }
  | { readonly text: string };

/** One request the server received. */
export interface Received {
  readonly wire: Wire;
  readonly path: string;
  readonly text: string;
  readonly body: Record<string, unknown>;
  readonly status: number;
}

/** The server; dispose to stop it. */
export interface ScriptedServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly received: Received[];
  /** Bodies the strict rules refused, with the refusal. */
  readonly refused: { body: unknown; error: unknown }[];
}

function wireOf(path: string): Wire | undefined {
  if (path.endsWith("/messages")) return "anthropic";
  if (path.endsWith("/responses")) return "responses";
  if (path.endsWith("/chat/completions")) return "chat";
  return undefined;
}

/**
 * Starts a scripted server.
 *
 * @param script The model: from a request body (and its wire), the next move.
 */
export function scriptedServer(
  script: (body: Record<string, unknown>, wire: Wire) => Move,
): ScriptedServer {
  const received: Received[] = [];
  const refused: { body: unknown; error: unknown }[] = [];
  let n = 0;
  const server = localServer(
    async (request) => {
      const text = await request.text();
      const path = new URL(request.url).pathname;
      const wire = wireOf(path);
      const body = JSON.parse(text) as Record<string, unknown>;
      const refusedResponse = refusal(path, body);
      if (refusedResponse !== undefined || wire === undefined) {
        const error = refusedResponse === undefined
          ? { error: `no such path ${path}` }
          : await refusedResponse.clone().json();
        refused.push({ body, error });
        received.push({ wire: wire ?? "chat", path, text, body, status: 400 });
        return refusedResponse ?? Response.json(error, { status: 404 });
      }
      received.push({ wire, path, text, body, status: 200 });
      n += 1;
      let move: Move;
      try {
        move = script(body, wire);
      } catch (error) {
        return Response.json({ error: String(error) }, { status: 500 });
      }
      return Response.json(reply(wire, move, n, String(body["model"])));
    },
  );
  return {
    url: server.url,
    received,
    refused,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
    },
  };
}

function reply(wire: Wire, move: Move, n: number, model: string): unknown {
  const args = "call" in move ? JSON.stringify(move.call.input) : "";
  if (wire === "anthropic") {
    return {
      id: `msg_${n}`,
      type: "message",
      role: "assistant",
      model,
      content: "call" in move
        ? [{
          type: "tool_use",
          id: `toolu_${n}`,
          name: move.call.name,
          input: move.call.input,
        }]
        : [{ type: "text", text: move.text }],
      stop_reason: "call" in move ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
  }
  if (wire === "responses") {
    return {
      id: `resp_${n}`,
      object: "response",
      created_at: 1,
      status: "completed",
      model,
      output: "call" in move
        ? [{
          type: "function_call",
          id: `fc_${n}`,
          call_id: `call_${n}`,
          name: move.call.name,
          arguments: args,
          status: "completed",
        }]
        : [{
          type: "message",
          id: `msg_${n}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: move.text, annotations: [] }],
        }],
      parallel_tool_calls: true,
      tool_choice: "auto",
      tools: [],
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        total_tokens: 15,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    };
  }
  return {
    id: `chatcmpl_${n}`,
    object: "chat.completion",
    created: 1,
    model,
    choices: [{
      index: 0,
      message: "call" in move
        ? {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: `call_${n}`,
            type: "function",
            function: { name: move.call.name, arguments: args },
          }],
        }
        : { role: "assistant", content: move.text },
      finish_reason: "call" in move ? "tool_calls" : "stop",
    }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** The tool results of a request body, oldest first, as text. */
export function toolResults(
  body: Record<string, unknown>,
  wire: Wire,
): string[] {
  const out: string[] = [];
  const text = (content: unknown): string =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
      ? content.map((c) => (c as { text?: string }).text ?? "").join("")
      : JSON.stringify(content);
  if (wire === "anthropic") {
    for (const m of body["messages"] as { content: unknown }[]) {
      if (!Array.isArray(m.content)) continue;
      for (const block of m.content as Record<string, unknown>[]) {
        if (block["type"] === "tool_result") out.push(text(block["content"]));
      }
    }
  } else if (wire === "responses") {
    const input = body["input"];
    if (Array.isArray(input)) {
      for (const item of input as Record<string, unknown>[]) {
        if (item["type"] === "function_call_output") {
          out.push(text(item["output"]));
        }
      }
    }
  } else {
    for (const m of body["messages"] as Record<string, unknown>[]) {
      if (m["role"] === "tool") out.push(text(m["content"]));
    }
  }
  return out;
}

/** How many `cache_control` markers an Anthropic body carries. */
export function breakpoints(body: unknown): number {
  return (JSON.stringify(body).match(/"cache_control":\{/g) ?? []).length;
}
