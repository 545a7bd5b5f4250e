/**
 * The run-local event archive: every compact event from the first action,
 * readable by the model through `$list_history` and `$read_history`. It is
 * append-only and bounded; when full it refuses the next event with a typed
 * error and keeps everything already archived.
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import { sha256Hex } from "../store/digest.ts";
import { cutUtf8 } from "../store/preview.ts";
import type {
  HistoryItem,
  HistoryPage,
  HistorySource,
} from "../reference/lookup_session.ts";
import type { SelectableRecord } from "../reference/selection.ts";
import { type BriefingEvent, serializeEvent } from "./event.ts";

/** Default maximum number of archived events. */
export const MAX_ARCHIVED_EVENTS = 4_096;
/** Default maximum of serialized event bytes in the archive (16 MiB). */
export const MAX_ARCHIVED_BYTES: number = 16 * 1024 * 1024;

const PAGE_ITEMS = 8;
const PAGE_BYTES = 8 * 1024;
const ACTION_LISTING_BYTES = 256;

/** Limits of an {@linkcode EventArchive}. */
export interface EventArchiveOptions {
  /** At most this many events (default 4,096). */
  readonly maxEvents?: number;
  /** At most this many bytes of serialized events (default 16 MiB). */
  readonly maxBytes?: number;
}

/**
 * Raised when an event does not fit the archive. Nothing is changed: every
 * event archived before stays readable.
 */
export class ArchiveCapacityError
  extends LoomError.RangeError<"ArchiveCapacityError", {
    /** Which limit the event would pass. */
    readonly limit: "events" | "bytes";
  }> {}

interface Archived {
  readonly record: SelectableRecord;
  readonly sequence: number;
  readonly action: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Append-only store of compact events, `event-<sequence>` ids, SHA-256 over
 * each event's serialized JSON. Implements the `HistorySource` that
 * `LookupSession` reads for `$list_history` and `$read_history`.
 *
 * @example
 * ```ts
 * import { EventArchive } from "./event_archive.ts";
 * import assert from "node:assert/strict";
 * const archive = new EventArchive();
 * archive.append({
 *   sequence: 1, action: "tests.run", arguments: {},
 *   report: { kind: "refused", code: "no_tests", reason: "No test command" },
 *   artifacts: [],
 * });
 * const record = archive.record("event-1");
 * assert.equal(record?.sha256.length, 64);
 * assert.equal(archive.list(0).events[0]?.event, "event-1");
 * ```
 */
export class EventArchive implements HistorySource {
  /** The event limit. */
  readonly maxEvents: number;
  /** The byte limit. */
  readonly maxBytes: number;
  readonly #items: Archived[] = [];
  readonly #bySequence = new Map<number, number>();
  #bytes = 0;

  /**
   * Creates an empty archive.
   *
   * @param options Capacity limits.
   * @throws {RangeError} When a limit is not a positive integer.
   */
  constructor(options: EventArchiveOptions = {}) {
    this.maxEvents = positive(
      options.maxEvents ?? MAX_ARCHIVED_EVENTS,
      "maxEvents",
    );
    this.maxBytes = positive(
      options.maxBytes ?? MAX_ARCHIVED_BYTES,
      "maxBytes",
    );
  }

  /** Number of archived events. */
  get count(): number {
    return this.#items.length;
  }

  /** Total bytes of serialized events. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Sequence of the last archived event, or 0 when empty. */
  get lastSequence(): number {
    return this.#items.at(-1)?.sequence ?? 0;
  }

  /**
   * Archives an event.
   *
   * @param event The compact event; its sequence must exceed the last one.
   * @returns The archived record: id, serialized bytes, digest.
   * @throws {ArchiveCapacityError} When the event would pass a limit; the
   *   archive is unchanged.
   * @throws {RangeError} When the sequence does not increase.
   */
  append(event: BriefingEvent): SelectableRecord {
    if (event.sequence <= this.lastSequence) {
      throw new RangeError(
        `Cannot archive event ${event.sequence}: sequences must increase and the last archived is ${this.lastSequence}`,
      );
    }
    if (this.#items.length + 1 > this.maxEvents) {
      throw new ArchiveCapacityError(
        "capacity",
        `Cannot archive event ${event.sequence}: the archive holds its limit of ${this.maxEvents} events`,
        { limit: "events" },
      );
    }
    const bytes = encoder.encode(serializeEvent(event));
    if (this.#bytes + bytes.byteLength > this.maxBytes) {
      throw new ArchiveCapacityError(
        "capacity",
        `Cannot archive event ${event.sequence}: its ${bytes.byteLength} bytes would pass the archive limit of ${this.maxBytes} bytes (${this.#bytes} used)`,
        { limit: "bytes" },
      );
    }
    const record: SelectableRecord = {
      id: `event-${event.sequence}`,
      bytes,
      sha256: sha256Hex(bytes),
    };
    this.#bySequence.set(event.sequence, this.#items.length);
    this.#items.push({
      record,
      sequence: event.sequence,
      action: event.action,
    });
    this.#bytes += bytes.byteLength;
    return record;
  }

  /**
   * The archived event of a sequence.
   *
   * @param sequence The event's sequence number.
   * @returns The event parsed back from its archived bytes, or `undefined`.
   */
  get(sequence: number): BriefingEvent | undefined {
    const index = this.#bySequence.get(sequence);
    if (index === undefined) return undefined;
    const item = this.#items[index];
    return item === undefined
      ? undefined
      : JSON.parse(decoder.decode(item.record.bytes)) as BriefingEvent;
  }

  /**
   * The selectable record of an archive id (`event-<n>`).
   *
   * @param id The history id.
   * @returns Id, serialized event bytes and their SHA-256, or `undefined`.
   */
  record(id: string): SelectableRecord | undefined {
    const match = /^event-([1-9][0-9]{0,15})$/.exec(id);
    if (match === null) return undefined;
    const index = this.#bySequence.get(Number(match[1]));
    return index === undefined ? undefined : this.#items[index]?.record;
  }

  /**
   * A page of the history listing: at most 8 items and 8 KiB of JSON,
   * oldest first. Actions longer than 256 bytes are cut on a character
   * boundary in the listing; the event itself keeps them whole.
   *
   * @param offset Zero-based index of the first event.
   * @returns The page and the next offset (`null` after the last page).
   * @throws {RangeError} When the offset is not a non-negative integer.
   */
  list(offset: number): HistoryPage {
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new RangeError(
        `Cannot list history from offset ${offset}: offsets are non-negative integers`,
      );
    }
    const events: HistoryItem[] = [];
    let size = '{"events":[],"next_offset":null}'.length;
    let index = offset;
    while (index < this.#items.length && events.length < PAGE_ITEMS) {
      const item = this.#items[index];
      if (item === undefined) break;
      const entry: HistoryItem = {
        event: item.record.id,
        action: cutUtf8(item.action, ACTION_LISTING_BYTES).text,
        utf8_bytes: item.record.bytes.byteLength,
        reference: {
          result: item.record.id,
          sha256: item.record.sha256,
          select: { kind: "whole" },
        },
      };
      const entryBytes = encoder.encode(JSON.stringify(entry)).byteLength +
        (events.length > 0 ? 1 : 0);
      if (events.length > 0 && size + entryBytes + 16 > PAGE_BYTES) break;
      events.push(entry);
      size += entryBytes;
      index += 1;
    }
    return {
      events,
      next_offset: index < this.#items.length ? index : null,
    };
  }

  /**
   * Every archived record in sequence order (for persistence and audits).
   *
   * @returns An iterator over the archived records.
   */
  *records(): IterableIterator<SelectableRecord> {
    for (const item of this.#items) yield item.record;
  }
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(
      `Cannot create an event archive with ${name} ${value}: limits are positive integers`,
    );
  }
  return value;
}
