/**
 * The Anthropic Messages shape of a compiled context.
 *
 * @module
 */
import { layOut, markBreakpoints, type Piece } from "./_compile.ts";
import type { ResolvedOptions } from "./_options.ts";
import type {
  ContentBlock,
  MessageOptions,
  TextContentBlock,
} from "./message.ts";

/** One Anthropic message (`MessageParam`). */
export interface AnthropicMessage {
  /** `user` or `assistant`, alternating, starting with `user`. */
  role: "user" | "assistant";
  /** Text and image blocks (images only in user messages). */
  content: ContentBlock[];
}

/** The `system` and `messages` fields of a Messages API request. */
export interface AnthropicMessages {
  /** Text-only system blocks. */
  system: TextContentBlock[];
  /** At least one message; roles alternate starting with `user`. */
  messages: AnthropicMessage[];
}

/** Options of `Context.toAnthropic()`. */
export interface AnthropicOptions extends MessageOptions {
  /**
   * Text of the user turn inserted when the messages would otherwise be
   * empty or start with `assistant` (the API requires a leading user turn).
   * Default `"Continue."`.
   */
  readonly fillerText?: string;
}

/** Default text of an inserted user turn. */
export const DEFAULT_FILLER_TEXT = "Continue.";

/**
 * Lays pieces out for the Messages API: system text blocks in `system`;
 * system-role images (with captions) moved into a leading user message;
 * other roles as messages, same-role neighbours merged; a filler user turn
 * inserted when needed so roles alternate from `user`.
 */
export function buildAnthropic(
  pieces: readonly Piece[],
  options: ResolvedOptions,
  fillerText: string,
): AnthropicMessages {
  const { system, turns, last } = layOut(pieces, true);
  if (turns[0]?.role !== "user") {
    if (fillerText.trim() === "") {
      throw new TypeError("Cannot insert a user turn: fillerText is empty");
    }
    turns.unshift({
      role: "user",
      content: [{ type: "text", text: fillerText }],
    });
  }
  markBreakpoints(last, options.breakpoints, options.cacheControl);
  // Pieces of system role without an image are text blocks.
  return { system: system as TextContentBlock[], messages: turns };
}
