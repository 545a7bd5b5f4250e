/**
 * One newline-delimited JSON-RPC message, assembled from the chunks of a
 * pipe as they arrive, its large strings taken out on the way.
 *
 * Most of a large MCP answer is one or two strings (a tool's text, and the
 * same text again as `structuredContent`). Decoding the whole line, parsing
 * it, and encoding and hashing the string again once the last byte is in
 * costs about as much as the transfer itself; here the bytes outside those
 * strings (the envelope) are kept as they come, and a string lexeme longer
 * than `largeStringBytes` is unescaped straight into a {@linkcode Utf8Builder}
 * — checked and hashed while the rest still streams in — and replaced in the
 * envelope by a placeholder naming it (with a nonce the upstream cannot
 * know). When the newline arrives only the small envelope is parsed.
 *
 * A large string at a place the caller accepts (see
 * {@linkcode MessageAssembler.end}) is delivered as a {@linkcode LargeText}:
 * its bytes, digest and line count, ready for the store; anywhere else it is
 * decoded back into a string, so the message is exactly what `JSON.parse`
 * of the line gives. A line without a large string is parsed whole, as
 * before. Invalid JSON (a raw control character or a bad escape in a large
 * string, bad UTF-8, an unterminated string) makes the line invalid, as
 * `JSON.parse` would.
 *
 * A line longer than `maxMessageBytes` is kept up to that limit and the rest
 * counted and dropped; its id (from the head, or the tail when it comes
 * last) and the head of its first text are what a partial answer needs.
 *
 * @module
 */
import {
  BACKSLASH,
  INVALID,
  LF,
  MORE,
  QUOTE,
  StringUnescaper,
} from "../../reference/json_string.ts";
import { Utf8Builder } from "../../store/utf8_builder.ts";
import { LargeText } from "./large_text.ts";
import { isPlainObject } from "../../plain_object.ts";

/** A JSON-RPC 2.0 message (checked for its envelope only). */
export type JSONRPCMessage = Record<string, unknown>;

/** Options of {@linkcode MessageAssembler}. */
export interface MessageAssemblerOptions {
  /** The longest line read whole; the rest of a longer one is dropped. */
  readonly maxMessageBytes: number;
  /** A string lexeme longer than this (in bytes) is taken out as it streams in. */
  readonly largeStringBytes: number;
}

/** What {@linkcode MessageAssembler.end} makes of a line. */
export type AssembledLine =
  | { readonly kind: "empty" }
  | { readonly kind: "message"; readonly message: JSONRPCMessage }
  | { readonly kind: "invalid"; readonly bytes: number }
  | {
    readonly kind: "cut";
    /** The request id found at the line's head or tail, if any. */
    readonly id: string | number | undefined;
    /** The head of the answer's first text (or of the line, as JSON text). */
    readonly text: string | LargeText;
    /** The line's full length in bytes. */
    readonly totalBytes: number;
  };

const CR = 0x0d;
const OVERFLOW_TAIL_BYTES = 1024;
const OUTSIDE = 0;
const SMALL = 1;
const LARGE = 2;
const encoder = new TextEncoder();
const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Assembles newline-delimited JSON-RPC messages: {@linkcode MessageAssembler.push}
 * each piece of a line (without its newline), then {@linkcode MessageAssembler.end}.
 *
 * @example
 * ```ts
 * import { MessageAssembler } from "./message_assembler.ts";
 * import { LargeText } from "./large_text.ts";
 * import assert from "node:assert/strict";
 * const lines = new MessageAssembler({ maxMessageBytes: 1 << 20, largeStringBytes: 64 });
 * const text = "line\n".repeat(100);
 * const bytes = new TextEncoder().encode(JSON.stringify({
 *   jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text }] },
 * }));
 * lines.push(bytes.subarray(0, 100));
 * lines.push(bytes.subarray(100));
 * const line = lines.end(() => true);
 * if (line.kind !== "message") throw new Error(line.kind);
 * const result = line.message.result as { content: { text: unknown }[] };
 * const large = result.content[0]!.text;
 * assert.ok(large instanceof LargeText);
 * assert.equal(large.lines, 100);
 * assert.equal(large.text(), text);
 * ```
 */
export class MessageAssembler {
  readonly #max: number;
  readonly #large: number;
  // The line: bytes kept, and past the limit the count and tail of the rest.
  #size = 0;
  #dropped = 0;
  #tail: Uint8Array[] = [];
  #invalid = false;
  // The envelope: the line's bytes with each large string's placeholder.
  #envelope: Uint8Array[] = [];
  #envelopeBytes = 0;
  // The scanner: where it is, and about the string it is in.
  #state = OUTSIDE;
  #stringStart = 0;
  #stringBytes = 0;
  #backslashes = 0;
  #open: LargeString | undefined;
  #texts: LargeText[] = [];
  #nonce = "";

  /**
   * @param options The line limit and the size of a large string.
   */
  constructor(options: MessageAssemblerOptions) {
    this.#max = options.maxMessageBytes;
    this.#large = Math.max(2, options.largeStringBytes);
  }

  /**
   * Takes the next piece of the current line (no newline in it). What is
   * kept of it is copied: the caller may reuse its buffer.
   *
   * @param part The bytes.
   */
  push(part: Uint8Array): void {
    const room = this.#max - this.#size;
    let rest: Uint8Array | undefined;
    if (part.length > room) {
      rest = part.subarray(Math.max(0, room));
      part = part.subarray(0, Math.max(0, room));
    }
    if (part.length > 0) {
      this.#size += part.length;
      if (!this.#invalid) {
        try {
          this.#scan(part);
        } catch {
          // A builder refused the content (bad UTF-8, or past its limit).
          this.#invalid = true;
        }
      }
    }
    if (rest !== undefined && rest.length > 0) {
      this.#dropped += rest.length;
      this.#tail.push(
        rest.slice(Math.max(0, rest.length - OVERFLOW_TAIL_BYTES)),
      );
      if (this.#tail.length > 4) this.#tail = this.#tail.slice(-4);
    }
  }

  /**
   * Ends the current line and makes a message of it; the assembler is ready
   * for the next line.
   *
   * @param keepLarge Whether the large strings of this message may stay
   *   {@linkcode LargeText} at `result.content[i].text` (of a text block) and
   *   directly under `result.structuredContent`; otherwise, and anywhere else,
   *   they are decoded into strings.
   * @returns The message, or why there is none.
   */
  end(keepLarge: (message: Record<string, unknown>) => boolean): AssembledLine {
    try {
      return this.#end(keepLarge);
    } catch {
      // Content a builder refused, or a string too long to decode.
      return { kind: "invalid", bytes: this.#size };
    } finally {
      this.#reset();
    }
  }

  #end(
    keepLarge: (message: Record<string, unknown>) => boolean,
  ): AssembledLine {
    if (this.#invalid) return { kind: "invalid", bytes: this.#size };
    if (this.#dropped > 0) return this.#cut();
    if (this.#state !== OUTSIDE) return { kind: "invalid", bytes: this.#size };
    const bytes = join(this.#envelope, this.#envelopeBytes);
    if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === CR)) {
      return { kind: "empty" };
    }
    let value: unknown;
    try {
      value = JSON.parse(fatal.decode(bytes));
    } catch {
      return { kind: "invalid", bytes: this.#size };
    }
    if (this.#texts.length > 0) value = this.#resolve(value, keepLarge);
    const message = jsonRpcMessage(value);
    if (message === undefined) return { kind: "invalid", bytes: this.#size };
    return { kind: "message", message };
  }

  #reset(): void {
    this.#size = 0;
    this.#dropped = 0;
    this.#tail = [];
    this.#invalid = false;
    this.#envelope = [];
    this.#envelopeBytes = 0;
    this.#state = OUTSIDE;
    this.#stringBytes = 0;
    this.#backslashes = 0;
    this.#open = undefined;
    this.#texts = [];
    this.#nonce = "";
  }

  #scan(part: Uint8Array): void {
    const n = part.length;
    let i = 0;
    // Where the envelope's bytes of this part start.
    let run = 0;
    while (i < n) {
      if (this.#state === LARGE) {
        const end = this.#open!.feed(part, i, n);
        if (end === INVALID) {
          this.#invalid = true;
          return;
        }
        if (end === MORE) return;
        this.#closeLarge();
        i = run = end;
        continue;
      }
      const q = part.indexOf(QUOTE, i);
      if (this.#state === OUTSIDE) {
        if (q === -1) break;
        this.#state = SMALL;
        this.#stringStart = this.#envelopeBytes + (q - run);
        this.#stringBytes = 1;
        this.#backslashes = 0;
        i = q + 1;
        continue;
      }
      // In a string: is the next quote its end, or an escaped quote?
      const stop = q === -1 ? n : q;
      let k = stop;
      while (k > i && part[k - 1] === BACKSLASH) k--;
      const backslashes = stop - k + (k === i ? this.#backslashes : 0);
      this.#stringBytes += stop - i + (q === -1 ? 0 : 1);
      i = q === -1 ? n : q + 1;
      this.#backslashes = q === -1 ? backslashes : 0;
      if (q !== -1 && backslashes % 2 === 0) this.#state = OUTSIDE;
      if (this.#stringBytes > this.#large) {
        // The string leaves the envelope: what was read of it is unescaped
        // into a builder, and the rest goes there as it comes.
        this.#keep(part, run, i);
        run = i;
        const lexeme = this.#cutEnvelope(this.#stringStart);
        const open = new LargeString(this.#max);
        this.#open = open;
        this.#state = LARGE;
        let end: number = MORE;
        for (const [at, piece] of lexeme.entries()) {
          end = open.feed(piece, at === 0 ? 1 : 0, piece.length);
          if (end === INVALID) {
            this.#invalid = true;
            return;
          }
        }
        if (end !== MORE) this.#closeLarge();
      }
    }
    if (this.#state !== LARGE) this.#keep(part, run, n);
  }

  /** Adds `part[from, to)` to the envelope. */
  #keep(part: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    this.#envelope.push(part.slice(from, to));
    this.#envelopeBytes += to - from;
  }

  /** Removes the envelope's bytes from offset `at` on and answers them. */
  #cutEnvelope(at: number): Uint8Array[] {
    const taken: Uint8Array[] = [];
    while (this.#envelopeBytes > at) {
      const last = this.#envelope.pop()!;
      const start = this.#envelopeBytes - last.length;
      if (start >= at) {
        taken.push(last);
        this.#envelopeBytes = start;
      } else {
        this.#envelope.push(last.subarray(0, at - start));
        taken.push(last.subarray(at - start));
        this.#envelopeBytes = at;
      }
    }
    return taken.reverse();
  }

  #closeLarge(): void {
    const text = this.#open!.finish(false);
    this.#open = undefined;
    this.#state = OUTSIDE;
    const placeholder = encoder.encode(
      JSON.stringify(this.#placeholder(this.#texts.length)),
    );
    this.#texts.push(text);
    this.#envelope.push(placeholder);
    this.#envelopeBytes += placeholder.length;
  }

  #placeholder(k: number | "open"): string {
    if (this.#nonce === "") this.#nonce = crypto.randomUUID();
    return `\u0000loom-large:${this.#nonce}:${k}`;
  }

  /** Puts the large strings back: as {@linkcode LargeText} where allowed, else decoded. */
  #resolve(
    root: unknown,
    keepLarge: (message: Record<string, unknown>) => boolean,
  ): unknown {
    const prefix = this.#placeholder(0).slice(0, -1);
    const texts = this.#texts;
    const take = (value: string): LargeText | undefined => {
      if (value.charCodeAt(0) !== 0 || !value.startsWith(prefix)) {
        return undefined;
      }
      return texts[Number(value.slice(prefix.length))];
    };
    // The places a LargeText may stay.
    const result = isPlainObject(root)
      ? (root as JSONRPCMessage).result
      : undefined;
    const keep = isPlainObject(result) && keepLarge(root as JSONRPCMessage);
    const blocks = new Set<unknown>();
    let structured: unknown;
    if (keep) {
      const r = result as Record<string, unknown>;
      if (Array.isArray(r.content)) {
        for (const block of r.content) {
          if (
            isPlainObject(block) &&
            (block as { type?: unknown }).type === "text"
          ) {
            blocks.add(block);
          }
        }
      }
      if (isPlainObject(r.structuredContent)) structured = r.structuredContent;
    }
    const settle = (
      parent: unknown,
      key: string | number,
      large: LargeText,
    ): unknown =>
      (parent === structured || (key === "text" && blocks.has(parent))) &&
        large.byteLength >= this.#large
        ? large
        : large.text();
    const rekey = (object: Record<string, unknown>) => {
      if (!Object.keys(object).some((key) => take(key) !== undefined)) {
        return object;
      }
      return Object.fromEntries(
        Object.entries(object).map((
          [key, value],
        ) => [take(key)?.text() ?? key, value]),
      );
    };
    let top = root;
    if (typeof top === "string") {
      const large = take(top);
      return large === undefined ? top : large.text();
    }
    if (isPlainObject(top)) top = rekey(top as Record<string, unknown>);
    const stack: unknown[] = [top];
    const visit = (
      container: Record<string | number, unknown>,
      key: string | number,
    ) => {
      const value = container[key];
      if (typeof value === "string") {
        const large = take(value);
        if (large !== undefined) container[key] = settle(container, key, large);
      } else if (Array.isArray(value)) stack.push(value);
      else if (isPlainObject(value)) {
        const rekeyed = rekey(value as Record<string, unknown>);
        if (rekeyed !== value) {
          container[key] = rekeyed;
          // A block replaced by its re-keyed copy is no longer a text block.
          blocks.delete(value);
        }
        stack.push(rekeyed);
      }
    };
    while (stack.length > 0) {
      const container = stack.pop() as Record<string | number, unknown>;
      if (Array.isArray(container)) {
        for (let k = 0; k < container.length; k++) visit(container, k);
      } else {
        for (const key of Object.keys(container)) visit(container, key);
      }
    }
    return top;
  }

  /** A line over the limit: its id, and the head of its first text. */
  #cut(): AssembledLine {
    const totalBytes = this.#size + this.#dropped;
    let open: LargeText | undefined;
    if (this.#state === LARGE) {
      // The line was cut in a large string: keep what it held.
      open = this.#open!.finish(true);
      const placeholder = encoder.encode(
        JSON.stringify(this.#placeholder("open")).slice(0, -1),
      );
      this.#envelope.push(placeholder);
      this.#envelopeBytes += placeholder.length;
    }
    const envelope = join(this.#envelope, this.#envelopeBytes);
    const head = lenient.decode(envelope.subarray(0, 65536));
    const tail = lenient.decode(join(this.#tail));
    const id = idOf(head.slice(0, 256), tail);
    const large = (k: string) => k === "open" ? open : this.#texts[Number(k)];
    const prefix = this.#placeholder(0).slice(0, -1);
    const escapedPrefix = JSON.stringify(prefix).slice(1, -1);
    let text: string | LargeText | undefined;
    const first = firstTextAt(head);
    if (first !== undefined) {
      const after = head.slice(first, first + escapedPrefix.length + 8);
      if (after.startsWith(escapedPrefix)) {
        text = large(
          /^[0-9]+|^open/.exec(after.slice(escapedPrefix.length))?.[0] ?? "",
        );
      } else text = firstText(head, first);
    }
    if (text === undefined) {
      // No text to speak of: the head of the line as JSON text, the large
      // strings written back.
      text = lenient.decode(envelope).replace(
        new RegExp(
          `"${escapeRegExp(escapedPrefix)}([0-9]+|open)("?)`,
          "g",
        ),
        (_, k: string, quote: string) => {
          const json = JSON.stringify(large(k)?.text() ?? "");
          return quote === "" ? json.slice(0, -1) : json;
        },
      ).replace(/\uFFFD$/, "");
    }
    return { kind: "cut", id, text, totalBytes };
  }
}

/**
 * A large string being unescaped into a builder as its bytes arrive (by the
 * JSON string lexer the reference scanner uses).
 */
class LargeString {
  readonly #builder: Utf8Builder;
  readonly #unescaper = new StringUnescaper();
  /** Where a piece is unescaped, in place, before it goes to the builder. */
  #scratch = new Uint8Array(64 * 1024);
  #words = new Uint32Array(this.#scratch.buffer);
  /** The start of an escape cut between two pieces. */
  #carry: Uint8Array | undefined;

  constructor(maxBytes: number) {
    this.#builder = new Utf8Builder(Math.min(maxBytes, 2 ** 32 - 1));
  }

  /**
   * Unescapes `src[i, n)` up to the closing quote.
   *
   * @returns The offset in `src` after the closing quote, `MORE` when the
   *   bytes ended first, or `INVALID`.
   */
  feed(src: Uint8Array, i: number, n: number): number {
    const carry = this.#carry;
    const before = carry?.length ?? 0;
    const size = before + n - i;
    if (size > this.#scratch.length) {
      this.#scratch = new Uint8Array(size + 3 & ~3);
      this.#words = new Uint32Array(this.#scratch.buffer);
    }
    if (carry !== undefined) this.#scratch.set(carry);
    this.#carry = undefined;
    this.#scratch.set(src.subarray(i, n), before);
    const unescaper = this.#unescaper;
    const end = unescaper.run(
      this.#scratch,
      this.#words,
      size,
      this.#builder.length,
    );
    if (end === INVALID) return INVALID;
    if (unescaper.carry >= 0) {
      this.#carry = this.#scratch.slice(unescaper.carry, size);
    }
    this.#builder.append(this.#scratch.subarray(0, unescaper.written));
    return end < 0 ? end : i + end - before;
  }

  /** The content; a cut one loses an escape or character left incomplete. */
  finish(cut: boolean): LargeText {
    const builder = this.#builder;
    if (cut) builder.dropIncompleteTail();
    const content = builder.finish();
    const size = content.bytes.length;
    const last = size > 0 && content.bytes.at(-1) !== LF ? 1 : 0;
    const all = this.#unescaper.lone;
    const lone = all.filter((_, k) => all[k - (k % 2)]! + 3 <= size);
    return new LargeText(content, this.#unescaper.newlines + last, lone);
  }
}

/** The value as a JSON-RPC 2.0 message, or `undefined` when it is not one. */
function jsonRpcMessage(value: unknown): JSONRPCMessage | undefined {
  if (!isPlainObject(value)) return undefined;
  const m = value as Record<string, unknown>;
  const id = typeof m.id === "string" || typeof m.id === "number";
  const ok = m.jsonrpc === "2.0" && (
    (typeof m.method === "string" && (m.id === undefined || id)) ||
    (id && ("result" in m || "error" in m))
  );
  return ok ? m : undefined;
}

function join(parts: readonly Uint8Array[], size?: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(
    size ?? parts.reduce((n, part) => n + part.length, 0),
  );
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The request id of a JSON-RPC answer from its head (id first) or tail (id last). */
function idOf(head: string, tail: string): string | number | undefined {
  const value = String.raw`(-?[0-9]{1,15}|"(?:[^"\\]|\\.){0,200}")`;
  const first = new RegExp(
    String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}`,
  ).exec(head);
  const last = new RegExp(String.raw`"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  const raw = first?.[1] ?? last?.[1];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as string | number;
  } catch {
    return undefined;
  }
}

/** Where the first `"content":[{…"text":"` string's body starts in a head. */
function firstTextAt(head: string): number | undefined {
  const match = /"content"\s*:\s*\[\s*\{[^{}]{0,512}?"text"\s*:\s*"/.exec(
    head.slice(0, 65536),
  );
  return match === null ? undefined : match.index + match[0].length;
}

/** The decoded head of the string whose body starts at `from` in a cut head. */
function firstText(head: string, from: number): string | undefined {
  // The string ends at the first quote not escaped, or at the cut.
  let end = from;
  while (end < head.length) {
    const c = head.charCodeAt(end);
    if (c === 0x22) break;
    end += c === 0x5c ? 2 : 1;
  }
  let body = head.slice(from, Math.min(end, head.length));
  // Drop an escape the cut left unfinished, and a replaced cut character.
  body = body.replace(/\\(u[0-9a-fA-F]{0,3})?$/, "").replace(/\uFFFD$/, "");
  try {
    const text = JSON.parse(`"${body}"`) as string;
    // A pair the cut split leaves a lone high surrogate: not UTF-8.
    return /[\uD800-\uDBFF]$/.test(text) ? text.slice(0, -1) : text;
  } catch {
    return undefined;
  }
}
