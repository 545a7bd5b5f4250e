/**
 * The journal file: one JSON record per line, each sealed with an
 * HMAC-SHA-256 over the previous record's MAC and its own text, appended and
 * flushed before the step it describes is acknowledged. Bytes after the last
 * newline are a torn write of an unacknowledged record and are ignored.
 *
 * @module
 */
import { chainMac } from "./_digest.ts";
import { SessionError } from "./session_error.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** One verified line of a journal. */
export interface JournalLine {
  /** 1-based line number. */
  readonly line: number;
  /** The record without its MAC. */
  readonly value: Record<string, unknown>;
}

/** A journal as read. */
export interface JournalText {
  /** Complete lines, verified when a key was given. */
  readonly lines: readonly JournalLine[];
  /** MAC of the last complete record (`""` when there is none). */
  readonly mac: string;
  /** Bytes of the complete lines. */
  readonly size: number;
  /** Bytes of a torn last line (ignored). */
  readonly torn: number;
}

/** Seals a record: its line (newline included) and its MAC. */
export function seal(
  key: Uint8Array,
  previous: string,
  value: Record<string, unknown>,
): { text: string; mac: string } {
  const body = JSON.stringify(value);
  const mac = chainMac(key, previous, body);
  return { text: `${body.slice(0, -1)},"mac":"${mac}"}\n`, mac };
}

/**
 * Reads a journal; with a key, verifies the chain record by record.
 *
 * @throws {SessionError} `session_invalid` for a line that is not a JSON
 *   object with a MAC; `session_tampered` for the first record whose MAC
 *   does not verify.
 */
export async function readJournal(
  file: string,
  key: Uint8Array | undefined,
): Promise<JournalText> {
  const bytes = await Deno.readFile(file);
  const end = bytes.lastIndexOf(0x0a) + 1;
  let text: string;
  try {
    text = decoder.decode(bytes.subarray(0, end));
  } catch (error) {
    throw new SessionError(
      "session_invalid",
      `Session journal ${file} is not valid UTF-8`,
      { file, cause: error },
    );
  }
  const lines: JournalLine[] = [];
  let previous = "";
  const raw = text.split("\n");
  raw.pop();
  for (const [index, source] of raw.entries()) {
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (error) {
      throw invalid(file, line, "it is not valid JSON", error);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw invalid(file, line, "it is not a JSON object");
    }
    const { mac, ...rest } = value as Record<string, unknown>;
    if (typeof mac !== "string") throw invalid(file, line, "it has no mac");
    if (
      key !== undefined && chainMac(key, previous, JSON.stringify(rest)) !== mac
    ) {
      throw new SessionError(
        "session_tampered",
        `Session journal ${file} was changed after it was written: record ${index} (line ${line}) does not verify against the session key and the record before it; the session cannot be trusted and is not resumed`,
        { file, line },
      );
    }
    previous = mac;
    lines.push({ line, value: rest });
  }
  return { lines, mac: previous, size: end, torn: bytes.length - end };
}

function invalid(
  file: string,
  line: number,
  why: string,
  cause?: unknown,
): SessionError {
  return new SessionError(
    "session_invalid",
    `Session journal ${file} is invalid at line ${line}: ${why}`,
    { file, line, cause },
  );
}

/** Appends sealed records to a journal, each flushed before it returns. */
export class JournalWriter {
  readonly #file: Deno.FsFile;
  readonly #key: Uint8Array;
  #mac: string;
  #size: number;
  #broken = false;

  private constructor(
    file: Deno.FsFile,
    key: Uint8Array,
    at: { mac: string; size: number },
  ) {
    this.#file = file;
    this.#key = key;
    this.#mac = at.mac;
    this.#size = at.size;
  }

  /** Creates a new journal (fails when one exists). */
  static async create(path: string, key: Uint8Array): Promise<JournalWriter> {
    const file = await Deno.open(path, {
      write: true,
      createNew: true,
      mode: 0o600,
    });
    return new JournalWriter(file, key, { mac: "", size: 0 });
  }

  /** Opens a read journal for appending, cutting off a torn last line. */
  static async continue(
    path: string,
    key: Uint8Array,
    read: JournalText,
  ): Promise<JournalWriter> {
    const file = await Deno.open(path, { read: true, write: true });
    if (read.torn > 0) {
      await file.truncate(read.size);
      await file.syncData();
    }
    await file.seek(read.size, Deno.SeekMode.Start);
    return new JournalWriter(file, key, { mac: read.mac, size: read.size });
  }

  /**
   * Appends one record and flushes it to disk. A failed write is cut off
   * again, so a later append never follows a partial line.
   */
  async append(value: Record<string, unknown>): Promise<void> {
    if (this.#broken) {
      throw new Error(
        "Cannot append to the session journal: an earlier write failed and could not be undone",
      );
    }
    const sealed = seal(this.#key, this.#mac, value);
    const bytes = encoder.encode(sealed.text);
    try {
      let offset = 0;
      while (offset < bytes.length) {
        offset += await this.#file.write(bytes.subarray(offset));
      }
      await this.#file.syncData();
    } catch (error) {
      try {
        await this.#file.truncate(this.#size);
        await this.#file.seek(this.#size, Deno.SeekMode.Start);
      } catch {
        this.#broken = true;
      }
      throw error;
    }
    this.#mac = sealed.mac;
    this.#size += bytes.length;
  }

  /** Closes the file. */
  close(): void {
    try {
      this.#file.close();
    } catch {
      // Already closed.
    }
  }
}
