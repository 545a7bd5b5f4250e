/**
 * What a descriptor says about a stored text, for every face that offloads
 * one (the gateway, the SDK adapters): its size, line count, media type, a
 * preview of at most 1,024 bytes on a character boundary, and for JSON an
 * outline; and the rule that keeps a whole descriptor within 2 KiB
 * (wire-formats.md "Gateway descriptor").
 *
 * @module
 */
import { cutUtf8, previewOf } from "../store/preview.ts";
import { jsonOutline } from "./outline.ts";

/** The largest descriptor, in UTF-8 bytes of its JSON. */
export const DESCRIPTOR_MAX_BYTES = 2048;

/** The fields of a descriptor that describe the stored text itself. */
export interface ContentSummary {
  /** Size in UTF-8 bytes. */
  readonly utf8_bytes: number;
  /** Line count, as a `lines` selection counts them. */
  readonly lines: number;
  /** `application/json` when the text is one strict JSON document. */
  readonly media_type: "application/json" | "text/plain";
  /** The head, at most 1,024 bytes, cut on a character boundary. */
  readonly preview: string;
  /** Whether the preview leaves out part of the text. */
  readonly preview_truncated: boolean;
  /** For JSON, its outline (at most 1 KiB). */
  readonly outline?: string;
}

/** Options of {@linkcode summarizeContent}. */
export interface SummaryOptions {
  /** The line count, when the caller already has it. */
  readonly lines?: number;
  /** The outline function (default `jsonOutline`; a stub skips the scan). */
  readonly outline?: (bytes: Uint8Array) => string | undefined;
}

/**
 * Summarizes stored UTF-8 bytes for a descriptor.
 *
 * @param bytes The stored text.
 * @param options A known line count, another outline function.
 * @returns Size, lines, media type, preview and outline.
 *
 * @example
 * ```ts
 * import { summarizeContent } from "./descriptor_fields.ts";
 * import assert from "node:assert/strict";
 * const summary = summarizeContent(new TextEncoder().encode('[{"a": 1}]\n'));
 * assert.equal(summary.media_type, "application/json");
 * assert.equal(summary.outline, "array[1] of object{a: number}");
 * assert.equal(summary.lines, 1);
 * ```
 */
export function summarizeContent(
  bytes: Uint8Array,
  options: SummaryOptions = {},
): ContentSummary {
  const outline = (options.outline ?? jsonOutline)(bytes);
  const head = previewOf(bytes, "complete");
  return {
    utf8_bytes: bytes.length,
    lines: options.lines ?? countLines(bytes),
    media_type: outline === undefined ? "text/plain" : "application/json",
    preview: head.preview,
    preview_truncated: head.preview_truncated,
    ...(outline === undefined ? {} : { outline }),
  };
}

/**
 * Lines as a `lines` selection counts them: one per `\n`, plus an
 * unterminated last line.
 *
 * @param bytes UTF-8 text.
 * @returns The line count; 0 for no bytes.
 */
export function countLines(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  let lines = 0;
  for (
    let at = bytes.indexOf(0x0a);
    at !== -1;
    at = bytes.indexOf(0x0a, at + 1)
  ) {
    lines += 1;
  }
  return bytes[bytes.length - 1] === 0x0a ? lines : lines + 1;
}

/**
 * Keeps a descriptor within {@linkcode DESCRIPTOR_MAX_BYTES}: its `outline`
 * shrinks first (or goes, below 64 bytes), then its `preview`, which is
 * then marked `preview_truncated`. Changes the descriptor in place.
 *
 * @param descriptor A descriptor with `preview` and maybe `outline`.
 * @returns The same descriptor.
 */
export function fitDescriptor<T extends Record<string, unknown>>(
  descriptor: T,
): T {
  const fields = descriptor as Record<string, unknown>;
  const size = () => encoder.encode(JSON.stringify(fields)).length;
  let over = size() - DESCRIPTOR_MAX_BYTES;
  if (over <= 0) return descriptor;
  if (typeof fields.outline === "string") {
    const outline = fields.outline;
    const keep = encoder.encode(outline).length - over - 16;
    if (keep < 64) delete fields.outline;
    else fields.outline = `${cutUtf8(outline, keep).text}…`;
    over = size() - DESCRIPTOR_MAX_BYTES;
  }
  if (typeof fields.preview !== "string") return descriptor;
  let budget = encoder.encode(fields.preview).length;
  while (over > 0 && budget > 0) {
    budget = Math.max(0, Math.min(budget - over, Math.floor(budget / 2)));
    fields.preview = cutUtf8(fields.preview as string, budget).text;
    fields.preview_truncated = true;
    over = size() - DESCRIPTOR_MAX_BYTES;
  }
  return descriptor;
}

const encoder = new TextEncoder();
