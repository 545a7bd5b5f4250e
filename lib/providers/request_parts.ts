/**
 * The parts of a provider request body in the provider's cache order: the
 * context report measures prefix stability on them, and the cost simulator
 * counts their tokens.
 *
 * @module
 */
import type { RequestPart } from "../briefing/context_report.ts";

/** The wire formats of the live providers. */
export type ProviderWire = "anthropic" | "openai";

/** A request body as a provider's SDK sends it (JSON object). */
export type ProviderRequestBody = Readonly<Record<string, unknown>>;

/**
 * A provider body's parts in the provider's cache order: `tools` (the tool
 * definitions with the tool choice, which Anthropic's cache also keys on),
 * then Anthropic's `system block N`, then `message N block M` (the first
 * block of a message carries its role). An OpenAI message is one block.
 *
 * @param wire The body's wire format.
 * @param body A body from {@linkcode providerRequestBody} or a captured one.
 * @returns The parts, each with its JSON as the body carries it.
 *
 * @example
 * ```ts
 * import { providerRequestParts } from "./request_parts.ts";
 * import assert from "node:assert/strict";
 * const parts = providerRequestParts("anthropic", {
 *   tools: [{ name: "t" }], tool_choice: { type: "tool", name: "t" },
 *   system: [{ type: "text", text: "Rules" }],
 *   messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
 * });
 * assert.deepEqual(parts.map((p) => p.part), ["tools", "system block 0", "message 0 block 0"]);
 * ```
 */
export function providerRequestParts(
  wire: ProviderWire,
  body: ProviderRequestBody,
): RequestPart[] {
  const parts: RequestPart[] = [{
    part: "tools",
    json: JSON.stringify({
      tools: body["tools"],
      tool_choice: body["tool_choice"],
    }),
  }];
  if (wire === "anthropic") {
    const system = body["system"];
    for (const [i, block] of (Array.isArray(system) ? system : []).entries()) {
      parts.push({ part: `system block ${i}`, json: JSON.stringify(block) });
    }
  }
  const messages = body["messages"];
  for (
    const [m, message] of (Array.isArray(messages) ? messages : []).entries()
  ) {
    const { role, content } = message as { role: unknown; content: unknown };
    const blocks = Array.isArray(content) ? content : [content];
    for (const [b, block] of blocks.entries()) {
      parts.push({
        part: `message ${m} block ${b}`,
        json: b === 0
          ? `${JSON.stringify({ role })}${JSON.stringify(block)}`
          : JSON.stringify(block),
      });
    }
  }
  return parts;
}
