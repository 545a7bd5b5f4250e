/**
 * A local server on 127.0.0.1 that speaks Anthropic's Messages API or
 * OpenAI's Chat Completions and answers each request with the next call of a
 * `loom-recording/1` file, as a forced tool call of the tool the request
 * names. It keeps the raw HTTP bodies the official SDKs sent, so tests and
 * tools/measure_long.ts can measure what really goes over the wire. A body
 * that breaks a rule of the service is answered with the service's own 400
 * (`_strict.ts`) and does not consume a call. Recorded arguments are bare
 * answers; the reply wraps them in `{"step": …}` when the request's tool
 * takes a `step`, as a model answering that tool does.
 */
import { refusal } from "./_strict.ts";
import { localServer } from "../_kit/local_server.ts";

/** Which wire format the server speaks. */
export type ReplayWire = "anthropic" | "openai";

/** A running replay server. */
export interface ReplayServer extends AsyncDisposable {
  /** Base URL to give the provider (`baseUrl`). */
  readonly url: string;
  /** Raw request bodies, in order. */
  readonly bodies: string[];
}

interface RecordedCall {
  readonly arguments: unknown;
}

/**
 * Starts a replay server for the calls of a recording file.
 *
 * @param wire The provider wire format.
 * @param recordingPath A `loom-recording/1` file.
 */
export async function replayServer(
  wire: ReplayWire,
  recordingPath: string,
  options: {
    /**
     * How the reply holds a recorded answer: under `step` when the tool
     * takes one (`step`, the default), under `step` as a JSON-encoded
     * string, as Claude models at times send it (`string`), or bare, as
     * models answered the tool before the `step` wrapper (`bare`).
     */
    readonly answer?: "step" | "string" | "bare";
  } = {},
): Promise<ReplayServer> {
  const answer = options.answer ?? "step";
  const calls = (JSON.parse(await Deno.readTextFile(recordingPath)) as {
    calls: RecordedCall[];
  }).calls;
  const bodies: string[] = [];
  let served = 0;
  const server = localServer(
    async (request) => {
      const text = await request.text();
      bodies.push(text);
      const body = JSON.parse(text) as Record<string, unknown>;
      const refused = refusal(new URL(request.url).pathname, body);
      if (refused !== undefined) return refused;
      const call = calls[served];
      if (call === undefined) {
        return new Response("recording exhausted", { status: 599 });
      }
      served += 1;
      const args = answer === "bare" || !takesStep(body) ? call.arguments : {
        step: answer === "string"
          ? JSON.stringify(call.arguments)
          : call.arguments,
      };
      const output = Math.ceil(JSON.stringify(args).length / 4);
      return Response.json(
        wire === "anthropic"
          ? anthropicReply(body, args, output)
          : openAIReply(body, args, output),
      );
    },
  );
  return {
    url: server.url,
    bodies,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
    },
  };
}

function anthropicReply(
  body: Record<string, unknown>,
  args: unknown,
  output: number,
): Record<string, unknown> {
  const choice = body["tool_choice"] as { name: string };
  return {
    id: "msg_replay",
    type: "message",
    role: "assistant",
    model: body["model"],
    content: [{
      type: "tool_use",
      id: "toolu_replay",
      name: choice.name,
      input: args,
    }],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: output },
  };
}

function openAIReply(
  body: Record<string, unknown>,
  args: unknown,
  output: number,
): Record<string, unknown> {
  const choice = body["tool_choice"] as { function: { name: string } };
  return {
    id: "chatcmpl-replay",
    object: "chat.completion",
    created: 0,
    model: body["model"],
    choices: [{
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_replay",
          type: "function",
          function: {
            name: choice.function.name,
            arguments: JSON.stringify(args),
          },
        }],
      },
    }],
    usage: { prompt_tokens: 0, completion_tokens: output, total_tokens: 0 },
  };
}

/** Whether the request's one tool takes its answer under a `step` property. */
function takesStep(body: Record<string, unknown>): boolean {
  const [tool] = (body["tools"] ?? []) as Record<string, unknown>[];
  const schema = (tool?.["input_schema"] ??
    (tool?.["function"] as Record<string, unknown> | undefined)?.[
      "parameters"
    ]) as { properties?: Record<string, unknown> } | undefined;
  return schema?.properties?.["step"] !== undefined;
}
