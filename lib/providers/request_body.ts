/**
 * The HTTP request bodies Loom's live providers send for a turn request, and
 * the wire formats they belong to. The cost simulator prices these bodies.
 *
 * @module
 */
import type { TurnRequest } from "../briefing/turn_request.ts";
import {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  toAnthropicParams,
} from "./_anthropic.ts";
import { toOpenAIParams } from "./_openai.ts";
import type { ProviderRequestBody, ProviderWire } from "./request_parts.ts";

/**
 * The body the `anthropic:` or `openai:` provider sends for a turn request,
 * exactly as it passes it to the official SDK (which serializes it as is).
 *
 * @param wire `anthropic` or `openai`.
 * @param request The turn request.
 * @param model The model name after the `anthropic:`/`openai:` prefix.
 * @param maxTokens The output budget (Anthropic's default 8192; none for OpenAI).
 * @returns The JSON body.
 *
 * @example
 * ```ts
 * import { providerRequestBody } from "./request_body.ts";
 * import assert from "node:assert/strict";
 * const body = providerRequestBody("openai", {
 *   system: [{ type: "text", text: "Rules" }],
 *   messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
 *   tool: { name: "t", description: "d", input_schema: { type: "object" } },
 *   tool_choice: { type: "tool", name: "t" },
 * }, "gpt-4.1");
 * assert.deepEqual(body["tool_choice"], { type: "function", function: { name: "t" } });
 * ```
 */
export function providerRequestBody(
  wire: ProviderWire,
  request: TurnRequest,
  model: string,
  maxTokens?: number,
): ProviderRequestBody {
  const params = wire === "anthropic"
    ? toAnthropicParams(request, {
      model,
      maxTokens: maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    })
    : toOpenAIParams(request, { model, maxTokens });
  return params as unknown as ProviderRequestBody;
}
