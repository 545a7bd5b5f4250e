/**
 * `openai:MODEL`: Chat Completions through the official `openai` client, for
 * OpenAI or any compatible server (vLLM, llama.cpp server, Ollama) at a base
 * URL, with a forced function call.
 */

import type OpenAI from "openai";
import type { RequestPart } from "../briefing/context_report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import {
  type ProviderRequestBody,
  providerRequestParts,
} from "./request_parts.ts";
import type { LiveProviderConfig } from "./_live.ts";
import { httpFailure } from "./_live.ts";
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
export function openAIUsage(
  usage: OpenAI.CompletionUsage | null | undefined,
): ModelUsage {
  return {
    input_tokens: usage?.prompt_tokens ?? null,
    output_tokens: usage?.completion_tokens ?? null,
    cache_read_tokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
    cache_write_tokens: null,
  };
}

/** Placeholder key for servers that need none; its Authorization header is removed. */
const NO_KEY = "loom-no-api-key";

/** The client's module namespace, loaded on the first call. */
type OpenAISdk = typeof import("openai");

/** The client with the module it came from (for its error classes). */
interface OpenAIClient {
  readonly sdk: OpenAISdk;
  readonly client: OpenAI;
}

export class OpenAIProvider implements ModelProvider {
  readonly spec: string;
  readonly #model: string;
  readonly #maxTokens: number | undefined;
  readonly #options: ConstructorParameters<typeof OpenAI>[0];
  /** Loads the SDK and builds the client once, on the first call. */
  #client: Promise<OpenAIClient> | undefined;
  /** How messages name the server: `OpenAI` or `The server at URL`. */
  readonly #label: string;

  constructor(spec: string, model: string, config: LiveProviderConfig) {
    this.spec = spec;
    this.#model = model;
    this.#maxTokens = config.maxTokens;
    this.#label = config.baseUrl === undefined
      ? "OpenAI"
      : `The server at ${config.baseUrl}`;
    const options: ConstructorParameters<typeof OpenAI>[0] = {
      apiKey: config.apiKey ?? NO_KEY,
      baseURL: config.baseUrl ?? "https://api.openai.com/v1",
      maxRetries: config.maxRetries,
      // Explicit nulls keep the client from picking these up from the environment.
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
    };
    if (config.apiKey === undefined) {
      options.defaultHeaders = { Authorization: null };
    }
    if (config.fetch !== undefined) options.fetch = config.fetch;
    if (config.timeoutMs !== undefined) options.timeout = config.timeoutMs;
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
    const { sdk, client } = await this.#loadClient();
    let completion: OpenAI.ChatCompletion;
    try {
      completion = await client.chat.completions.create(params);
    } catch (error) {
      throw openAIFailure(sdk, error, this.#label);
    }
    const usage = openAIUsage(completion.usage);
    const wanted = call.request.tool_choice.name;
    const choice = completion.choices?.[0];
    if (choice === undefined) {
      throw new ProviderError(
        "provider_protocol",
        `${this.#label} answered without any choice`,
        { usage },
      );
    }
    if (choice.finish_reason === "length") {
      throw new ProviderError(
        "provider_protocol",
        `${this.#label} stopped at the length limit before finishing the ${wanted} call`,
        { usage },
      );
    }
    const toolCall = choice.message?.tool_calls?.find((c) =>
      c.type === "function"
    );
    if (toolCall === undefined || toolCall.type !== "function") {
      throw new ProviderError(
        "provider_protocol",
        `${this.#label} answered without the forced ${wanted} function call (finish_reason ${choice.finish_reason})`,
        { usage },
      );
    }
    if (toolCall.function.name !== wanted) {
      throw new ProviderError(
        "provider_protocol",
        `${this.#label} called ${toolCall.function.name} instead of the forced ${wanted}`,
        { usage },
      );
    }
    let args: unknown;
    try {
      args = JSON.parse(toolCall.function.arguments);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new ProviderError(
        "provider_protocol",
        `The ${wanted} call's arguments are not valid JSON: ${why}`,
        { usage, cause: error },
      );
    }
    return { arguments: args, usage, final_usage: true };
  }

  #loadClient(): Promise<OpenAIClient> {
    this.#client ??= import("openai").then((sdk) => ({
      sdk,
      client: new sdk.default(this.#options),
    }));
    return this.#client;
  }
}

function openAIFailure(sdk: OpenAISdk, error: unknown, label: string): unknown {
  const OpenAI = sdk.default;
  if (error instanceof OpenAI.APIConnectionError) {
    return new ProviderError(
      "provider_connection",
      `Cannot reach ${
        label === "OpenAI" ? label : label.replace(/^The server/, "the server")
      }: ${error.message}`,
      { cause: error },
    );
  }
  if (error instanceof OpenAI.APIError && typeof error.status === "number") {
    const body = error.error as { message?: unknown } | undefined;
    return httpFailure(label, "OPENAI_API_KEY", {
      status: error.status,
      detail: body?.message,
      cause: error,
    });
  }
  if (error instanceof OpenAI.OpenAIError) {
    return new ProviderError(
      "provider_protocol",
      `The OpenAI client failed: ${error.message}`,
      { cause: error },
    );
  }
  return error;
}
