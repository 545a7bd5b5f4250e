/**
 * Reads one request of a `loom-requests/1` log (`loom run --record-requests`)
 * without reading the others: the file is scanned once for line ends, in
 * chunks, when the first request is asked for; each request is then read
 * by its offset. A 1,202-step run's log is tens of megabytes; a viewer
 * holds only its line offsets.
 *
 * @module
 */
import { REQUEST_LOG_FORMAT } from "../providers/request_log.ts";
import { LoomError } from "../errors.ts";

/** A file that is not a request log. */
export class RequestLogError extends LoomError.TypeError<"RequestLogError"> {}

const CHUNK = 1 << 20;
const decoder = new TextDecoder("utf-8", { fatal: true });
const HEADER = `{"format":"${REQUEST_LOG_FORMAT}"}`;

/** One request as the log holds it. */
export interface LoggedRequest {
  /** The report line it belongs to, from 1. */
  readonly line: number;
  /** `selection` or `arguments`. */
  readonly phase: string;
  /** The request's JSON exactly as written (its bytes are `request_bytes`). */
  readonly request: string;
}

/**
 * A request log, open for reading requests one at a time.
 *
 * @example
 * ```ts
 * import { RequestLogReader } from "./request_log_reader.ts";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, '{"format":"loom-requests/1"}\n{"line":1,"phase":"selection","request":{"system":[]}}\n');
 * const log = await RequestLogReader.open(path);
 * assert.deepEqual(await log.get(1), { line: 1, phase: "selection", request: '{"system":[]}' });
 * assert.equal(await log.get(2), undefined);
 * await Deno.remove(path);
 * ```
 */
export class RequestLogReader {
  /** The file. */
  readonly path: string;
  #starts: number[] | undefined;
  #first = 1;

  private constructor(path: string) {
    this.path = path;
  }

  /**
   * Opens a log, checking its header line only.
   *
   * @param path The file.
   * @returns The reader.
   * @throws {RequestLogError} `request_log_invalid` when the file cannot be
   *   read or does not start with the `loom-requests/1` header.
   */
  static async open(path: string): Promise<RequestLogReader> {
    let head: string;
    try {
      using file = await Deno.open(path);
      const buffer = new Uint8Array(HEADER.length + 1);
      const n = await file.read(buffer) ?? 0;
      head = new TextDecoder().decode(buffer.subarray(0, n));
    } catch (error) {
      throw new RequestLogError(
        "request_log_invalid",
        `Cannot read the request log ${path}: ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error },
      );
    }
    if (head !== `${HEADER}\n`) {
      throw new RequestLogError(
        "request_log_invalid",
        `${path} is not a request log: it does not start with ${HEADER} (write one with loom run --record-requests)`,
      );
    }
    return new RequestLogReader(path);
  }

  /** How many requests the log holds (scans it on first use). */
  async count(): Promise<number> {
    return (await this.#index()).length - 1;
  }

  /**
   * The request of one report line.
   *
   * @param line The report line, from 1.
   * @returns The request, or `undefined` when the log does not hold it.
   * @throws {RequestLogError} `request_log_invalid` when that line of the
   *   file is not a request written by Loom.
   */
  async get(line: number): Promise<LoggedRequest | undefined> {
    const starts = await this.#index();
    const k = line - this.#first;
    if (!Number.isSafeInteger(k) || k < 0 || k + 1 >= starts.length) {
      return undefined;
    }
    const start = starts[k]!;
    const end = starts[k + 1]! - 1;
    using file = await Deno.open(this.path);
    await file.seek(start, Deno.SeekMode.Start);
    const bytes = new Uint8Array(end - start);
    let read = 0;
    while (read < bytes.length) {
      const n = await file.read(bytes.subarray(read));
      if (n === null) break;
      read += n;
    }
    const text = decoder.decode(bytes.subarray(0, read));
    const match =
      /^\{"line":([1-9][0-9]*),"phase":"(selection|arguments)","request":/
        .exec(text);
    if (match === null || !text.endsWith("}") || Number(match[1]) !== line) {
      throw new RequestLogError(
        "request_log_invalid",
        `Line ${
          k + 2
        } of the request log ${this.path} is not request ${line} as loom run writes it`,
      );
    }
    return {
      line,
      phase: match[2]!,
      request: text.slice(match[0].length, -1),
    };
  }

  /** Offsets where each request line starts, and where the last one ends. */
  async #index(): Promise<number[]> {
    if (this.#starts !== undefined) return this.#starts;
    const starts: number[] = [];
    using file = await Deno.open(this.path);
    const buffer = new Uint8Array(CHUNK);
    let offset = 0;
    while (true) {
      const n = await file.read(buffer);
      if (n === null) break;
      let at = buffer.indexOf(10);
      while (at >= 0 && at < n) {
        starts.push(offset + at + 1);
        at = buffer.indexOf(10, at + 1);
      }
      offset += n;
    }
    // The first newline ends the header: requests start after it; a torn
    // last line (no newline) is left out.
    this.#starts = starts;
    if (starts.length > 1) {
      const first = await this.#lineNumberAt(file, starts[0]!);
      if (first !== undefined) this.#first = first;
    }
    return starts;
  }

  async #lineNumberAt(
    file: Deno.FsFile,
    at: number,
  ): Promise<number | undefined> {
    await file.seek(at, Deno.SeekMode.Start);
    const head = new Uint8Array(32);
    const n = await file.read(head) ?? 0;
    const match = /^\{"line":([1-9][0-9]*),/.exec(
      new TextDecoder().decode(head.subarray(0, n)),
    );
    return match === null ? undefined : Number(match[1]);
  }
}
