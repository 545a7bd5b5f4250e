/**
 * Provider-neutral message shapes produced by `Context.toMessages()`.
 *
 * @module
 */
import type { Role } from "./entry.ts";
import type { ImageMediaType } from "./image_entry.ts";
import type { SectionNameInput } from "./section.ts";

/** Anthropic's cache marker: 5 minutes unless `ttl` says `1h`. */
export interface EphemeralCacheControl {
  /** Always `ephemeral`. */
  type: "ephemeral";
  /** Time to live; omitted means the provider default (5 minutes). */
  ttl?: "5m" | "1h";
}

/** A text content block. Its text is never empty or only whitespace. */
export interface TextContentBlock {
  /** Always `text`. */
  type: "text";
  /** The text. */
  text: string;
  /** Present on the last block of a section named in `cacheBreakpoints`. */
  cache_control?: EphemeralCacheControl;
}

/** An image content block (always followed by its caption text block). */
export interface ImageContentBlock {
  /** Always `image`. */
  type: "image";
  /** The image data, base64-encoded. */
  source: {
    /** Always `base64`. */
    type: "base64";
    /** The image's media type. */
    media_type: ImageMediaType;
    /** Base64 data. */
    data: string;
  };
  /** Present when the image closes a breakpoint section (never: its caption follows). */
  cache_control?: EphemeralCacheControl;
}

/** A text or image block. */
export type ContentBlock = TextContentBlock | ImageContentBlock;

/** A provider-neutral message: one content block per entry. */
export interface Message {
  /** Who speaks. */
  role: Role;
  /** The blocks, in compile order. */
  content: ContentBlock[];
}

/** Options of `toMessages()`, `toAnthropic()` and `toOpenAI()`. */
export interface MessageOptions {
  /**
   * Sections whose last block gets a `cache_control` marker (case
   * insensitive, at most 4, each section at most once).
   */
  readonly cacheBreakpoints?: readonly SectionNameInput[];
  /** TTL of the markers: `"5m"` or `"1h"` (or 300/3600); omitted → the provider default. */
  readonly cacheTtl?: "5m" | "1h" | 300 | 3600;
  /** Compile only these sections (case insensitive); default all six. */
  readonly sections?: readonly SectionNameInput[];
  /** Clear the step section afterwards; default `true`. */
  readonly clearVolatile?: boolean;
}

/** Cache time to live: 5 minutes or 1 hour (seconds accepted as aliases). */
export type CacheTtl = NonNullable<MessageOptions["cacheTtl"]>;
