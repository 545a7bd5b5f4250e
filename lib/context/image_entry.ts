/**
 * Entries carrying a base64 image.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { mapError } from "../errors.ts";
import { fsReason } from "../fs_reason.ts";
import { encodeBase64 } from "./_base64.ts";
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

/**
 * Options of an {@linkcode ImageEntry}: of its constructor (which also
 * takes `data` and requires `mediaType`), `fromBytes` and `fromFile`.
 */
export interface ImageEntryOptions {
  /** The media type; detected from the bytes when left out (and checked against them when given). */
  readonly mediaType?: ImageMediaType;
  /**
   * A label; the caption reads `[Image: NAME]` (`unnamed` without one,
   * `fromFile`: default the file's base name).
   */
  readonly name?: string;
  /** `system` (default) or `user`: assistant turns cannot carry images. */
  readonly role?: "system" | "user";
  /** Pool the entry's id comes from. */
  readonly ids?: IdPool;
}

/**
 * Tells an image's media type from its first bytes (its magic number).
 *
 * @param bytes The image file's bytes.
 * @returns `image/png`, `image/jpeg`, `image/gif` or `image/webp`; `null`
 *   when the bytes start like none of them.
 *
 * @example
 * ```ts
 * import { detectImageMediaType } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
 * assert.equal(detectImageMediaType(png), "image/png");
 * assert.equal(detectImageMediaType(new TextEncoder().encode("hello")), null);
 * ```
 */
export function detectImageMediaType(bytes: Uint8Array): ImageMediaType | null {
  const starts = (offset: number, ...signature: number[]) =>
    signature.every((byte, i) => bytes[offset + i] === byte);
  if (starts(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) {
    return "image/png";
  }
  if (starts(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (
    starts(0, 0x47, 0x49, 0x46, 0x38) &&
    (bytes[4] === 0x37 || bytes[4] === 0x39) &&
    bytes[5] === 0x61
  ) return "image/gif";
  if (starts(0, 0x52, 0x49, 0x46, 0x46) && starts(8, 0x57, 0x45, 0x42, 0x50)) {
    return "image/webp";
  }
  return null;
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
  constructor(
    init: ImageEntryOptions & {
      /** The image bytes, base64-encoded (no `data:` prefix). */
      readonly data: string;
      /** The image's media type. */
      readonly mediaType: ImageMediaType;
    },
  ) {
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

  /**
   * Creates an image entry from raw bytes, detecting the media type from
   * them.
   *
   * @param bytes The image file's bytes.
   * @param options Media type (checked against the bytes), name, role, id pool.
   * @returns The entry.
   * @throws {InvalidEntryError} When the bytes are empty or not PNG, JPEG,
   *   GIF or WebP, or differ from the given media type.
   *
   * @example
   * ```ts
   * import { ImageEntry } from "@loom/loom";
   * import assert from "node:assert/strict";
   * const gif = new TextEncoder().encode("GIF89a\x01\x00\x01\x00");
   * const entry = ImageEntry.fromBytes(gif, { name: "pixel" });
   * assert.equal(entry.mediaType, "image/gif");
   * assert.equal(entry.compile(), "[Image: pixel]");
   * ```
   */
  static fromBytes(
    bytes: Uint8Array,
    options: ImageEntryOptions = {},
  ): ImageEntry {
    return new ImageEntry({
      ...options,
      data: encodeBase64(bytes),
      mediaType: mediaTypeOf(bytes, options.mediaType, "the bytes"),
    });
  }

  /**
   * Creates an image entry from a file, read now (unlike a
   * {@linkcode FileEntry}, an image is not re-read on compile). The media
   * type comes from the bytes; the name defaults to the file's base name.
   *
   * @param path The image file (path or `file:` URL).
   * @param options Media type (checked against the bytes), name, role, id pool.
   * @returns The entry.
   * @throws {InvalidEntryError} When the file cannot be read, or is not a
   *   PNG, JPEG, GIF or WebP image; the message names the file.
   *
   * @example
   * ```ts
   * import { ImageEntry } from "@loom/loom";
   * import assert from "node:assert/strict";
   * const path = Deno.makeTempFileSync({ suffix: ".bin" });
   * Deno.writeFileSync(path, new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]));
   * const entry = ImageEntry.fromFile(path);
   * assert.equal(entry.mediaType, "image/jpeg");
   * assert.equal(entry.name, path.split("/").at(-1));
   * Deno.removeSync(path);
   * ```
   */
  static fromFile(
    path: string | URL,
    options: ImageEntryOptions = {},
  ): ImageEntry {
    const file = path instanceof URL ? fileURLToPath(path) : path;
    const bytes = mapError(
      () => Deno.readFileSync(file),
      (error) =>
        new InvalidEntryError(
          "invalid_entry",
          `Cannot create an image entry from ${file}: ${fsReason(error)}`,
        ),
    );
    return new ImageEntry({
      ...options,
      name: options.name ?? basename(file),
      data: encodeBase64(bytes),
      mediaType: mediaTypeOf(bytes, options.mediaType, file),
    });
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

function mediaTypeOf(
  bytes: Uint8Array,
  given: ImageMediaType | undefined,
  what: string,
): ImageMediaType {
  const detected = detectImageMediaType(bytes);
  if (detected === null) {
    throw new InvalidEntryError(
      "invalid_entry",
      `Cannot create an image entry from ${what}: ${
        bytes.length === 0
          ? "it is empty"
          : "it is not a PNG, JPEG, GIF or WebP image"
      }`,
    );
  }
  if (given !== undefined && given !== detected) {
    throw new InvalidEntryError(
      "invalid_entry",
      `Cannot create an image entry from ${what}: its bytes are ${detected}, not the given ${given}`,
    );
  }
  return detected;
}
