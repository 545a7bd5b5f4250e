/**
 * The gateway's offloading rule: an upstream `tools/call` (or
 * `resources/read`) answer whose serialized size passes the threshold is
 * stored in the one {@linkcode ResultStore} and answered with descriptors
 * (wire-formats.md "Gateway descriptor", at most 2 KiB each); a smaller one
 * passes through untouched, the same object. Text is stored as sent;
 * `structuredContent` as JSON with two-space indentation; a text item that
 * holds the same JSON as `structuredContent` is stored once. Images, audio
 * and blobs over a small size are stored out of band (their base64 text),
 * described by media type and decoded size, and remembered so that a whole
 * read answers the original content block. A text over the per-result limit
 * is stored up to it and marked partial. An answer too scattered to describe
 * in a few descriptors is stored whole, as its JSON. A text the transport
 * took out as it streamed in (a {@linkcode LargeText}) is stored as the bytes
 * and digest it already has: nothing is decoded, encoded or hashed again.
 *
 * @module
 */
import type {
  ResultDescriptor,
  ResultStore,
} from "../../store/result_store.ts";
import { floorCharBoundary } from "../../store/utf8.ts";
import { cutUtf8 } from "../../store/preview.ts";
import {
  isText,
  LargeText,
  sameJson,
  sameText,
  type Text,
  withStrings,
} from "./large_text.ts";
import {
  countLines,
  fitDescriptor,
  summarizeContent,
} from "../../reference/descriptor_fields.ts";
import { isPlainObject } from "../../plain_object.ts";

/** Default offload threshold, in bytes of the serialized result. */
export const DEFAULT_OFFLOAD_BYTES = 8192;
/** Most descriptors in one answer before the answer is stored whole. */
const MAX_PARTS = 8;
/** A media block under this many base64 characters stays inline. */
const INLINE_MEDIA_CHARS = 1024;

/** A content block as MCP sends it (an open object). */
export type ContentBlock = Record<string, unknown>;

/** What a stored media result answers to a whole read: its block without the data. */
export interface MediaTemplate {
  /** The original block, its `data` (or `resource.blob`) left out. */
  readonly block: ContentBlock;
  /** Where the data goes back: `data` or `resource.blob`. */
  readonly field: "data" | "resource.blob";
}

/** Options of {@linkcode offloadResult}. */
export interface OffloadOptions {
  /** The upstream server's entry name. */
  readonly server: string;
  /** The upstream tool's own name (or `resources/read <uri>`). */
  readonly tool: string;
  /** The store. */
  readonly store: ResultStore;
  /** The threshold in serialized bytes. */
  readonly offloadBytes: number;
  /** The per-result limit (the store's own); longer text is stored partial. */
  readonly maxResultBytes: number;
  /** The upstream answer was already cut by the transport: its full size. */
  readonly partialTotalBytes?: number;
  /** The JSON outline of stored bytes (the shared `jsonOutline`). */
  readonly outline: (bytes: Uint8Array) => string | undefined;
  /**
   * The store's note for each stored part (its `put` option `note`, which
   * the store's backing records): given the part, e.g. `content[0]`, and
   * the media template of an image, audio or blob.
   */
  readonly note?: (
    part: string,
    media?: MediaTemplate,
  ) => Readonly<Record<string, unknown>>;
}

/** One stored part of an offloaded answer. */
export interface StoredPart {
  /** The result id. */
  readonly id: string;
  /** The media template, for an image, audio or blob. */
  readonly media?: MediaTemplate;
  /** Its descriptor, as sent. */
  readonly descriptor: Record<string, unknown>;
}

/** What {@linkcode offloadResult} answers. */
export interface Offloaded {
  /** The answer for the host: the upstream one, or descriptors. */
  readonly result: Record<string, unknown>;
  /** Whether descriptors replaced content. */
  readonly offloaded: boolean;
  /** The parts stored. */
  readonly stored: readonly StoredPart[];
  /** Serialized bytes of the upstream answer (at least the threshold when offloaded without measuring). */
  readonly upstreamBytes: number;
}

const encoder = new TextEncoder();

/**
 * Stores an upstream answer over the threshold and answers descriptors.
 *
 * @param result The upstream result (untrusted shape).
 * @param options Server, tool, store, limits.
 * @returns The host's answer and what was stored.
 *
 * @example
 * ```ts
 * import { offloadResult } from "./offload.ts";
 * import { ResultStore } from "../../store/result_store.ts";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const small = { content: [{ type: "text", text: "hi" }] };
 * const options = { server: "fs", tool: "read", store, offloadBytes: 100, maxResultBytes: 1e6, outline: () => undefined };
 * assert.equal((await offloadResult(small, options)).result, small);
 * const big = await offloadResult({ content: [{ type: "text", text: "x".repeat(500) }] }, options);
 * const descriptor = JSON.parse((big.result.content as { text: string }[])[0]!.text);
 * assert.equal(descriptor.utf8_bytes, 500);
 * assert.equal(descriptor.result, "result-1");
 * ```
 */
export async function offloadResult(
  result: Record<string, unknown>,
  options: OffloadOptions,
): Promise<Offloaded> {
  const partial = options.partialTotalBytes !== undefined;
  const size = partial ? options.partialTotalBytes! : measure(result, options);
  if (!partial && size <= options.offloadBytes) {
    return {
      result: withStrings(result),
      offloaded: false,
      stored: [],
      upstreamBytes: size,
    };
  }
  const content = Array.isArray(result.content)
    ? result.content as unknown[]
    : [];
  const structured = isPlainObject(result.structuredContent)
    ? result.structuredContent as Record<string, unknown>
    : undefined;
  // Plan: which parts are stored, which blocks stay inline.
  const parts: Part[] = [];
  const inline: unknown[] = [];
  // Made only when needed: it may be as large as the answer.
  let structuredJson: string | undefined;
  const structuredText = () =>
    structuredJson ??= JSON.stringify(structured, null, 2);
  let structuredMerged = false;
  // server-filesystem's shape: structuredContent {content: <the text>}.
  const keys = structured === undefined ? [] : Object.keys(structured);
  const wrappedKey = keys.length === 1 && isText(structured![keys[0]!])
    ? keys[0]!
    : undefined;
  for (const [i, block] of content.entries()) {
    if (!isPlainObject(block)) {
      inline.push(block);
      continue;
    }
    const b = block as ContentBlock;
    if (b.type === "text" && isText(b.text)) {
      if (
        wrappedKey !== undefined && !structuredMerged &&
        sameText(structured![wrappedKey] as Text, b.text)
      ) {
        structuredMerged = true;
        parts.push({
          kind: "text",
          part: `content[${i}]+structuredContent.${wrappedKey.slice(0, 64)}`,
          text: b.text,
        });
        continue;
      }
      if (
        structured !== undefined && !structuredMerged &&
        sameJson(b.text, structuredText)
      ) {
        structuredMerged = true;
        parts.push({
          kind: "text",
          part: `content[${i}]+structuredContent`,
          text: structuredText(),
        });
        continue;
      }
      if (
        typeof b.text === "string" &&
        b.text.length * 3 <= options.offloadBytes / 8 && !partial
      ) {
        inline.push(b);
        continue;
      }
      parts.push({ kind: "text", part: `content[${i}]`, text: b.text });
      continue;
    }
    const media = mediaOf(b);
    if (media !== undefined && media.data.length > INLINE_MEDIA_CHARS) {
      parts.push({ kind: "media", part: `content[${i}]`, ...media });
      continue;
    }
    inline.push(b);
  }
  if (structured !== undefined && !structuredMerged) {
    parts.push({
      kind: "text",
      part: "structuredContent",
      text: structuredText(),
    });
  }
  const inlineBytes = encoder.encode(JSON.stringify(inline)).length;
  if (
    parts.length > MAX_PARTS ||
    (inline.length > 0 && inlineBytes > options.offloadBytes)
  ) {
    // Too scattered: the whole answer, as its JSON, is one result.
    parts.length = 0;
    inline.length = 0;
    parts.push({
      kind: "text",
      part: "result",
      text: JSON.stringify(withoutPartialMark(result), null, 2),
    });
  }
  const stored: StoredPart[] = [];
  const descriptors: Record<string, unknown>[] = [];
  for (const part of parts) {
    const one = part.kind === "text"
      ? await storeText(part, options, partial)
      : await storeMedia(part, options);
    descriptors.push(one.descriptor);
    if (one.id !== undefined) {
      stored.push({
        id: one.id,
        descriptor: one.descriptor,
        ...(part.kind === "media" ? { media: part.template } : {}),
      });
    }
  }
  const text = JSON.stringify(
    descriptors.length === 1 ? descriptors[0] : { results: descriptors },
  );
  const answer: Record<string, unknown> = {
    content: [{ type: "text", text }, ...inline],
  };
  if (result.isError === true) answer.isError = true;
  const meta = withoutPartialMark(result)._meta;
  if (isPlainObject(meta) && Object.keys(meta as object).length > 0) {
    answer._meta = meta;
  }
  return { result: answer, offloaded: true, stored, upstreamBytes: size };
}

/** A text as the transport delivers it: a string, or taken out as bytes. */
type Part =
  | { kind: "text"; part: string; text: Text }
  | {
    kind: "media";
    part: string;
    data: string;
    mediaType: string;
    template: MediaTemplate;
  };

async function storeText(
  part: { part: string; text: Text },
  options: OffloadOptions,
  cutByTransport: boolean,
): Promise<{ id?: string; descriptor: Record<string, unknown> }> {
  let capture: "complete" | "partial" = cutByTransport ? "partial" : "complete";
  const max = options.maxResultBytes;
  const large = part.text instanceof LargeText ? part.text : undefined;
  const text = large === undefined ? wellFormed(part.text as string) : "";
  const note = options.note?.(part.part);
  const where = {
    origin: origin(options, part.part),
    capture,
    ...(note === undefined ? {} : { note }),
  };
  // Content that may fit is handed over as it is: a large text as the bytes
  // and digest it already has, a string to be encoded once (no copy).
  let put: ResultDescriptor | undefined;
  if (large !== undefined ? large.byteLength <= max : text.length <= max) {
    put = await options.store.put(large?.content ?? text, where);
  }
  let lines: number | undefined;
  let fullBytes: number | undefined;
  if (put === undefined || put.result_unavailable === "too_large") {
    // Too large: cut on a character boundary, marked partial.
    let bytes = large?.content.bytes ?? encoder.encode(text);
    fullBytes = bytes.length;
    if (bytes.length > max) {
      bytes = bytes.subarray(0, floorCharBoundary(bytes, max));
      capture = "partial";
    }
    lines = countLines(bytes);
    put = await options.store.put(bytes, { ...where, capture });
  } else lines = large?.lines;
  const bytes = put.result === undefined
    ? large?.content.bytes ?? encoder.encode(text)
    : options.store.get(put.result)!.bytes;
  const upstreamBytes = options.partialTotalBytes ?? fullBytes ??
    bytes.length;
  const summary = summarizeContent(bytes, {
    outline: options.outline,
    ...(lines === undefined ? {} : { lines }),
  });
  const descriptor: Record<string, unknown> = {
    server: short(options.server),
    tool: short(options.tool),
    ...(part.part === "content[0]" ? {} : { part: part.part }),
    ...storedAs(put),
    utf8_bytes: summary.utf8_bytes,
    lines: summary.lines,
    capture,
    ...(capture === "partial" ? { upstream_bytes: upstreamBytes } : {}),
    media_type: summary.media_type,
    preview: summary.preview,
    preview_truncated: summary.preview_truncated,
    ...(summary.outline === undefined ? {} : { outline: summary.outline }),
    ...readBack(put),
  };
  return offloaded(put, fitDescriptor(descriptor));
}

async function storeMedia(
  part: {
    part: string;
    data: string;
    mediaType: string;
    template: MediaTemplate;
  },
  options: OffloadOptions,
): Promise<{ id?: string; descriptor: Record<string, unknown> }> {
  const ascii = /^[A-Za-z0-9+/=\s]*$/.test(part.data.slice(0, 4096));
  const text = ascii ? part.data : wellFormed(part.data);
  const note = options.note?.(part.part, part.template);
  const put = await options.store.put(text, {
    origin: origin(options, part.part),
    capture: "complete",
    ...(note === undefined ? {} : { note }),
  });
  const descriptor: Record<string, unknown> = {
    server: short(options.server),
    tool: short(options.tool),
    part: part.part,
    ...storedAs(put),
    bytes: base64Bytes(part.data),
    capture: "complete",
    media_type: cutUtf8(part.mediaType, 128).text,
    ...readBack(put),
  };
  return offloaded(put, descriptor);
}

/** The result a put stored and its digest, as a descriptor names them. */
function storedAs(put: ResultDescriptor): Record<string, unknown> {
  return {
    ...(put.result === undefined ? {} : { result: put.result }),
    ...(put.sha256 === undefined ? {} : { sha256: put.sha256 }),
  };
}

/** How to read the result back, or why it is not available, at a descriptor's end. */
function readBack(put: ResultDescriptor): Record<string, unknown> {
  return {
    ...(put.reference === undefined ? {} : { reference: put.reference }),
    ...(put.result_unavailable === undefined
      ? {}
      : { result_unavailable: put.result_unavailable }),
  };
}

/** A part offloaded by `put`: its result id (when stored) and its descriptor. */
function offloaded(
  put: ResultDescriptor,
  descriptor: Record<string, unknown>,
): { id?: string; descriptor: Record<string, unknown> } {
  return {
    ...(put.result === undefined ? {} : { id: put.result }),
    descriptor,
  };
}

function mediaOf(
  block: ContentBlock,
):
  | { data: string; mediaType: string; template: MediaTemplate }
  | undefined {
  if (
    (block.type === "image" || block.type === "audio") &&
    typeof block.data === "string"
  ) {
    const { data, ...rest } = block;
    return {
      data,
      mediaType: typeof block.mimeType === "string"
        ? block.mimeType
        : "application/octet-stream",
      template: { block: small(rest), field: "data" },
    };
  }
  if (
    block.type === "resource" && isPlainObject(block.resource) &&
    typeof (block.resource as ContentBlock).blob === "string"
  ) {
    const { blob, ...resource } = block.resource as ContentBlock;
    return {
      data: blob as string,
      mediaType: typeof resource.mimeType === "string"
        ? resource.mimeType
        : "application/octet-stream",
      template: {
        block: { ...block, resource: small(resource) },
        field: "resource.blob",
      },
    };
  }
  return undefined;
}

/** A block template kept only when small (hostile fields can be huge). */
function small(block: ContentBlock): ContentBlock {
  if (JSON.stringify(block).length <= 4096) return block;
  const out: ContentBlock = {};
  for (const key of ["type", "mimeType", "uri"]) {
    const value = block[key];
    if (typeof value === "string" && value.length <= 1024) out[key] = value;
  }
  return out;
}

/**
 * The original content block of a stored media result.
 *
 * @param template The remembered block.
 * @param data The stored base64 text.
 * @returns The block with its data back in place.
 *
 * @example
 * ```ts
 * import { mediaBlock } from "./offload.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   mediaBlock({ block: { type: "image", mimeType: "image/png" }, field: "data" }, "AAAA"),
 *   { type: "image", mimeType: "image/png", data: "AAAA" },
 * );
 * ```
 */
export function mediaBlock(
  template: MediaTemplate,
  data: string,
): ContentBlock {
  if (template.field === "data") return { ...template.block, data };
  const resource = (template.block.resource ?? {}) as ContentBlock;
  return { ...template.block, resource: { ...resource, blob: data } };
}

/** A lower bound of the serialized size when large, else the exact size. */
function measure(
  result: Record<string, unknown>,
  options: OffloadOptions,
): number {
  let chars = 0;
  if (Array.isArray(result.content)) {
    for (const block of result.content) {
      if (!isPlainObject(block)) continue;
      const b = block as ContentBlock;
      if (typeof b.text === "string") chars += b.text.length;
      if (b.text instanceof LargeText) chars += b.text.byteLength;
      if (typeof b.data === "string") chars += b.data.length;
    }
  }
  if (isPlainObject(result.structuredContent)) {
    for (const value of Object.values(result.structuredContent as object)) {
      if (value instanceof LargeText) chars += value.byteLength;
    }
  }
  // A string of n UTF-16 units takes at least n bytes serialized.
  if (chars > options.offloadBytes) return chars;
  return encoder.encode(JSON.stringify(result)).length;
}

function withoutPartialMark(
  result: Record<string, unknown>,
): Record<string, unknown> {
  if (!isPlainObject(result._meta)) return result;
  const meta = { ...(result._meta as Record<string, unknown>) };
  if (!("loom/partial" in meta)) return result;
  delete meta["loom/partial"];
  delete meta["loom/partial_total_bytes"];
  const out = { ...result };
  if (Object.keys(meta).length === 0) delete out._meta;
  else out._meta = meta;
  return out;
}

function origin(options: OffloadOptions, part: string): string {
  return `${short(options.server)}/${short(options.tool)} ${part}`;
}

function short(text: string): string {
  return cutUtf8(wellFormed(text), 128).text;
}

function wellFormed(text: string): string {
  return text.isWellFormed() ? text : text.toWellFormed();
}

/**
 * The decoded size of base64 text.
 *
 * @param data The base64 text.
 * @returns How many bytes it decodes to.
 */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const pad = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(clean.length * 3 / 4) - pad);
}
