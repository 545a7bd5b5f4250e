/**
 * The gateway's client transport to a stdio upstream: it starts the program
 * and reads newline-delimited JSON-RPC from its standard output linearly.
 * The SDK's own stdio client copies its whole buffer on every chunk (a
 * 40 MB answer costs seconds of copying) and closes the connection on any
 * message over 10 MiB; this one hands each chunk to a
 * {@linkcode MessageAssembler}, which keeps a line's small bytes as they come
 * and unescapes, checks and hashes its large strings while the rest still
 * streams in, and it accepts lines up to `maxMessageBytes`. In the answer to
 * a `tools/call`, a large text (`result.content[i].text`, or a member of
 * `result.structuredContent`) arrives as a {@linkcode LargeText}, ready for
 * the store; everything else is what `JSON.parse` of the line gives. A longer
 * line is kept up to that limit, the rest is read and dropped, and the
 * answer is delivered as a partial result: its first text's head, marked
 * with `_meta["loom/partial"]` set to this transport's unguessable nonce (an
 * upstream cannot forge the mark). A line that is not JSON-RPC is reported
 * to `onerror` and skipped. The last lines of the program's standard error
 * are kept for failure messages.
 *
 * @module
 */
import { LargeText } from "./large_text.ts";
import { type JSONRPCMessage, MessageAssembler } from "./message_assembler.ts";
import { messageOf } from "../../errors.ts";

export type { JSONRPCMessage };

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
  /**
   * A string of a `tools/call` answer longer than this many bytes arrives as
   * a {@linkcode LargeText} (default 1 MiB).
   */
  readonly largeStringBytes?: number;
}

/** The `_meta` key that marks an answer cut at `maxMessageBytes`. */
export const PARTIAL_META_KEY = "loom/partial";

const STDERR_TAIL_BYTES = 4096;
const NEWLINE = 0x0a;
/** The read buffer (a pipe holds 64 KiB). */
const READ_BYTES = 256 * 1024;
/** Most `tools/call` requests remembered while they await their answer. */
const MAX_PENDING_CALLS = 4096;

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
  readonly #toolCalls = new Set<unknown>();
  readonly #assembler: MessageAssembler;

  /**
   * Prepares the transport; {@linkcode LinearStdioTransport.start} starts the program.
   *
   * @param options The program and the line limit.
   */
  constructor(options: LinearStdioOptions) {
    this.#options = options;
    this.#max = options.maxMessageBytes ?? 64 * 1024 * 1024;
    this.#assembler = new MessageAssembler({
      maxMessageBytes: this.#max,
      largeStringBytes: options.largeStringBytes ?? 1024 * 1024,
    });
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
          `Cannot start ${command}: ${messageOf(error)}`,
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
    if (message.method === "tools/call" && message.id !== undefined) {
      this.#toolCalls.add(message.id);
      if (this.#toolCalls.size > MAX_PENDING_CALLS) {
        this.#toolCalls.delete(this.#toolCalls.values().next().value);
      }
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
    const assembler = this.#assembler;
    // One buffer, read into again and again (the assembler copies what it
    // keeps): no fresh memory for every chunk of a large answer.
    const reader = stream.getReader({ mode: "byob" });
    let buffer = new ArrayBuffer(READ_BYTES);
    try {
      for (;;) {
        const { value: chunk, done } = await reader.read(
          new Uint8Array(buffer),
        );
        if (done || chunk === undefined) break;
        buffer = chunk.buffer as ArrayBuffer;
        let start = 0;
        let nl = chunk.indexOf(NEWLINE);
        while (nl !== -1) {
          assembler.push(chunk.subarray(start, nl));
          this.#line();
          start = nl + 1;
          nl = chunk.indexOf(NEWLINE, start);
        }
        if (start < chunk.length) assembler.push(chunk.subarray(start));
      }
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    } finally {
      reader.releaseLock();
    }
  }

  #line(): void {
    const line = this.#assembler.end((message) =>
      this.#toolCalls.has(message.id)
    );
    switch (line.kind) {
      case "empty":
        return;
      case "invalid":
        this.#bad(line.bytes);
        return;
      case "cut":
        this.#overflow(line.id, line.text, line.totalBytes);
        return;
    }
    const message = line.message;
    if (message.method === undefined) this.#toolCalls.delete(message.id);
    this.onmessage?.(message);
  }

  #bad(bytes: number): void {
    this.#garbage += 1;
    this.onerror?.(
      new Error(
        `The server wrote a line that is not a JSON-RPC message (${bytes} bytes)`,
      ),
    );
  }

  #overflow(
    id: string | number | undefined,
    text: string | LargeText,
    total: number,
  ): void {
    if (id === undefined) {
      this.#garbage += 1;
      this.onerror?.(
        new Error(
          `The server wrote a line of ${total} bytes, over the limit of ${this.#max}, without a request id to answer`,
        ),
      );
      return;
    }
    // A cut text stays large only in the answer to a tool call.
    if (text instanceof LargeText && !this.#toolCalls.has(id)) {
      text = text.text();
    }
    this.#toolCalls.delete(id);
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
