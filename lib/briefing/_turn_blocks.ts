/**
 * A compiled context's system blocks and messages, as a
 * `TurnRequest` holds them: text blocks only, with their cache
 * markers.
 *
 * @module
 */
import type { TurnMessage, TurnTextBlock } from "./turn_request.ts";

/** A text block of a compiled context (Anthropic's shape). */
export interface AnthropicTextBlock {
  readonly type: string;
  readonly text?: string;
  readonly cache_control?:
    | { readonly type: string; readonly ttl?: string }
    | null;
}

/** A compiled block as a turn request's text block. */
export function toTurnBlock(block: AnthropicTextBlock): TurnTextBlock {
  if (block.type !== "text" || typeof block.text !== "string") {
    throw new TypeError(
      `Cannot put a ${block.type} block into a turn request: briefings carry text only`,
    );
  }
  const cc = block.cache_control;
  if (cc === undefined || cc === null) {
    return { type: "text", text: block.text };
  }
  return {
    type: "text",
    text: block.text,
    cache_control: cc.ttl === "5m" || cc.ttl === "1h"
      ? { type: "ephemeral", ttl: cc.ttl }
      : { type: "ephemeral" },
  };
}

/** A compiled message as a turn request's message. */
export function toTurnMessage(message: {
  readonly role: string;
  readonly content: string | readonly AnthropicTextBlock[];
}): TurnMessage {
  if (message.role !== "user" && message.role !== "assistant") {
    throw new TypeError(
      `Cannot put a ${message.role} message into a turn request: roles are user and assistant`,
    );
  }
  const content = typeof message.content === "string"
    ? [{ type: "text" as const, text: message.content }]
    : message.content.map(toTurnBlock);
  return { role: message.role, content };
}
