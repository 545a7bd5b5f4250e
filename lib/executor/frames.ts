/**
 * Length-prefixed frames for the executor's byte channels (the sandboxed
 * subprocess's stdin and stdout). A frame is an 8-byte prefix — the
 * header's length and the body's length, both 32-bit big-endian — then the
 * header, JSON in UTF-8, then the body: the raw bytes of every
 * `Uint8Array` in the message, which the header names by offset and length
 * (`{"$b": [offset, length]}`). File contents therefore cross as bytes,
 * never escaped into JSON, and the reader copies each byte it receives
 * exactly once into the frame it belongs to: no byte is scanned twice,
 * whatever the size of the chunks it arrives in.
 *
 * Both functions are self-contained (no references outside their bodies):
 * the relay inside the sandbox embeds their source text, and so does
 * `run_code`'s runtime (`lib/code/`), whose frames are hostile: its reader
 * caps the body as well as the header.
 *
 * @module
 */

/** Counts the work a frame reader does; tests inject one. */
export interface FrameCounter {
  /** Passes over a received chunk (or part of one). */
  scans: number;
  /** Bytes examined or copied. */
  bytes: number;
}

/**
 * The pieces of one frame: the prefix and header first, then each byte
 * array of the message as it is (not copied). Write them in order.
 */
export function encodeFrame(message: unknown): Uint8Array[] {
  const bodies: Uint8Array[] = [];
  let offset = 0;
  const header = JSON.stringify(message, (_key, value) => {
    if (value instanceof Uint8Array) {
      bodies.push(value);
      const at = offset;
      offset += value.length;
      return { $b: [at, value.length] };
    }
    return value;
  });
  const head = new TextEncoder().encode(header);
  if (offset > 0xffffffff || head.length > 0xffffffff) {
    throw new RangeError("Cannot frame a message of 4 GiB or more");
  }
  const first = new Uint8Array(8 + head.length);
  const view = new DataView(first.buffer);
  view.setUint32(0, head.length);
  view.setUint32(4, offset);
  first.set(head, 8);
  return [first, ...bodies];
}

/**
 * A reader of frames from a stream of chunks: `push` each chunk as it
 * arrives; `onFrame` gets each complete message (byte arrays as views into
 * one buffer, which is also passed, e.g. to transfer it). Throws a
 * `RangeError` for a header larger than `maxHeaderBytes` or a body larger
 * than `maxBodyBytes`, before any of it is allocated, and whatever
 * `JSON.parse` or a fatal `TextDecoder` throws for a malformed header.
 */
export function frameReader(
  onFrame: (message: unknown, buffer: ArrayBuffer) => void,
  maxHeaderBytes: number,
  counter?: { scans: number; bytes: number },
  maxBodyBytes: number = 0xffffffff,
): (chunk: Uint8Array) => void {
  const prefix = new Uint8Array(8);
  let prefixFill = 0;
  let frame: Uint8Array<ArrayBuffer> | null = null;
  let headLength = 0;
  let fill = 0;
  const decoder = new TextDecoder("utf-8", { fatal: true });
  function finish(done: Uint8Array<ArrayBuffer>): void {
    const body = done.subarray(headLength);
    const text = decoder.decode(done.subarray(0, headLength));
    const message = JSON.parse(text, (_key, value) => {
      if (
        value !== null && typeof value === "object" && !Array.isArray(value) &&
        Array.isArray(value.$b) && Object.keys(value).length === 1
      ) {
        const [at, length] = value.$b;
        return body.subarray(at, at + length);
      }
      return value;
    });
    onFrame(message, done.buffer);
  }
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      if (counter !== undefined) counter.scans += 1;
      if (frame === null) {
        const take = Math.min(8 - prefixFill, chunk.length - at);
        prefix.set(chunk.subarray(at, at + take), prefixFill);
        if (counter !== undefined) counter.bytes += take;
        prefixFill += take;
        at += take;
        if (prefixFill < 8) return;
        const view = new DataView(prefix.buffer);
        headLength = view.getUint32(0);
        const bodyLength = view.getUint32(4);
        if (headLength > maxHeaderBytes) {
          throw new RangeError(
            `A frame's header of ${headLength} bytes exceeds ${maxHeaderBytes}`,
          );
        }
        if (bodyLength > maxBodyBytes) {
          throw new RangeError(
            `A frame's body of ${bodyLength} bytes exceeds ${maxBodyBytes}`,
          );
        }
        frame = new Uint8Array(headLength + bodyLength);
        fill = 0;
        prefixFill = 0;
      }
      const take = Math.min(frame.length - fill, chunk.length - at);
      frame.set(chunk.subarray(at, at + take), fill);
      if (counter !== undefined) counter.bytes += take;
      fill += take;
      at += take;
      if (fill === frame.length) {
        const done = frame;
        frame = null;
        finish(done);
      }
    }
  };
}
