/**
 * The gateway's client transport to a stdio upstream: it starts the program
 * and reads newline-delimited JSON-RPC from its standard output linearly.
 * The SDK's own stdio client copies its whole buffer on every chunk (a
 * 40 MB answer costs seconds of copying) and closes the connection on any
 * message over 10 MiB; this one keeps the chunks of a line in a list, joins
 * them once when the newline arrives, and accepts lines up to
 * `maxMessageBytes`. A longer line is kept up to that limit, the rest is
 * read and dropped, and the answer is delivered as a partial result: its
 * first text's head, marked with `_meta["loom/partial"]` set to this
 * transport's unguessable nonce (an upstream cannot forge the mark). A line
 * that is not JSON-RPC is reported to `onerror` and skipped. The last lines
 * of the program's standard error are kept for failure messages.
 *
 * @module
 */
/** A JSON-RPC 2.0 message (checked for its envelope only). */
export type JSONRPCMessage = Record<string, unknown>;

/** The SDK's `Transport` contract, as the gateway's transports meet it. */
export interface Transport {
  /** Starts the transport. */
  start(): Promise<void>;
  /** Sends one message. */
  send(message: JSONRPCMessage, options?: unknown): Promise<void>;
  /** Closes the transport. */
  close(): Promise<void>;
  /** Called for each message read. */
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called on an error. */
  onerror?: (error: Error) => void;
  /** Called once on close. */
  onclose?: () => void;
}

/** Options of {@linkcode LinearStdioTransport}. */
export interface LinearStdioOptions {
  /** The program. */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** Its whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Its working folder. */
  readonly cwd?: string;
  /** The longest line read whole (default 64 MiB). */
  readonly maxMessageBytes?: number;
}

/** The `_meta` key that marks an answer cut at `maxMessageBytes`. */
export const PARTIAL_META_KEY = "loom/partial";

const STDERR_TAIL_BYTES = 4096;
const OVERFLOW_TAIL_BYTES = 1024;
const NEWLINE = 0x0a;

/**
 * An MCP client transport over a child process's stdio with a linear reader.
 *
 * @example
 * ```ts
 * import { LinearStdioTransport } from "./linear_stdio_transport.ts";
 * import assert from "node:assert/strict";
 * const transport = new LinearStdioTransport({
 *   command: Deno.execPath(),
 *   args: ["eval", "console.log(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/hello' }))"],
 *   env: {},
 * });
 * const { promise, resolve } = Promise.withResolvers<unknown>();
 * transport.onmessage = resolve;
 * await transport.start();
 * assert.deepEqual(await promise, { jsonrpc: "2.0", method: "notifications/hello" });
 * await transport.close();
 * ```
 */
export class LinearStdioTransport implements Transport {
  /** Called for each message read. */
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called when a line cannot be used or the program fails. */
  onerror?: (error: Error) => void;
  /** Called once when the program's output ends or the transport closes. */
  onclose?: () => void;
  /** The nonce of `_meta["loom/partial"]` on this transport's cut answers. */
  readonly partialNonce: string = crypto.randomUUID();
  readonly #options: LinearStdioOptions;
  readonly #max: number;
  #child: Deno.ChildProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #stderr: Uint8Array[] = [];
  #stderrBytes = 0;
  #closed = false;
  #garbage = 0;
  #exit: Deno.CommandStatus | undefined;
  #done: Promise<void> = Promise.resolve();

  /**
   * Prepares the transport; {@linkcode LinearStdioTransport.start} starts the program.
   *
   * @param options The program and the line limit.
   */
  constructor(options: LinearStdioOptions) {
    this.#options = options;
    this.#max = options.maxMessageBytes ?? 64 * 1024 * 1024;
  }

  /**
   * Starts the program and its readers.
   *
   * @throws {Error} When the program cannot be started (not found, not
   *   executable), with the reason.
   */
  start(): Promise<void> {
    const { command, args, env, cwd } = this.#options;
    try {
      this.#child = new Deno.Command(command, {
        args: [...args],
        env: { ...env },
        clearEnv: true,
        ...(cwd === undefined ? {} : { cwd }),
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      return Promise.reject(
        new Error(
          `Cannot start ${command}: ${
            error instanceof Error ? error.message : String(error)
          }`,
        ),
      );
    }
    const child = this.#child;
    this.#writer = child.stdin.getWriter();
    this.#writer.closed.catch(() => {});
    const stdout = this.#readStdout(child.stdout);
    const stderr = this.#readStderr(child.stderr);
    this.#done = Promise.allSettled([stdout, stderr, child.status]).then(
      ([, , status]) => {
        if (status.status === "fulfilled") this.#exit = status.value;
        this.#finish();
      },
    );
    return Promise.resolve();
  }

  /** The last lines the program wrote to standard error (at most 4 KiB). */
  get stderrTail(): string {
    const all = new Uint8Array(this.#stderrBytes);
    let at = 0;
    for (const chunk of this.#stderr) {
      all.set(chunk, at);
      at += chunk.length;
    }
    const text = new TextDecoder().decode(
      all.subarray(Math.max(0, all.length - STDERR_TAIL_BYTES)),
    );
    return text;
  }

  /** How many lines of standard output were not JSON-RPC. */
  get garbageLines(): number {
    return this.#garbage;
  }

  /** How the program ended, once it has. */
  get exitStatus(): Deno.CommandStatus | undefined {
    return this.#exit;
  }

  /**
   * Writes one message and a newline to the program's standard input.
   *
   * @param message The JSON-RPC message.
   * @param _options Unused (stdio has one stream).
   * @throws {Error} When the transport is closed or the pipe is broken.
   */
  async send(message: JSONRPCMessage, _options?: unknown): Promise<void> {
    if (this.#closed || this.#writer === undefined) {
      throw new Error("Not connected: the server has stopped");
    }
    await this.#writer.write(
      new TextEncoder().encode(JSON.stringify(message) + "\n"),
    );
  }

  /** Stops the program (SIGTERM, then SIGKILL) and reports the close. */
  async close(): Promise<void> {
    const child = this.#child;
    if (child !== undefined && this.#exit === undefined) {
      await this.#writer?.close().catch(() => {});
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }, 2000);
      await this.#done;
      clearTimeout(timer);
    }
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }

  async #readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    for await (const chunk of stream) {
      this.#stderr.push(chunk);
      this.#stderrBytes += chunk.length;
      while (
        this.#stderr.length > 1 &&
        this.#stderrBytes - this.#stderr[0]!.length >= STDERR_TAIL_BYTES
      ) {
        this.#stderrBytes -= this.#stderr.shift()!.length;
      }
    }
  }

  async #readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    // The current line, decoded as its chunks arrive (so decoding overlaps
    // the transfer): its text pieces (at most #max bytes), whether it is
    // not UTF-8, and once it passes the limit the dropped byte count and a
    // short tail.
    let decoder = lineDecoder();
    let pieces: string[] = [];
    let size = 0;
    let invalid = false;
    let dropped = 0;
    let tail: Uint8Array[] = [];
    const keep = (part: Uint8Array, last: boolean) => {
      const room = this.#max - size;
      // A line cut at the limit is not flushed: its cut character is dropped.
      last &&= part.length <= room;
      if (room > 0) {
        const head = part.subarray(0, room);
        size += head.length;
        part = part.subarray(head.length);
        if (!invalid) {
          try {
            pieces.push(decoder.decode(head, { stream: !last }));
          } catch {
            invalid = true;
          }
        }
      }
      if (part.length > 0) {
        dropped += part.length;
        tail.push(part.slice(Math.max(0, part.length - OVERFLOW_TAIL_BYTES)));
        if (tail.length > 4) tail = tail.slice(-4);
      }
    };
    try {
      for await (const chunk of stream) {
        let start = 0;
        let nl = chunk.indexOf(NEWLINE, start);
        while (nl !== -1) {
          keep(chunk.subarray(start, nl), true);
          if (dropped > 0) {
            this.#overflow(pieces.join(""), size + dropped, tail);
          } else if (invalid) this.#bad(size);
          else {
            const text = pieces.length === 1 ? pieces[0]! : pieces.join("");
            pieces = []; // the pieces may go while the line is parsed
            this.#line(text);
          }
          decoder = lineDecoder();
          pieces = [];
          size = 0;
          invalid = false;
          dropped = 0;
          tail = [];
          start = nl + 1;
          nl = chunk.indexOf(NEWLINE, start);
        }
        if (start < chunk.length) keep(chunk.subarray(start), false);
      }
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #bad(bytes: number): void {
    this.#garbage += 1;
    this.onerror?.(
      new Error(
        `The server wrote a line that is not a JSON-RPC message (${bytes} bytes)`,
      ),
    );
  }

  #line(text: string): void {
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.length === 0) return;
    let message: JSONRPCMessage;
    try {
      message = jsonRpcMessage(JSON.parse(text));
    } catch {
      this.#bad(text.length);
      return;
    }
    this.onmessage?.(message);
  }

  #overflow(
    headText: string,
    total: number,
    tail: readonly Uint8Array[],
  ): void {
    const tailText = new TextDecoder().decode(join(tail));
    const id = idOf(headText.slice(0, 256), tailText);
    if (id === undefined) {
      this.#garbage += 1;
      this.onerror?.(
        new Error(
          `The server wrote a line of ${total} bytes, over the limit of ${this.#max}, without a request id to answer`,
        ),
      );
      return;
    }
    const text = firstText(headText) ?? cutReplacement(headText);
    this.onmessage?.({
      jsonrpc: "2.0",
      id,
      result: {
        content: [{ type: "text", text }],
        _meta: {
          [PARTIAL_META_KEY]: this.partialNonce,
          "loom/partial_total_bytes": total,
        },
      },
    } as JSONRPCMessage);
  }
}

/** The value as a JSON-RPC 2.0 message; throws when it is not one. */
function jsonRpcMessage(value: unknown): JSONRPCMessage {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError("not an object");
  }
  const m = value as Record<string, unknown>;
  const id = typeof m.id === "string" || typeof m.id === "number";
  const ok = m.jsonrpc === "2.0" && (
    (typeof m.method === "string" && (m.id === undefined || id)) ||
    (id && ("result" in m || "error" in m))
  );
  if (!ok) throw new TypeError("not a JSON-RPC 2.0 message");
  return m;
}

function lineDecoder(): TextDecoder {
  return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
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

/** The decoded head of the first `"text":"…"` string of a cut answer. */
function firstText(head: string): string | undefined {
  const match = /"content"\s*:\s*\[\s*\{[^{}]{0,512}?"text"\s*:\s*"/.exec(
    head.slice(0, 65536),
  );
  if (match === null) return undefined;
  const from = match.index + match[0].length;
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

function cutReplacement(text: string): string {
  return text.replace(/\uFFFD$/, "");
}
