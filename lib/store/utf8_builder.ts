/**
 * UTF-8 content built once, as it streams in. {@linkcode Utf8Builder}
 * grows one buffer in place (a resizable `ArrayBuffer`: growing it copies
 * nothing), and checks and hashes what is written in steps of 1 MiB while
 * the rest is still arriving. {@linkcode Utf8Builder.finish} hands over a
 * {@linkcode DigestedUtf8}, which `ResultStore.put` keeps as it is: no copy,
 * no second check, no second hash. Only a builder can make one, so its
 * digest always belongs to its bytes.
 *
 * @module
 */
import { createHash, type Hash } from "node:crypto";
import { firstInvalidUtf8, InvalidUtf8Error } from "./utf8.ts";

/** Well-formed UTF-8 bytes and their SHA-256, made by a {@linkcode Utf8Builder}. */
export interface DigestedUtf8 {
  /** The content; the builder gave it up, nothing writes to it any more. */
  readonly bytes: Uint8Array;
  /** SHA-256 of `bytes`, lowercase hex. */
  readonly sha256: string;
}

/** Work is done in steps of this many bytes, while the content streams in. */
const STEP = 1 << 20;
/** Content up to this size is handed over in a plain (not resizable) buffer. */
const PLAIN_BYTES = 4 * STEP;
/** The largest buffer a builder grows to (the longest typed array). */
const MAX_CAPACITY = 2 ** 32 - 1;
const made = new WeakSet<object>();

/**
 * Whether `value` was made by {@linkcode Utf8Builder.finish} (a look-alike
 * object is not: its digest was not computed here).
 *
 * @param value Anything.
 * @returns `true` for a builder's {@linkcode DigestedUtf8}.
 *
 * @example
 * ```ts
 * import { isDigestedUtf8, Utf8Builder } from "./utf8_builder.ts";
 * import assert from "node:assert/strict";
 * const builder = new Utf8Builder(16);
 * builder.append(new TextEncoder().encode("hi"));
 * assert.ok(isDigestedUtf8(builder.finish()));
 * assert.ok(!isDigestedUtf8({ bytes: new Uint8Array(), sha256: "0".repeat(64) }));
 * ```
 */
export function isDigestedUtf8(value: unknown): value is DigestedUtf8 {
  return typeof value === "object" && value !== null && made.has(value);
}

/**
 * Builds UTF-8 content in one buffer that grows in place, checking and
 * hashing it while it is appended. Only bulk operations touch that buffer
 * (a resizable buffer's elements are slow to reach one by one): each piece
 * is checked where the caller made it, then copied in.
 *
 * @example Build, then store without a copy
 * ```ts
 * import { ResultStore, Utf8Builder } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const builder = new Utf8Builder(1024);
 * const bytes = new TextEncoder().encode("héllo world");
 * builder.append(bytes.subarray(0, 2)); // "h" and half of "é"
 * builder.append(bytes.subarray(2));
 * const content = builder.finish();
 * assert.equal(new TextDecoder().decode(content.bytes), "héllo world");
 * const store = new ResultStore();
 * const descriptor = await store.put(content, { origin: "stream", capture: "complete" });
 * assert.equal(descriptor.sha256, content.sha256);
 * assert.equal(store.get(descriptor.result!)!.bytes, content.bytes);
 * ```
 */
export class Utf8Builder {
  readonly #max: number;
  readonly #buffer: ArrayBuffer;
  readonly #hash: Hash = createHash("sha256");
  #length = 0;
  #hashed = 0;
  /** The start of an incomplete sequence that ends the content, or `#length`. */
  #complete = 0;
  #invalidAt = -1;
  #finished = false;

  /**
   * An empty builder.
   *
   * @param maxBytes The most bytes it may hold.
   * @throws {RangeError} When `maxBytes` is not a whole number from 0 to
   *   2^32 − 1.
   */
  constructor(maxBytes: number) {
    if (
      !Number.isSafeInteger(maxBytes) || maxBytes < 0 ||
      maxBytes > MAX_CAPACITY
    ) {
      throw new RangeError(
        `Cannot build UTF-8 content: maxBytes must be a whole number from 0 to ${MAX_CAPACITY}`,
      );
    }
    this.#max = maxBytes;
    this.#buffer = new ArrayBuffer(Math.min(maxBytes, 64 * 1024), {
      maxByteLength: maxBytes,
    });
  }

  /** Bytes appended so far. */
  get length(): number {
    return this.#length;
  }

  /**
   * Appends bytes (copied). A character may be split between two pieces.
   *
   * @param bytes The bytes.
   * @throws {RangeError} When the content would pass `maxBytes`, or the
   *   builder is finished.
   */
  append(bytes: Uint8Array): void {
    this.#open();
    const n = bytes.length;
    const end = this.#length + n;
    if (end > this.#buffer.byteLength) {
      if (end > this.#max) {
        throw new RangeError(
          `Cannot build UTF-8 content: ${end} bytes pass the limit of ${this.#max}`,
        );
      }
      const size = this.#buffer.byteLength;
      this.#buffer.resize(
        Math.min(this.#max, Math.max(end, size + (size >>> 1), STEP)),
      );
    }
    new Uint8Array(this.#buffer, this.#length, n).set(bytes);
    if (this.#invalidAt === -1) this.#check(bytes);
    this.#length = end;
    if (this.#complete - this.#hashed >= STEP) this.#digest();
  }

  /**
   * Drops an incomplete UTF-8 sequence at the end (content cut short
   * mid-character keeps its whole characters).
   */
  dropIncompleteTail(): void {
    this.#open();
    if (this.#invalidAt === -1) this.#length = this.#complete;
  }

  /**
   * Ends the content: checks and hashes the rest and hands over the bytes.
   * The builder cannot be used afterwards.
   *
   * @returns The content and its digest.
   * @throws {InvalidUtf8Error} When the content is not well-formed UTF-8.
   */
  finish(): DigestedUtf8 {
    this.#open();
    this.#finished = true;
    if (this.#invalidAt === -1 && this.#complete < this.#length) {
      this.#invalidAt = this.#complete;
    }
    if (this.#invalidAt !== -1) {
      throw new InvalidUtf8Error(
        "invalid_utf8",
        `Cannot build UTF-8 content: byte ${this.#invalidAt} starts an invalid UTF-8 sequence`,
        { offset: this.#invalidAt },
      );
    }
    this.#digest();
    // Content of a few MiB is copied to a plain buffer (V8 reaches a
    // resizable buffer's elements more slowly, and stored content is scanned
    // again); larger content keeps its buffer, cut to its length.
    let bytes: Uint8Array;
    if (this.#length <= PLAIN_BYTES) {
      bytes = new Uint8Array(this.#buffer, 0, this.#length).slice();
    } else {
      this.#buffer.resize(this.#length);
      bytes = new Uint8Array(this.#buffer, 0, this.#length);
    }
    const content = Object.freeze({
      bytes,
      sha256: this.#hash.digest("hex"),
    });
    made.add(content);
    return content;
  }

  #open(): void {
    if (this.#finished) {
      throw new RangeError("Cannot use a finished Utf8Builder");
    }
  }

  /** Checks a piece appended at `#length`, the end of the last one first. */
  #check(bytes: Uint8Array): void {
    let from = 0;
    const pending = this.#length - this.#complete;
    if (pending > 0) {
      // The last piece ended mid-character: check that character whole.
      const head = new Uint8Array(this.#buffer, this.#complete, pending)
        .slice();
      const size = sequenceSize(head[0]!);
      const need = Math.min(size - pending, bytes.length);
      const joined = new Uint8Array(pending + need);
      joined.set(head);
      joined.set(bytes.subarray(0, need), pending);
      if (need < size - pending) {
        // Still incomplete: a wrong byte already is wrong.
        if (!prefixValid(joined)) this.#invalidAt = this.#complete;
        return;
      }
      if (firstInvalidUtf8(joined) !== -1) {
        this.#invalidAt = this.#complete;
        return;
      }
      from = need;
    }
    const rest = bytes.subarray(from);
    const end = completeEnd(rest, 0, rest.length);
    const bad = firstInvalidUtf8(rest.subarray(0, end));
    if (bad !== -1) this.#invalidAt = this.#length + from + bad;
    else this.#complete = this.#length + from + end;
  }

  /** Hashes the checked bytes not hashed yet. */
  #digest(): void {
    const end = this.#complete;
    if (end > this.#hashed) {
      this.#hash.update(
        new Uint8Array(this.#buffer, this.#hashed, end - this.#hashed),
      );
      this.#hashed = end;
    }
  }
}

function sequenceSize(lead: number): number {
  return lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
}

/** Whether an incomplete sequence can still become a valid one. */
function prefixValid(prefix: Uint8Array): boolean {
  // Complete it with the smallest continuation bytes that could follow.
  const size = sequenceSize(prefix[0]!);
  for (const last of [0x80, 0xbf]) {
    const whole = new Uint8Array(size).fill(last);
    whole.set(prefix);
    if (firstInvalidUtf8(whole) === -1) return true;
  }
  return false;
}

/** `end`, or the start of an incomplete sequence that ends the bytes. */
function completeEnd(bytes: Uint8Array, from: number, end: number): number {
  // The last lead byte within three bytes of the end.
  let lead = end - 1;
  while (lead >= from && lead > end - 4 && (bytes[lead]! & 0xc0) === 0x80) {
    lead--;
  }
  if (lead < from) return end;
  return lead + sequenceSize(bytes[lead]!) > end ? lead : end;
}
