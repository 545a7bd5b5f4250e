/**
 * The OpenAI Chat Completions shape of a compiled context.
 *
 * @module
 */
import { layOut, type Piece } from "./_compile.ts";
import type { ContentBlock } from "./message.ts";
import type { MessageOptions } from "./message.ts";

/** A text content part. */
export interface OpenAITextPart {
  /** Always `text`. */
  type: "text";
  /** The text (never empty). */
  text: string;
}

/** An inline image content part (a base64 data URL). */
export interface OpenAIImagePart {
  /** Always `image_url`. */
  type: "image_url";
  /** The image as `data:<media type>;base64,<data>`. */
  image_url: { url: string };
}

/**
 * One Chat Completions message (`ChatCompletionMessageParam`): a `system`
 * (or `developer`) or `assistant` message of text parts, or a `user`
 * message of text and image parts (an image is an image part then its
 * caption). Parts come one per entry.
 */
export type OpenAIMessage =
  | {
    /** `system` or `developer`. */
    role: "system" | "developer";
    /** Text parts only. */
    content: OpenAITextPart[];
  }
  | {
    /** Always `user`. */
    role: "user";
    /** Text and image parts. */
    content: (OpenAITextPart | OpenAIImagePart)[];
  }
  | {
    /** Always `assistant`. */
    role: "assistant";
    /** Text parts only. */
    content: OpenAITextPart[];
  };

/** Options of `Context.toOpenAI()`. */
export interface OpenAIOptions extends MessageOptions {
  /** Role of the instructions message: `system` (default) or `developer`. */
  readonly systemRole?: "system" | "developer";
}

/**
 * Lays pieces out for Chat Completions: system text as one system (or
 * developer) message, omitted when empty; system images moved into a
 * leading user message; other roles as messages, same-role neighbours
 * merged. Cache markers are not part of this API and are left out.
 */
export function buildOpenAI(
  pieces: readonly Piece[],
  systemRole: "system" | "developer",
): OpenAIMessage[] {
  const { system, turns } = layOut(pieces, true);
  const messages: OpenAIMessage[] = [];
  if (system.length > 0) {
    messages.push({ role: systemRole, content: system.map(textPart) });
  }
  for (const turn of turns) {
    if (turn.role === "assistant") {
      messages.push({ role: "assistant", content: turn.content.map(textPart) });
    } else {
      messages.push({
        role: "user",
        content: turn.content.map((block) =>
          block.type === "image"
            ? {
              type: "image_url",
              image_url: {
                url:
                  `data:${block.source.media_type};base64,${block.source.data}`,
              },
            }
            : { type: "text", text: block.text }
        ),
      });
    }
  }
  return messages;
}

function textPart(block: ContentBlock): OpenAITextPart {
  if (block.type !== "text") {
    throw new TypeError("Cannot put an image into a text-only message");
  }
  return { type: "text", text: block.text };
}
