/**
 * The journal's chain: one JSON record per line, each sealed with an
 * HMAC-SHA-256 over the previous record's MAC and its own text, appended
 * durably (through the storage layer, on any back-end) before the step it
 * describes is acknowledged. A torn last line of a journal file is an
 * unacknowledged record and is ignored.
 *
 * @module
 */
import { createHmac } from "node:crypto";
import type { Journal, JournalRead } from "../storage/storage.ts";
import { SessionError } from "./session_error.ts";

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
  /** Complete records (the position of the next append). */
  readonly size: number;
  /** Bytes of a torn last line (ignored; the folder back-end only). */
  readonly torn: number;
}

/** Lowercase hex HMAC-SHA-256 of `previous`, a newline and `body`. */
function chainMac(key: Uint8Array, previous: string, body: string): string {
  return createHmac("sha256", key).update(`${previous}\n${body}`).digest("hex");
}

/**
 * Seals a record: its line (without the newline) and its MAC.
 *
 * @param key The session key.
 * @param previous The MAC of the record before (`""` for the header).
 * @param value The record.
 * @returns The line and its MAC.
 */
export function sealRecord(
  key: Uint8Array,
  previous: string,
  value: Record<string, unknown>,
): { text: string; mac: string } {
  const body = JSON.stringify(value);
  const mac = chainMac(key, previous, body);
  return { text: `${body.slice(0, -1)},"mac":"${mac}"}`, mac };
}

/** Records verified against the chain. */
export interface VerifiedRecords {
  /** The records, without their MACs. */
  readonly lines: readonly JournalLine[];
  /** Each record's MAC, in order. */
  readonly macs: readonly string[];
  /** The MAC of the last record (`after.mac` when there is none). */
  readonly mac: string;
}

/**
 * Parses records read from position `after.position` on and, with a key,
 * verifies each against the chain from `after.mac`.
 *
 * @param file The journal, for messages.
 * @param key The session key (`undefined`: parse only).
 * @param after Where the records start and the MAC before them.
 * @param records The records' texts.
 * @returns The records and their MACs.
 * @throws {SessionError} `session_invalid` for a line that is not a JSON
 *   object with a MAC; `session_tampered` for the first record whose MAC
 *   does not verify.
 */
export function verifyRecords(
  file: string,
  key: Uint8Array | undefined,
  after: { readonly position: number; readonly mac: string },
  records: readonly string[],
): VerifiedRecords {
  const lines: JournalLine[] = [];
  const macs: string[] = [];
  let previous = after.mac;
  for (const [at, source] of records.entries()) {
    const index = after.position + at;
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
    macs.push(mac);
  }
  return { lines, macs, mac: previous };
}

/**
 * Reads a journal (from `after.position`, continuing the chain from the
 * MAC of the record before it); with a key, verifies the chain record by
 * record.
 *
 * @throws {SessionError} `session_invalid` for a line that is not a JSON
 *   object with a MAC; `session_tampered` for the first record whose MAC
 *   does not verify.
 */
export async function readJournal(
  journal: Journal,
  key: Uint8Array | undefined,
  after: { readonly position: number; readonly mac: string } = {
    position: 0,
    mac: "",
  },
): Promise<JournalText> {
  const file = journal.where;
  let read: JournalRead;
  try {
    read = await journal.read(after.position);
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw new SessionError(
        "session_invalid",
        `Session journal ${file} is not valid UTF-8`,
        { file, cause: error },
      );
    }
    throw error;
  }
  const { lines, mac } = verifyRecords(file, key, after, read.records);
  return { lines, mac, size: read.end, torn: read.torn };
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

/**
 * Appends sealed records to a journal, each durable before it returns; an
 * append another writer got to first fails with `journal_conflict` and
 * writes nothing.
 */
export class JournalWriter {
  readonly #journal: Journal;
  readonly #key: Uint8Array;
  #mac: string;
  #position: number;

  private constructor(
    journal: Journal,
    key: Uint8Array,
    at: { mac: string; position: number },
  ) {
    this.#journal = journal;
    this.#key = key;
    this.#mac = at.mac;
    this.#position = at.position;
  }

  /** A writer of a new journal (its first append is the header). */
  static create(journal: Journal, key: Uint8Array): JournalWriter {
    return new JournalWriter(journal, key, { mac: "", position: 0 });
  }

  /** A writer continuing a read journal, cutting off a torn last line. */
  static async continue(
    journal: Journal,
    key: Uint8Array,
    read: JournalText,
  ): Promise<JournalWriter> {
    if (read.torn > 0) await journal.cutTorn();
    return new JournalWriter(journal, key, {
      mac: read.mac,
      position: read.size,
    });
  }

  /** The MAC of the last record (`""` before the header). */
  get mac(): string {
    return this.#mac;
  }

  /** Records in the journal (the position of the next append). */
  get position(): number {
    return this.#position;
  }

  /**
   * Appends one record, durably.
   *
   * @throws {StorageError} `journal_conflict` when another writer appended
   *   first; `storage_unavailable` when the store was lost.
   */
  async append(value: Record<string, unknown>): Promise<void> {
    const sealed = sealRecord(this.#key, this.#mac, value);
    await this.#journal.append(this.#position, [sealed.text]);
    this.#mac = sealed.mac;
    this.#position += 1;
  }

  /** Releases the journal. */
  close(): Promise<void> {
    return this.#journal.close().catch(() => {});
  }
}
