/**
 * Preview windows of stored results: at most 1,024 bytes, cut on a UTF-8
 * character boundary, the head of complete results and the tail of partial
 * ones (test output keeps its end).
 *
 * @module
 */
import { ceilCharBoundary, floorCharBoundary } from "./utf8.ts";

/** Largest preview, in UTF-8 bytes (wire-formats.md "Result descriptor"). */
export const PREVIEW_MAX_BYTES = 1024;

/** A preview window and its text. */
export interface Preview {
  preview: string;
  preview_truncated: boolean;
  preview_start_byte: number;
  preview_end_byte: number;
}

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Cuts the preview of valid UTF-8 content.
 *
 * @param bytes Valid UTF-8 content.
 * @param capture `complete` keeps the head, `partial` the tail.
 * @param maxBytes Largest preview in bytes.
 * @returns The preview text and its byte window.
 */
export function previewOf(
  bytes: Uint8Array,
  capture: "complete" | "partial",
  maxBytes: number = PREVIEW_MAX_BYTES,
): Preview {
  const size = bytes.length;
  let start = 0;
  let end = size;
  if (size > maxBytes) {
    if (capture === "complete") {
      end = floorCharBoundary(bytes, maxBytes);
    } else {
      start = ceilCharBoundary(bytes, size - maxBytes);
    }
  }
  return {
    preview: decoder.decode(bytes.subarray(start, end)),
    preview_truncated: end - start < size,
    preview_start_byte: start,
    preview_end_byte: end,
  };
}

/**
 * Cuts a string to at most `maxBytes` UTF-8 bytes on a character boundary.
 *
 * @param text Any well-formed string.
 * @param maxBytes Largest length in UTF-8 bytes.
 * @returns The cut text and whether anything was cut.
 */
export function cutUtf8(
  text: string,
  maxBytes: number,
): { text: string; truncated: boolean } {
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return { text, truncated: false };
  const end = floorCharBoundary(bytes, maxBytes);
  return { text: decoder.decode(bytes.subarray(0, end)), truncated: true };
}
