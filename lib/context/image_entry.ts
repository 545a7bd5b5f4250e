/**
 * Entries carrying a base64 image.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { Entry, type Role } from "./entry.ts";
import { InvalidEntryError } from "./errors.ts";
import type { IdPool } from "./id_pool.ts";

/** Image types both Anthropic and OpenAI accept inline. */
export type ImageMediaType =
  | "image/jpeg"
  | "image/png"
  | "image/gif"
  | "image/webp";

const MEDIA_TYPES: ReadonlySet<string> = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
]);

const BASE64 =
  /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What {@linkcode ImageEntry} is built from. */
export interface ImageEntryInit {
  /** The image bytes, base64-encoded (no `data:` prefix). */
  readonly data: string;
  /** The image's media type. */
  readonly mediaType: ImageMediaType;
  /** A label; the caption reads `[Image: NAME]` (`unnamed` without one). */
  readonly name?: string;
  /** `system` (default) or `user`: assistant turns cannot carry images. */
  readonly role?: "system" | "user";
  /** Pool the entry's id comes from. */
  readonly ids?: IdPool;
}

/**
 * An image. In messages it becomes a vision block followed by a caption
 * text block `[Image: NAME]`; `render()` shows only the caption. Provider
 * output moves system images into user content, since system prompts are
 * text only. Identity is the SHA-256 of the data, so the same picture under
 * two names compiles once.
 *
 * @example
 * ```ts
 * import { Context, ImageEntry } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const ctx = new Context("agent");
 * ctx.topic.add(new ImageEntry({ data: "iVBORw0KGgo=", mediaType: "image/png", name: "logo" }));
 * assert.match(ctx.render(), /\[Image: logo\]/);
 * ```
 */
export class ImageEntry extends Entry {
  /** The base64 data. */
  readonly data: string;
  /** The media type. */
  readonly mediaType: ImageMediaType;
  readonly #role: "system" | "user";
  #digest: string | undefined;

  /**
   * Creates an image entry.
   *
   * @param init Data, media type, name, role and id pool.
   * @throws {InvalidEntryError} When the media type is not JPEG, PNG, GIF or WebP, the data is not non-empty base64, or the role is `assistant`.
   */
  constructor(init: ImageEntryInit) {
    if (
      typeof init.data !== "string" || init.data === "" ||
      !BASE64.test(init.data)
    ) {
      throw new InvalidEntryError(
        "invalid_entry",
        "Cannot create an image entry: data must be non-empty base64 without a data: prefix",
      );
    }
    if (!MEDIA_TYPES.has(init.mediaType)) {
      throw new InvalidEntryError(
        "invalid_entry",
        `Cannot create an image entry of type '${
          String(init.mediaType)
        }': the media type must be image/jpeg, image/png, image/gif or image/webp`,
      );
    }
    if ((init.role as string | undefined) === "assistant") {
      throw new InvalidEntryError(
        "invalid_entry",
        "Cannot create an image entry with role 'assistant': providers take images in user or system content only",
      );
    }
    super(init);
    this.data = init.data;
    this.mediaType = init.mediaType;
    this.#role = init.role ?? "system";
  }

  /** `system` or `user`. */
  get role(): Role {
    return this.#role;
  }

  /**
   * The caption used in place of the image in text.
   *
   * @returns `[Image: NAME]`, or `[Image: unnamed]`.
   */
  compile(): string {
    return `[Image: ${this.name ?? "unnamed"}]`;
  }

  /**
   * The identity: the SHA-256 of the data.
   *
   * @returns `image:` followed by the hex digest.
   */
  identity(): string {
    this.#digest ??= createHash("sha256").update(this.data).digest("hex");
    return `image:${this.#digest}`;
  }
}
