/**
 * `openai:MODEL`: Chat Completions through the official `openai` client, for
 * OpenAI or any compatible server (vLLM, llama.cpp server, Ollama) at a base
 * URL, with a forced function call.
 */

import type OpenAI from "openai";
import { z } from "zod";
import type { RequestPart } from "../briefing/context_report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import {
  type ProviderRequestBody,
  providerRequestParts,
} from "./request_parts.ts";
import type { LiveProviderConfig } from "./_live.ts";
import { httpFailure, liveTransport } from "./_live.ts";
import {
  counter,
  excerpt,
  parseArguments,
  parseBody,
  protocolError,
  toolName,
} from "./_reply.ts";
import {
  type AttemptFailure,
  sdkAttemptOptions,
  type Transport,
  withAttempts,
} from "./_transport.ts";
import type {
  ModelCall,
  ModelProvider,
  ModelReply,
  ModelUsage,
} from "./model_provider.ts";
import { ProviderError } from "./provider_error.ts";

/** Separator between the text blocks of one message (entries render with a blank line between). */
const BLOCK_SEPARATOR = "\n\n";

/** Maps a turn request to Chat Completions parameters; cache markers have no OpenAI equivalent and are dropped. */
export function toOpenAIParams(
  request: TurnRequest,
  options: { readonly model: string; readonly maxTokens: number | undefined },
): OpenAI.ChatCompletionCreateParamsNonStreaming {
  const messages: OpenAI.ChatCompletionMessageParam[] = [];
  if (request.system.length > 0) {
    messages.push({ role: "system", content: joinText(request.system) });
  }
  for (const m of request.messages) {
    messages.push({ role: m.role, content: joinText(m.content) });
  }
  const params: OpenAI.ChatCompletionCreateParamsNonStreaming = {
    model: options.model,
    messages,
    tools: [{
      type: "function",
      function: {
        name: request.tool.name,
        description: request.tool.description,
        parameters: request.tool.input_schema as OpenAI.FunctionParameters,
      },
    }],
    tool_choice: {
      type: "function",
      function: { name: request.tool_choice.name },
    },
  };
  if (options.maxTokens !== undefined) {
    params.max_completion_tokens = options.maxTokens;
  }
  return params;
}

function joinText(blocks: TurnRequest["system"]): string {
  return blocks.map((b) => b.text).join(BLOCK_SEPARATOR);
}

/** Maps Chat Completions usage to Loom's counters (no cache-write figure exists). */
export function openAIUsage(usage: unknown): ModelUsage {
  const details = usage !== null && typeof usage === "object"
    ? (usage as Record<string, unknown>)["prompt_tokens_details"]
    : undefined;
  return {
    input_tokens: counter(usage, "prompt_tokens"),
    output_tokens: counter(usage, "completion_tokens"),
    cache_read_tokens: counter(details, "cached_tokens"),
    cache_write_tokens: null,
  };
}

/** The parts of a chat completion Loom reads; everything else may vary. */
const completionSchema = z.object({
  choices: z.array(z.object({
    finish_reason: z.string().nullish(),
    message: z.object({
      content: z.unknown().optional(),
      tool_calls: z.array(z.object({
        type: z.string().optional(),
        function: z.object({ name: z.string(), arguments: z.string() })
          .optional(),
      })).nullish(),
    }),
  })),
  usage: z.unknown().optional(),
});

type Completion = z.infer<typeof completionSchema>;

/** Placeholder key for servers that need none; its Authorization header is removed. */
const NO_KEY = "loom-no-api-key";

/** The client's module namespace, loaded on the first call. */
type OpenAISdk = typeof import("openai");

export class OpenAIProvider implements ModelProvider {
  readonly spec: string;
  readonly #model: string;
  readonly #maxTokens: number | undefined;
  readonly #options: ConstructorParameters<typeof OpenAI>[0];
  readonly #transport: Transport;
  /** Loads the SDK once, on the first call. */
  #sdk: Promise<OpenAISdk> | undefined;
  /** How messages name the server: `OpenAI` or `The server at URL`. */
  readonly #label: string;

  constructor(spec: string, model: string, config: LiveProviderConfig) {
    this.spec = spec;
    this.#model = model;
    this.#maxTokens = config.maxTokens;
    this.#label = config.baseUrl === undefined
      ? "OpenAI"
      : `The server at ${config.baseUrl}`;
    this.#transport = liveTransport(config, this.#label);
    const options: ConstructorParameters<typeof OpenAI>[0] = {
      apiKey: config.apiKey ?? NO_KEY,
      baseURL: config.baseUrl ?? "https://api.openai.com/v1",
      // Explicit nulls keep the client from picking these up from the environment.
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
    };
    if (config.apiKey === undefined) {
      options.defaultHeaders = { Authorization: null };
    }
    this.#options = options;
  }

  requestParts(request: TurnRequest): readonly RequestPart[] {
    return providerRequestParts(
      "openai",
      toOpenAIParams(request, {
        model: this.#model,
        maxTokens: this.#maxTokens,
      }) as unknown as ProviderRequestBody,
    );
  }

  async call(call: ModelCall): Promise<ModelReply> {
    const params = toOpenAIParams(call.request, {
      model: this.#model,
      maxTokens: this.#maxTokens,
    });
    const sdk = await this.#loadSdk();
    const transport = this.#transport;
    const text = await withAttempts(
      { ...transport, signal: call.signal },
      async (fetch) => {
        const client = new sdk.default({
          ...this.#options,
          ...sdkAttemptOptions(transport, fetch),
        });
        const response = await client.chat.completions.create(params)
          .asResponse();
        return await response.text();
      },
      (error) => openAIFailure(sdk, error, this.#label),
    );
    const completion = parseBody(
      text,
      completionSchema,
      this.#label,
      "a chat completion",
    );
    return openAIReply(completion, call.request.tool_choice.name, this.#label);
  }

  #loadSdk(): Promise<OpenAISdk> {
    this.#sdk ??= import("openai");
    return this.#sdk;
  }
}

/** The forced call's arguments out of a schema-checked completion. */
function openAIReply(
  completion: Completion,
  wanted: string,
  label: string,
): ModelReply {
  const usage = openAIUsage(completion.usage);
  const choice = completion.choices[0];
  if (choice === undefined) {
    throw protocolError(
      "no_choice",
      `${label} answered with an empty choices array instead of the forced ${wanted} call`,
      usage,
    );
  }
  if (choice.finish_reason === "length") {
    throw protocolError(
      "truncated",
      `${label} stopped at the length limit before finishing the ${wanted} call; send shorter arguments`,
      usage,
    );
  }
  const calls = (choice.message.tool_calls ?? []).flatMap((c) =>
    c.function === undefined ? [] : [c.function]
  );
  const forced = calls.find((c) => c.name === wanted);
  if (forced === undefined) {
    const other = calls[0];
    if (other !== undefined) {
      throw protocolError(
        "wrong_tool",
        `${label} called ${
          toolName(other.name)
        } instead of the forced ${wanted}`,
        usage,
      );
    }
    const content = choice.message.content;
    throw protocolError(
      "no_tool_call",
      `${label} answered without the forced ${wanted} function call (finish_reason ${
        choice.finish_reason ?? "none"
      }${
        typeof content === "string" && content !== ""
          ? `; text ${excerpt(content)}`
          : ""
      })`,
      usage,
    );
  }
  const args = parseArguments(forced.arguments, wanted, usage);
  return { arguments: args, usage, final_usage: true };
}

function openAIFailure(
  sdk: OpenAISdk,
  error: unknown,
  label: string,
): AttemptFailure {
  const OpenAI = sdk.default;
  if (error instanceof OpenAI.APIError && typeof error.status === "number") {
    const body = error.error as { message?: unknown } | undefined;
    return {
      kind: "http",
      status: error.status,
      headers: error.headers,
      error: httpFailure(label, "OPENAI_API_KEY", {
        status: error.status,
        detail: body?.message,
        cause: error,
      }),
    };
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return {
      kind: "connection",
      error: new ProviderError(
        "provider_connection",
        `Cannot reach ${
          label === "OpenAI"
            ? label
            : label.replace(/^The server/, "the server")
        }: ${error.message}`,
        { cause: error },
      ),
    };
  }
  if (error instanceof OpenAI.OpenAIError) {
    return {
      kind: "final",
      error: new ProviderError(
        "provider_protocol",
        `The OpenAI client failed: ${error.message}`,
        { problem: "malformed_response", cause: error },
      ),
    };
  }
  return { kind: "final", error };
}
