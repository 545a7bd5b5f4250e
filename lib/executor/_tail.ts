/**
 * Output tails: the last bytes of a stream, decoded on a character boundary.
 *
 * @module
 */

const lossy = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * Decodes the last `maxBytes` bytes of `bytes` as text that starts on a
 * UTF-8 character boundary and whose UTF-8 encoding is at most `maxBytes`
 * long. Invalid sequences become U+FFFD; when that makes the text longer,
 * whole characters are dropped from the front until it fits.
 */
export function decodeTail(bytes: Uint8Array, maxBytes: number): string {
  let start = Math.max(0, bytes.length - maxBytes);
  // Skip continuation bytes of a character cut at the front (at most 3).
  let skipped = 0;
  while (
    start < bytes.length && skipped < 3 &&
    ((bytes[start] as number) & 0xc0) === 0x80
  ) {
    start += 1;
    skipped += 1;
  }
  let text = lossy.decode(bytes.subarray(start));
  let size = encoder.encode(text).length;
  while (size > maxBytes) {
    const first = text.codePointAt(0) as number;
    const width = first > 0xffff ? 2 : 1;
    size -= encoder.encode(text.slice(0, width)).length;
    text = text.slice(width);
  }
  return text;
}
