/**
 * `anthropic:MODEL`: Anthropic's Messages API through the official SDK, with
 * the forced tool call and the briefing's cache markers.
 */

import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import type { TurnRequest } from "../briefing/turn_request.ts";
import { checkCacheMarkers } from "./_cache_markers.ts";
import {
  type LiveApi,
  LiveProvider,
  type LiveProviderConfig,
} from "./_live.ts";
import {
  checkDepth,
  counter,
  forcedCall,
  parseBody,
  protocolError,
} from "./_reply.ts";
import type {
  ModelProvider,
  ModelReply,
  ModelUsage,
} from "./model_provider.ts";

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
  id: z.string().optional(),
  model: z.string().optional(),
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

/** The Messages API of `anthropic:MODEL`, for the shared live call. */
export function anthropicProvider(
  spec: string,
  model: string,
  config: LiveProviderConfig,
): ModelProvider {
  const maxTokens = config.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  const client: ConstructorParameters<typeof Anthropic>[0] = {
    apiKey: config.apiKey,
    baseURL: config.baseUrl ?? "https://api.anthropic.com",
  };
  const label = "Anthropic";
  const api: LiveApi<AnthropicSdk, Anthropic.MessageCreateParamsNonStreaming> =
    {
      family: "anthropic",
      label,
      client: "Anthropic SDK",
      params: (request) => toAnthropicParams(request, { model, maxTokens }),
      load: () => import("@anthropic-ai/sdk"),
      send: (sdk, options, params) =>
        new sdk.default({ ...client, ...options }).messages.create(params)
          .asResponse(),
      sdkError: (sdk) => sdk.default.AnthropicError,
      detail: (body) =>
        (body as { error?: { message?: unknown } } | undefined)?.error
          ?.message,
      reply: (text, wanted) =>
        anthropicReply(
          parseBody(text, messageSchema, label, "a message"),
          wanted,
          { label, maxTokens },
        ),
    };
  return new LiveProvider(spec, api, config);
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
  const forced = forcedCall(calls, wanted, usage, {
    other: (name) =>
      `${label} called tool ${name} instead of the forced ${wanted}`,
    none:
      `${label} answered without the forced ${wanted} tool call (stop_reason ${
        message.stop_reason ?? "none"
      })`,
  });
  if (forced.input === undefined) {
    throw protocolError(
      "invalid_arguments",
      `The ${wanted} call carries no input object`,
      usage,
    );
  }
  const args = checkDepth(forced.input, wanted, usage);
  return {
    arguments: args,
    usage,
    final_usage: true,
    response: {
      ...(message.id === undefined ? {} : { id: message.id }),
      ...(message.model === undefined ? {} : { model: message.model }),
      ...(message.stop_reason == null
        ? {}
        : { finish_reasons: [message.stop_reason] }),
    },
  };
}
