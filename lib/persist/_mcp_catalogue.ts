/**
 * An MCP session's catalogue as its journal folds it, one record at a time
 * and only once: where the journal ends, the MAC of its last record, the
 * entries by id and the next free id. Records are verified (chain, closed
 * schema, sequence, no id twice) before anything is taken from them, and
 * verifying does not change the catalogue: what a writer verified under
 * the journal's lock is applied once its append has committed, and applied
 * again harmlessly (a record already folded is skipped), so a re-read
 * racing an append can never fold a record twice or skip one.
 *
 * @module
 */
import { type JournalLine, sealRecord, verifyRecords } from "./_journal.ts";
import {
  type CatalogueEntry,
  checkedRecord,
  type McpHeaderRecord,
  mcpHeaderSchema,
  mcpResultsSchema,
  OLD_MCP_FORMAT,
} from "./_schema.ts";
import { SessionError } from "./session_error.ts";

/** One verified record of an MCP journal. */
interface FoldedRecord {
  /** Its position (0 for the header). */
  readonly position: number;
  /** Its MAC. */
  readonly mac: string;
  /** The header (position 0 only). */
  readonly header?: McpHeaderRecord;
  /** Its results, by id. */
  readonly results: readonly (readonly [string, CatalogueEntry])[];
}

/** Records verified against a catalogue, not yet applied to it. */
export interface VerifiedTail {
  /** The position of the first record. */
  readonly from: number;
  /** The records. */
  readonly records: readonly FoldedRecord[];
  /** The position after them. */
  readonly end: number;
  /** The MAC of the last (the catalogue's when there are none). */
  readonly mac: string;
  /** The next free id after them. */
  readonly nextId: number;
}

/** The id number of `result-<n>`. */
export function idNumber(id: string): number {
  return Number(id.slice(id.lastIndexOf("-") + 1));
}

/** An MCP session's catalogue (see the module doc). */
export class McpCatalogue {
  /** The journal, for messages. */
  readonly file: string;
  readonly #key: Uint8Array | undefined;
  #position = 0;
  #mac = "";
  #nextId = 1;
  #header: McpHeaderRecord | undefined;
  readonly #entries = new Map<string, CatalogueEntry>();
  readonly #ids: string[] = [];

  /**
   * An empty catalogue.
   *
   * @param file The journal, for messages.
   * @param key The session key (`undefined`: parse without verifying).
   */
  constructor(file: string, key: Uint8Array | undefined) {
    this.file = file;
    this.#key = key;
  }

  /** Records folded (the position of the next record). */
  get position(): number {
    return this.#position;
  }

  /** The header, once folded. */
  get header(): McpHeaderRecord | undefined {
    return this.#header;
  }

  /** How many results are catalogued. */
  get size(): number {
    return this.#ids.length;
  }

  /** The entry of a result id. */
  entry(id: string): CatalogueEntry | undefined {
    return this.#entries.get(id);
  }

  /** Ids in journal order from index `start` on. */
  idsFrom(start: number): readonly string[] {
    return this.#ids.slice(start);
  }

  /**
   * Verifies records read from position `from` on, without applying them.
   * Records before the catalogue's position were folded already and are
   * skipped.
   *
   * @throws {SessionError} `session_invalid`, `session_tampered`,
   *   `session_outdated`.
   */
  verify(from: number, records: readonly string[]): VerifiedTail {
    const skip = this.#position - from;
    if (skip < 0) {
      throw new SessionError(
        "session_invalid",
        `Session journal ${this.file} was read from record ${from}, past the ${this.#position} records folded`,
        { file: this.file },
      );
    }
    const fresh = records.slice(skip);
    const start = this.#position;
    const verified = verifyRecords(
      this.file,
      this.#key,
      { position: start, mac: this.#mac },
      fresh,
    );
    const seen = new Set<string>();
    const next = { id: this.#nextId };
    const out = verified.lines.map(({ value, line }, index) =>
      this.#check(start + index, verified.macs[index]!, value, line, seen, next)
    );
    return {
      from: start,
      records: out,
      end: start + out.length,
      mac: verified.mac,
      nextId: next.id,
    };
  }

  /**
   * A catalogue of lines already read and verified as a whole (the chain
   * by `readJournal`): the schema, sequence and id checks, then applied.
   *
   * @param file The journal, for messages.
   * @param lines Its records from the header on.
   * @param mac The MAC of the last.
   * @param key The key later records are verified and sealed with.
   * @returns The catalogue.
   * @throws {SessionError} As {@linkcode McpCatalogue.verify}.
   */
  static fromLines(
    file: string,
    lines: readonly JournalLine[],
    mac: string,
    key: Uint8Array | undefined,
  ): McpCatalogue {
    const catalogue = new McpCatalogue(file, key);
    const seen = new Set<string>();
    const next = { id: 1 };
    const records = lines.map(({ value, line }, position) =>
      catalogue.#check(position, mac, value, line, seen, next)
    );
    catalogue.apply({
      from: 0,
      records,
      end: records.length,
      mac,
      nextId: next.id,
    });
    return catalogue;
  }

  /** One record checked against the schema, its position and the ids before it. */
  #check(
    position: number,
    mac: string,
    value: Record<string, unknown>,
    line: number,
    seen: Set<string>,
    next: { id: number },
  ): FoldedRecord {
    if (position === 0) {
      if (value.format === OLD_MCP_FORMAT) {
        throw new SessionError(
          "session_outdated",
          `Session journal ${this.file} was written by an older loom mcp (${OLD_MCP_FORMAT}), before one journal format served every kind of session: its results can be stored again, so delete it (or give loom mcp another --session) and start afresh`,
          { file: this.file, line: 1 },
        );
      }
      const header = checkedRecord(mcpHeaderSchema, value, this.file, line);
      return { position, mac, header, results: [] };
    }
    const record = checkedRecord(mcpResultsSchema, value, this.file, line);
    if (record.seq !== position) {
      throw new SessionError(
        "session_invalid",
        `Session journal ${this.file} is invalid at line ${line}: record ${record.seq} stands where record ${position} belongs`,
        { file: this.file, line },
      );
    }
    const results = Object.entries(record.results);
    for (const [id] of results) {
      if (this.#entries.has(id) || seen.has(id)) {
        throw new SessionError(
          "session_invalid",
          `Session journal ${this.file} is invalid at line ${line}: ${id} is catalogued twice`,
          { file: this.file, line },
        );
      }
      seen.add(id);
      next.id = Math.max(next.id, idNumber(id) + 1);
    }
    return { position, mac, results };
  }

  /**
   * Applies verified records; those folded meanwhile are skipped, and a
   * tail that starts past the catalogue's end is left for a later read.
   *
   * @returns Whether the catalogue now reaches the tail's end.
   */
  apply(tail: VerifiedTail): boolean {
    if (tail.from > this.#position) return false;
    for (const record of tail.records) {
      if (record.position < this.#position) continue;
      if (record.header !== undefined) this.#header = record.header;
      for (const [id, entry] of record.results) {
        this.#entries.set(id, entry);
        this.#ids.push(id);
        this.#nextId = Math.max(this.#nextId, idNumber(id) + 1);
      }
      this.#position = record.position + 1;
      this.#mac = record.mac;
    }
    return this.#position >= tail.end;
  }

  /**
   * The record that follows `after` (verified, not applied), catalogued
   * under the given ids or, for entries without one, the next free ids.
   *
   * @param after The tail the record goes after.
   * @param entries The entries, each with its id or `undefined`.
   * @returns The sealed line, the record as verified, and the ids given.
   */
  seal(
    after: VerifiedTail,
    entries: readonly (readonly [string | undefined, CatalogueEntry])[],
  ): { text: string; tail: VerifiedTail; ids: string[] } {
    if (this.#key === undefined) {
      throw new TypeError(`Cannot write ${this.file} without the session key`);
    }
    let next = after.nextId;
    const ids = entries.map(([id]) => id ?? `result-${next++}`);
    const results = entries.map(([, entry], i) => [ids[i]!, entry] as const);
    const value = {
      seq: after.end,
      type: "results",
      results: Object.fromEntries(results),
    };
    const sealed = sealRecord(this.#key, after.mac, value);
    for (const id of ids) next = Math.max(next, idNumber(id) + 1);
    return {
      text: sealed.text,
      ids,
      tail: {
        from: after.end,
        records: [{ position: after.end, mac: sealed.mac, results }],
        end: after.end + 1,
        mac: sealed.mac,
        nextId: next,
      },
    };
  }
}
