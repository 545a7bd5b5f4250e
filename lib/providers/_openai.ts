/**
 * `openai:MODEL`: Chat Completions through the official `openai` client, for
 * OpenAI or any compatible server (vLLM, llama.cpp server, Ollama) at a base
 * URL, with a forced function call.
 */

import type OpenAI from "openai";
import { z } from "zod";
import type { TurnRequest } from "../briefing/turn_request.ts";
import {
  type LiveApi,
  LiveProvider,
  type LiveProviderConfig,
} from "./_live.ts";
import {
  counter,
  excerpt,
  forcedCall,
  parseArguments,
  parseBody,
  protocolError,
} from "./_reply.ts";
import type {
  ModelProvider,
  ModelReply,
  ModelUsage,
} from "./model_provider.ts";

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
  id: z.string().optional(),
  model: z.string().optional(),
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

/** Chat Completions of `openai:MODEL`, for the shared live call. */
export function openAIProvider(
  spec: string,
  model: string,
  config: LiveProviderConfig,
): ModelProvider {
  const maxTokens = config.maxTokens;
  const label = config.baseUrl === undefined
    ? "OpenAI"
    : `The server at ${config.baseUrl}`;
  const client: ConstructorParameters<typeof OpenAI>[0] = {
    apiKey: config.apiKey ?? NO_KEY,
    baseURL: config.baseUrl ?? "https://api.openai.com/v1",
    // Explicit nulls keep the client from picking these up from the environment.
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
  };
  if (config.apiKey === undefined) {
    client.defaultHeaders = { Authorization: null };
  }
  const api: LiveApi<OpenAISdk, OpenAI.ChatCompletionCreateParamsNonStreaming> =
    {
      family: "openai",
      label,
      client: "The OpenAI client",
      params: (request) => toOpenAIParams(request, { model, maxTokens }),
      load: () => import("openai"),
      send: (sdk, options, params) =>
        new sdk.default({ ...client, ...options }).chat.completions.create(
          params,
        ).asResponse(),
      sdkError: (sdk) => sdk.default.OpenAIError,
      detail: (body) => (body as { message?: unknown } | undefined)?.message,
      reply: (text, wanted) =>
        openAIReply(
          parseBody(text, completionSchema, label, "a chat completion"),
          wanted,
          label,
        ),
    };
  return new LiveProvider(spec, api, config);
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
  const content = choice.message.content;
  const forced = forcedCall(calls, wanted, usage, {
    other: (name) => `${label} called ${name} instead of the forced ${wanted}`,
    none:
      `${label} answered without the forced ${wanted} function call (finish_reason ${
        choice.finish_reason ?? "none"
      }${
        typeof content === "string" && content !== ""
          ? `; text ${excerpt(content)}`
          : ""
      })`,
  });
  const args = parseArguments(forced.arguments, wanted, usage);
  return {
    arguments: args,
    usage,
    final_usage: true,
    response: {
      ...(completion.id === undefined ? {} : { id: completion.id }),
      ...(completion.model === undefined ? {} : { model: completion.model }),
      finish_reasons: completion.choices.flatMap((c) =>
        c.finish_reason == null ? [] : [c.finish_reason]
      ),
    },
  };
}
