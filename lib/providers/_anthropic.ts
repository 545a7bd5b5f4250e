/**
 * `anthropic:MODEL`: Anthropic's Messages API through the official SDK, with
 * the forced tool call and the briefing's cache markers.
 */

import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import type { RequestPart } from "../briefing/context_report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import {
  type ProviderRequestBody,
  providerRequestParts,
} from "./request_parts.ts";
import { checkCacheMarkers } from "./_cache_markers.ts";
import type { LiveProviderConfig } from "./_live.ts";
import { httpFailure, liveTransport } from "./_live.ts";
import {
  checkDepth,
  counter,
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
export function anthropicUsage(usage: unknown): ModelUsage {
  return {
    input_tokens: counter(usage, "input_tokens"),
    output_tokens: counter(usage, "output_tokens"),
    cache_read_tokens: counter(usage, "cache_read_input_tokens"),
    cache_write_tokens: counter(usage, "cache_creation_input_tokens"),
  };
}

/** The parts of a Messages API reply Loom reads; everything else may vary. */
const messageSchema = z.object({
  content: z.array(z.object({
    type: z.string(),
    name: z.string().optional(),
    input: z.unknown().optional(),
  })),
  stop_reason: z.string().nullish(),
  usage: z.unknown().optional(),
});

type Message = z.infer<typeof messageSchema>;

/** The SDK's module namespace, loaded on the first call. */
type AnthropicSdk = typeof import("@anthropic-ai/sdk");

export class AnthropicProvider implements ModelProvider {
  readonly spec: string;
  readonly #model: string;
  readonly #maxTokens: number;
  readonly #options: ConstructorParameters<typeof Anthropic>[0];
  readonly #transport: Transport;
  /** How messages name the server: `Anthropic` or `The server at URL`. */
  readonly #label: string;
  /** Loads the SDK once, on the first call. */
  #sdk: Promise<AnthropicSdk> | undefined;

  constructor(spec: string, model: string, config: LiveProviderConfig) {
    this.spec = spec;
    this.#model = model;
    this.#maxTokens = config.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
    const options: ConstructorParameters<typeof Anthropic>[0] = {
      apiKey: config.apiKey,
      baseURL: config.baseUrl ?? "https://api.anthropic.com",
    };
    this.#options = options;
    this.#label = "Anthropic";
    this.#transport = liveTransport(config, this.#label);
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
    const sdk = await this.#loadSdk();
    const transport = this.#transport;
    const text = await withAttempts(
      { ...transport, signal: call.signal },
      async (fetch) => {
        const client = new sdk.default({
          ...this.#options,
          ...sdkAttemptOptions(transport, fetch),
        });
        const response = await client.messages.create(params).asResponse();
        return await response.text();
      },
      (error) => anthropicFailure(sdk, error),
    );
    const message = parseBody(text, messageSchema, this.#label, "a message");
    return anthropicReply(message, call.request.tool_choice.name, {
      label: this.#label,
      maxTokens: this.#maxTokens,
    });
  }

  #loadSdk(): Promise<AnthropicSdk> {
    this.#sdk ??= import("@anthropic-ai/sdk");
    return this.#sdk;
  }
}

/** The forced call's arguments out of a schema-checked message. */
function anthropicReply(
  message: Message,
  wanted: string,
  options: { readonly label: string; readonly maxTokens: number },
): ModelReply {
  const usage = anthropicUsage(message.usage);
  const { label } = options;
  if (message.stop_reason === "max_tokens") {
    throw protocolError(
      "truncated",
      `${label} stopped at max_tokens (${options.maxTokens}) before finishing the ${wanted} call; send shorter arguments`,
      usage,
    );
  }
  const calls = message.content.filter((b) => b.type === "tool_use");
  const forced = calls.find((b) => b.name === wanted);
  if (forced === undefined) {
    const other = calls[0];
    if (other !== undefined) {
      throw protocolError(
        "wrong_tool",
        `${label} called tool ${
          toolName(other.name ?? "")
        } instead of the forced ${wanted}`,
        usage,
      );
    }
    throw protocolError(
      "no_tool_call",
      `${label} answered without the forced ${wanted} tool call (stop_reason ${
        message.stop_reason ?? "none"
      })`,
      usage,
    );
  }
  if (forced.input === undefined) {
    throw protocolError(
      "invalid_arguments",
      `The ${wanted} call carries no input object`,
      usage,
    );
  }
  const args = checkDepth(forced.input, wanted, usage);
  return { arguments: args, usage, final_usage: true };
}

function anthropicFailure(sdk: AnthropicSdk, error: unknown): AttemptFailure {
  const Anthropic = sdk.default;
  if (error instanceof Anthropic.APIError && typeof error.status === "number") {
    const body = error.error as { error?: { message?: unknown } } | undefined;
    return {
      kind: "http",
      status: error.status,
      headers: error.headers,
      error: httpFailure("Anthropic", "ANTHROPIC_API_KEY", {
        status: error.status,
        detail: body?.error?.message,
        cause: error,
      }),
    };
  }
  if (error instanceof Anthropic.APIConnectionError) {
    return {
      kind: "connection",
      error: new ProviderError(
        "provider_connection",
        `Cannot reach Anthropic: ${error.message}`,
        { cause: error },
      ),
    };
  }
  if (error instanceof Anthropic.AnthropicError) {
    return {
      kind: "final",
      error: new ProviderError(
        "provider_protocol",
        `Anthropic SDK failed: ${error.message}`,
        { problem: "malformed_response", cause: error },
      ),
    };
  }
  return { kind: "final", error };
}
