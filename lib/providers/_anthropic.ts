/**
 * `anthropic:MODEL`: Anthropic's Messages API through the official SDK, with
 * the forced tool call and the briefing's cache markers.
 */

import type Anthropic from "@anthropic-ai/sdk";
import type { RequestPart } from "../briefing/context_report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import {
  type ProviderRequestBody,
  providerRequestParts,
} from "./request_parts.ts";
import { checkCacheMarkers } from "./_cache_markers.ts";
import type { LiveProviderConfig } from "./_live.ts";
import { httpFailure } from "./_live.ts";
import type {
  ModelCall,
  ModelProvider,
  ModelReply,
  ModelUsage,
} from "./model_provider.ts";
import { ProviderError } from "./provider_error.ts";

/** Output budget per call: room for an edit's arguments, below the SDK's non-streaming limit. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;

/** Maps a turn request to `messages.create` parameters (checks cache markers first). */
export function toAnthropicParams(
  request: TurnRequest,
  options: { readonly model: string; readonly maxTokens: number },
): Anthropic.MessageCreateParamsNonStreaming {
  checkCacheMarkers(request);
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model: options.model,
    max_tokens: options.maxTokens,
    messages: request.messages.map((m) => ({
      role: m.role,
      content: m.content.map(textBlock),
    })),
    tools: [{
      name: request.tool.name,
      description: request.tool.description,
      input_schema: request.tool.input_schema as Anthropic.Tool.InputSchema,
    }],
    tool_choice: { type: "tool", name: request.tool_choice.name },
  };
  if (request.system.length > 0) params.system = request.system.map(textBlock);
  return params;
}

function textBlock(
  block: TurnRequest["system"][number],
): Anthropic.TextBlockParam {
  const out: Anthropic.TextBlockParam = { type: "text", text: block.text };
  if (block.cache_control !== undefined) {
    out.cache_control = block.cache_control.ttl === undefined
      ? { type: "ephemeral" }
      : { type: "ephemeral", ttl: block.cache_control.ttl };
  }
  return out;
}

/** Maps Anthropic's usage object to Loom's counters. */
export function anthropicUsage(
  usage: Partial<Anthropic.Usage> | null | undefined,
): ModelUsage {
  return {
    input_tokens: usage?.input_tokens ?? null,
    output_tokens: usage?.output_tokens ?? null,
    cache_read_tokens: usage?.cache_read_input_tokens ?? null,
    cache_write_tokens: usage?.cache_creation_input_tokens ?? null,
  };
}

/** The SDK's module namespace, loaded on the first call. */
type AnthropicSdk = typeof import("@anthropic-ai/sdk");

/** The SDK client with the module it came from (for its error classes). */
interface AnthropicClient {
  readonly sdk: AnthropicSdk;
  readonly client: Anthropic;
}

export class AnthropicProvider implements ModelProvider {
  readonly spec: string;
  readonly #model: string;
  readonly #maxTokens: number;
  readonly #options: ConstructorParameters<typeof Anthropic>[0];
  /** Loads the SDK and builds the client once, on the first call. */
  #client: Promise<AnthropicClient> | undefined;

  constructor(spec: string, model: string, config: LiveProviderConfig) {
    this.spec = spec;
    this.#model = model;
    this.#maxTokens = config.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
    const options: ConstructorParameters<typeof Anthropic>[0] = {
      apiKey: config.apiKey,
      baseURL: config.baseUrl ?? "https://api.anthropic.com",
      maxRetries: config.maxRetries,
    };
    if (config.fetch !== undefined) options.fetch = config.fetch;
    if (config.timeoutMs !== undefined) options.timeout = config.timeoutMs;
    this.#options = options;
  }

  requestParts(request: TurnRequest): readonly RequestPart[] {
    return providerRequestParts(
      "anthropic",
      toAnthropicParams(request, {
        model: this.#model,
        maxTokens: this.#maxTokens,
      }) as unknown as ProviderRequestBody,
    );
  }

  async call(call: ModelCall): Promise<ModelReply> {
    const params = toAnthropicParams(call.request, {
      model: this.#model,
      maxTokens: this.#maxTokens,
    });
    const { sdk, client } = await this.#loadClient();
    let message: Anthropic.Message;
    try {
      message = await client.messages.create(params);
    } catch (error) {
      throw anthropicFailure(sdk, error);
    }
    const usage = anthropicUsage(message.usage);
    const wanted = call.request.tool_choice.name;
    if (message.stop_reason === "max_tokens") {
      throw new ProviderError(
        "provider_protocol",
        `Anthropic stopped at max_tokens (${this.#maxTokens}) before finishing the ${wanted} call`,
        { usage },
      );
    }
    const toolUse = message.content?.find((b) => b.type === "tool_use");
    if (toolUse === undefined || toolUse.type !== "tool_use") {
      throw new ProviderError(
        "provider_protocol",
        `Anthropic answered without the forced ${wanted} tool call (stop_reason ${message.stop_reason})`,
        { usage },
      );
    }
    if (toolUse.name !== wanted) {
      throw new ProviderError(
        "provider_protocol",
        `Anthropic called tool ${toolUse.name} instead of the forced ${wanted}`,
        { usage },
      );
    }
    return { arguments: toolUse.input, usage, final_usage: true };
  }

  #loadClient(): Promise<AnthropicClient> {
    this.#client ??= import("@anthropic-ai/sdk").then((sdk) => ({
      sdk,
      client: new sdk.default(this.#options),
    }));
    return this.#client;
  }
}

function anthropicFailure(sdk: AnthropicSdk, error: unknown): unknown {
  const Anthropic = sdk.default;
  if (error instanceof Anthropic.APIConnectionError) {
    return new ProviderError(
      "provider_connection",
      `Cannot reach Anthropic: ${error.message}`,
      { cause: error },
    );
  }
  if (error instanceof Anthropic.APIError && typeof error.status === "number") {
    const body = error.error as { error?: { message?: unknown } } | undefined;
    return httpFailure("Anthropic", "ANTHROPIC_API_KEY", {
      status: error.status,
      detail: body?.error?.message,
      cause: error,
    });
  }
  if (error instanceof Anthropic.AnthropicError) {
    return new ProviderError(
      "provider_protocol",
      `Anthropic SDK failed: ${error.message}`,
      { cause: error },
    );
  }
  return error;
}
