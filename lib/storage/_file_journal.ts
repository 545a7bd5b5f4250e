/**
 * A journal in a file, `DIR/journal.jsonl`: one record per line. An append
 * takes an exclusive lock on the file, checks that it still ends where
 * this writer last saw it end (otherwise another writer appended first:
 * `journal_conflict`), writes the records and flushes them before it
 * returns. A failed write is cut off again. Bytes after the last newline
 * are a torn write of an unacknowledged record: reads ignore them and
 * {@linkcode FileJournal.cutTorn} removes them.
 *
 * @module
 */
import type { Journal, JournalRead } from "./storage.ts";
import { journalConflict } from "./storage_error.ts";
import { writeAll } from "./_files.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** A journal file (see the module doc). */
export class FileJournal implements Journal {
  readonly where: string;
  /** Records and bytes of the journal as this writer last saw it. */
  #seen = { records: 0, bytes: 0, torn: 0 };

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

  async read(from = 0): Promise<JournalRead> {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(this.where);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        this.#seen = { records: 0, bytes: 0, torn: 0 };
        return { records: [], end: 0, torn: 0 };
      }
      throw error;
    }
    const end = bytes.lastIndexOf(0x0a) + 1;
    let text: string;
    try {
      text = decoder.decode(bytes.subarray(0, end));
    } catch (error) {
      throw new SyntaxError(
        `Session journal ${this.where} is not valid UTF-8`,
        {
          cause: error,
        },
      );
    }
    const lines = text.split("\n");
    lines.pop();
    this.#seen = {
      records: lines.length,
      bytes: end,
      torn: bytes.length - end,
    };
    return {
      records: from === 0 ? lines : lines.slice(from),
      end: lines.length,
      torn: bytes.length - end,
    };
  }

  async append(position: number, records: readonly string[]): Promise<void> {
    if (records.length === 0) return;
    const bytes = encoder.encode(records.map((r) => `${r}\n`).join(""));
    if (
      position === 0 && this.#seen.records === 0 &&
      await this.#create(bytes, records.length)
    ) return;
    if (position !== this.#seen.records) await this.read();
    if (position !== this.#seen.records) {
      throw journalConflict(this.where, position);
    }
    using file = await Deno.open(this.where, { read: true, write: true });
    await file.lock(true);
    try {
      const size = (await file.stat()).size;
      if (size !== this.#seen.bytes + this.#seen.torn) {
        throw journalConflict(this.where, position);
      }
      if (this.#seen.torn > 0) {
        // A torn tail this writer knows of: cut it before appending.
        await file.truncate(this.#seen.bytes);
        this.#seen.torn = 0;
      }
      await file.seek(this.#seen.bytes, Deno.SeekMode.Start);
      try {
        await writeAll(file, bytes);
        await file.syncData();
      } catch (error) {
        // Cut the partial line off again, so no later append follows it.
        await file.truncate(this.#seen.bytes).catch(() => {});
        throw error;
      }
      this.#seen.records += records.length;
      this.#seen.bytes += bytes.length;
    } finally {
      await file.unlock().catch(() => {});
    }
  }

  /** Creates the journal with its first records; `false` when it exists. */
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
      if ((await file.stat()).size !== 0) throw journalConflict(this.where, 0);
      try {
        await writeAll(file, bytes);
        await file.syncData();
      } catch (error) {
        await file.truncate(0).catch(() => {});
        throw error;
      }
      this.#seen = { records: count, bytes: bytes.length, torn: 0 };
    } finally {
      file.close();
    }
    return true;
  }

  async cutTorn(): Promise<number> {
    const read = await this.read();
    if (read.torn === 0) return 0;
    using file = await Deno.open(this.where, { read: true, write: true });
    await file.lock(true);
    try {
      const size = (await file.stat()).size;
      if (size !== this.#seen.bytes + this.#seen.torn) {
        throw journalConflict(this.where, this.#seen.records);
      }
      await file.truncate(this.#seen.bytes);
      await file.syncData();
    } finally {
      await file.unlock().catch(() => {});
    }
    this.#seen.torn = 0;
    return read.torn;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
