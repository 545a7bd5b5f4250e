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
 * hashing it while it is written. Write with {@linkcode Utf8Builder.append},
 * or into {@linkcode Utf8Builder.room}'s buffer from
 * {@linkcode Utf8Builder.length} on, then {@linkcode Utf8Builder.commit}.
 *
 * @example Build, then store without a copy
 * ```ts
 * import { ResultStore, Utf8Builder } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const builder = new Utf8Builder(1024);
 * builder.append(new TextEncoder().encode("héllo "));
 * const buffer = builder.room(5);
 * buffer.set(new TextEncoder().encode("world"), builder.length);
 * builder.commit(builder.length + 5);
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
  readonly #view: Uint8Array;
  readonly #hash: Hash = createHash("sha256");
  #length = 0;
  #hashed = 0;
  #checked = 0;
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
    // A length-tracking view: it follows the buffer as it grows.
    this.#view = new Uint8Array(this.#buffer);
  }

  /** Bytes written so far (committed). */
  get length(): number {
    return this.#length;
  }

  /**
   * The buffer, with room for `n` more bytes from {@linkcode Utf8Builder.length}
   * on (it grows in place; the same view is returned every time).
   *
   * @param n How many bytes the caller may write.
   * @returns The whole buffer; write at `length` and on, then commit.
   * @throws {RangeError} When the content would pass `maxBytes`, or the
   *   builder is finished.
   */
  room(n: number): Uint8Array {
    this.#open();
    const need = this.#length + n;
    if (need > this.#buffer.byteLength) {
      if (need > this.#max) {
        throw new RangeError(
          `Cannot build UTF-8 content: ${need} bytes pass the limit of ${this.#max}`,
        );
      }
      const grown = this.#buffer.byteLength;
      this.#buffer.resize(
        Math.min(this.#max, Math.max(need, grown + (grown >>> 1), STEP)),
      );
    }
    return this.#view;
  }

  /**
   * Marks the bytes written into {@linkcode Utf8Builder.room}'s buffer up to
   * `end` as content; they are checked and hashed a step at a time.
   *
   * @param end The new length.
   * @throws {RangeError} When `end` is before the length or past the room.
   */
  commit(end: number): void {
    this.#open();
    if (
      !Number.isSafeInteger(end) || end < this.#length ||
      end > this.#buffer.byteLength
    ) {
      throw new RangeError(
        `Cannot commit up to byte ${end}: the content holds ${this.#length} bytes and room for ${this.#buffer.byteLength}`,
      );
    }
    this.#length = end;
    if (end - this.#hashed >= STEP) this.#digest(false);
  }

  /**
   * Appends bytes (copied).
   *
   * @param bytes The bytes.
   * @throws {RangeError} When the content would pass `maxBytes`.
   */
  append(bytes: Uint8Array): void {
    this.room(bytes.length).set(bytes, this.#length);
    this.commit(this.#length + bytes.length);
  }

  /**
   * Drops an incomplete UTF-8 sequence at the end (content cut short
   * mid-character keeps its whole characters).
   */
  dropIncompleteTail(): void {
    this.#open();
    this.#length = completeEnd(this.#view, this.#checked, this.#length);
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
    this.#digest(true);
    this.#finished = true;
    if (this.#invalidAt !== -1) {
      throw new InvalidUtf8Error(
        "invalid_utf8",
        `Cannot build UTF-8 content: byte ${this.#invalidAt} starts an invalid UTF-8 sequence`,
        { offset: this.#invalidAt },
      );
    }
    // Give back the room not used; the content keeps a fixed-length view.
    this.#buffer.resize(this.#length);
    const content = Object.freeze({
      bytes: new Uint8Array(this.#buffer, 0, this.#length),
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

  #digest(last: boolean): void {
    if (this.#invalidAt !== -1) return;
    // Checked up to the last whole character (the rest may still be
    // arriving), and hashed only as far as checked, so an incomplete tail
    // can still be dropped.
    const end = last
      ? this.#length
      : completeEnd(this.#view, this.#checked, this.#length);
    const bad = firstInvalidUtf8(this.#view.subarray(this.#checked, end));
    if (bad !== -1) {
      this.#invalidAt = this.#checked + bad;
      return;
    }
    this.#checked = end;
    if (end > this.#hashed) {
      this.#hash.update(this.#view.subarray(this.#hashed, end));
      this.#hashed = end;
    }
  }
}

/** `end`, or the start of an incomplete sequence that ends the bytes. */
function completeEnd(bytes: Uint8Array, from: number, end: number): number {
  // The last lead byte within three bytes of the end.
  let lead = end - 1;
  while (lead >= from && lead > end - 4 && (bytes[lead]! & 0xc0) === 0x80) {
    lead--;
  }
  if (lead < from) return end;
  const b = bytes[lead]!;
  const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + size > end ? lead : end;
}
