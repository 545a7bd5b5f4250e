/**
 * A journal in a file, `DIR/journal.jsonl`: one record per line. Every
 * write takes an exclusive lock on the file (released by the kernel when
 * its process dies) and flushes before it returns; a failed write is cut
 * off again. `append` checks that the file still ends where this writer
 * last saw it end (otherwise another writer appended first:
 * `journal_conflict`); `extend` reads what others appended since, under
 * the lock, and appends after it. Bytes after the last newline are a torn
 * write of an unacknowledged record: reads ignore them, and the next write
 * cuts them off (under the lock, a torn tail is a dead writer's). Reads
 * continue from the byte where this writer last stopped, so a writer that
 * keeps up reads only what is new. Within one process the operations run
 * one at a time: what this writer saw of the file is shared by all of them,
 * and a read that ended while a write was under way must not hand that
 * write a stale end (it would cut another writer's records off as torn).
 *
 * @module
 */
import type {
  Journal,
  JournalExtension,
  JournalRead,
  JournalTail,
} from "./storage.ts";
import { isNoRoom, journalConflict, storeFull } from "./storage_error.ts";
import { writeAll } from "./_files.ts";
import { Serial } from "./_serial.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The journal as this writer last saw it. */
interface Seen {
  /** Complete records. */
  records: number;
  /** Bytes of those records. */
  bytes: number;
  /** Bytes of a torn last line after them. */
  torn: number;
}

/** A journal file (see the module doc). */
export class FileJournal implements Journal {
  readonly where: string;
  #seen: Seen = { records: 0, bytes: 0, torn: 0 };
  readonly #serial = new Serial();

  constructor(file: string) {
    this.where = file;
  }

  async exists(): Promise<boolean> {
    try {
      return (await Deno.lstat(this.where)).isFile;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  }

  read(from = 0): Promise<JournalRead> {
    return this.#serial.run(() => this.#read(from));
  }

  async #read(from = 0): Promise<JournalRead> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.where, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        this.#seen = { records: 0, bytes: 0, torn: 0 };
        return { records: [], end: 0, torn: 0 };
      }
      throw error;
    }
    try {
      const { records, seen } = await this.#readOpen(file, from);
      return { records, end: seen.records, torn: seen.torn };
    } finally {
      file.close();
    }
  }

  /**
   * The records from `from` on, read from the byte where this writer last
   * stopped when it can (it has seen the journal up to `from` or further,
   * and the file has not shrunk), else from the start.
   */
  async #readOpen(
    file: Deno.FsFile,
    from: number,
  ): Promise<{ records: string[]; seen: Seen }> {
    const size = (await file.stat()).size;
    const seen = this.#seen;
    const resume = seen.records > 0 && seen.records <= from &&
      seen.bytes <= size;
    const start = resume ? seen.bytes : 0;
    const bytes = new Uint8Array(size - start);
    await file.seek(start, Deno.SeekMode.Start);
    for (let offset = 0; offset < bytes.length;) {
      const n = await file.read(bytes.subarray(offset));
      if (n === null) break;
      offset += n;
    }
    const complete = bytes.lastIndexOf(0x0a) + 1;
    let text: string;
    try {
      text = decoder.decode(bytes.subarray(0, complete));
    } catch (error) {
      throw new SyntaxError(
        `Session journal ${this.where} is not valid UTF-8`,
        { cause: error },
      );
    }
    const lines = text === "" ? [] : text.split("\n");
    lines.pop();
    const first = resume ? seen.records : 0;
    this.#seen = {
      records: first + lines.length,
      bytes: start + complete,
      torn: bytes.length - complete,
    };
    return {
      records: from <= first ? lines : lines.slice(from - first),
      seen: this.#seen,
    };
  }

  append(position: number, records: readonly string[]): Promise<void> {
    return this.#serial.run(() => this.#append(position, records));
  }

  async #append(position: number, records: readonly string[]): Promise<void> {
    if (records.length === 0) return;
    const bytes = encoder.encode(records.map((r) => `${r}\n`).join(""));
    if (
      position === 0 && this.#seen.records === 0 &&
      await this.#create(bytes, records.length)
    ) return;
    if (position !== this.#seen.records) await this.#read();
    if (position !== this.#seen.records) {
      throw journalConflict(this.where, position);
    }
    await this.#locked(async (file) => {
      const size = (await file.stat()).size;
      if (size !== this.#seen.bytes + this.#seen.torn) {
        throw journalConflict(this.where, position);
      }
      await this.#write(file, bytes, records.length);
    });
  }

  extend(
    from: number,
    build: (tail: JournalTail) => readonly string[],
  ): Promise<JournalExtension> {
    return this.#serial.run(() => this.#extend(from, build));
  }

  async #extend(
    from: number,
    build: (tail: JournalTail) => readonly string[],
  ): Promise<JournalExtension> {
    let created: JournalExtension | undefined;
    if (from === 0 && this.#seen.records === 0) {
      // A journal nobody has begun: the first record creates the file.
      const appended = build({ from: 0, records: [] });
      if (appended.length === 0) {
        return { tail: { from: 0, records: [] }, appended, end: 0 };
      }
      const bytes = encoder.encode(appended.map((r) => `${r}\n`).join(""));
      if (await this.#create(bytes, appended.length)) {
        created = {
          tail: { from: 0, records: [] },
          appended,
          end: appended.length,
        };
      }
    }
    if (created !== undefined) return created;
    return await this.#locked(async (file) => {
      const { records, seen } = await this.#readOpen(file, from);
      if (seen.records < from) throw journalConflict(this.where, from);
      const tail = { from, records };
      const appended = build(tail);
      const bytes = encoder.encode(appended.map((r) => `${r}\n`).join(""));
      await this.#write(file, bytes, appended.length);
      return { tail, appended, end: this.#seen.records };
    });
  }

  /** Runs `fn` holding the exclusive lock of the (existing) journal file. */
  async #locked<T>(fn: (file: Deno.FsFile) => Promise<T>): Promise<T> {
    using file = await Deno.open(this.where, { read: true, write: true });
    await file.lock(true);
    try {
      return await fn(file);
    } finally {
      await file.unlock().catch(() => {});
    }
  }

  /**
   * Writes records after what this writer has seen (under the lock), first
   * cutting off a torn tail, and flushes them; a failed write is cut off.
   */
  async #write(file: Deno.FsFile, bytes: Uint8Array, count: number) {
    if (this.#seen.torn > 0) {
      // Under the lock, a torn tail is a dead writer's, never acknowledged.
      await file.truncate(this.#seen.bytes);
      this.#seen.torn = 0;
    }
    if (count === 0) return;
    await file.seek(this.#seen.bytes, Deno.SeekMode.Start);
    try {
      await writeAll(file, bytes);
      await file.syncData();
    } catch (error) {
      // Cut the partial line off again, so no later append follows it.
      await file.truncate(this.#seen.bytes).catch(() => {});
      if (isNoRoom(error)) throw storeFull(this.where, error);
      throw error;
    }
    this.#seen.records += count;
    this.#seen.bytes += bytes.length;
  }

  /**
   * Creates the journal with its first records; `false` when it exists, or
   * when another writer found the new empty file and wrote first (an
   * `append` then sees the conflict, an `extend` appends after it).
   */
  async #create(bytes: Uint8Array, count: number): Promise<boolean> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.where, {
        write: true,
        createNew: true,
        mode: 0o600,
      });
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists) return false;
      throw error;
    }
    try {
      await file.lock(true);
      // Another writer may have found the new empty file and written first.
      if ((await file.stat()).size !== 0) return false;
      try {
        await writeAll(file, bytes);
        await file.syncData();
      } catch (error) {
        await file.truncate(0).catch(() => {});
        if (isNoRoom(error)) throw storeFull(this.where, error);
        throw error;
      }
      this.#seen = { records: count, bytes: bytes.length, torn: 0 };
    } finally {
      file.close();
    }
    return true;
  }

  cutTorn(): Promise<number> {
    return this.#serial.run(() => this.#cutTorn());
  }

  async #cutTorn(): Promise<number> {
    const read = await this.#read();
    if (read.torn === 0) return 0;
    return await this.#locked(async (file) => {
      const size = (await file.stat()).size;
      if (size !== this.#seen.bytes + this.#seen.torn) {
        throw journalConflict(this.where, this.#seen.records);
      }
      const torn = this.#seen.torn;
      await file.truncate(this.#seen.bytes);
      await file.syncData();
      this.#seen.torn = 0;
      return torn;
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
