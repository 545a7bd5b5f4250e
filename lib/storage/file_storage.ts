/**
 * The folder back-end, `file:DIR`: one folder per session, in the format
 * sessions have always had — `journal.jsonl` (one record per line),
 * `tool-results/<sha256>.txt` (bodies, written atomically, named only by
 * their digest) and `lock` (the lease). `--session DIR` without a store is
 * the folder `DIR` itself ({@linkcode folderSession}).
 *
 * @module
 */
import { basename, join, resolve } from "node:path";
import type {
  BodyStore,
  Collected,
  Lease,
  LeaseOptions,
  SessionSlot,
  Storage,
} from "./storage.ts";
import { sessionName } from "./storage.ts";
import { FileJournal } from "./_file_journal.ts";
import { acquireFileLease } from "./_file_lease.ts";
import { exists, isTempName, writeAtomic } from "./_files.ts";
import { isNoRoom, storeFull } from "./storage_error.ts";

/** Name of the journal inside a session folder. */
export const JOURNAL_FILE = "journal.jsonl";
/** Name of the state file of the old, unauthenticated format. */
export const OLD_SESSION_FILE = "session.json";
/** Name of the folder of persisted results inside a session folder. */
export const RESULTS_DIR = "tool-results";

const RESULT_NAME = /^[0-9a-f]{64}\.txt$/;

/** Result bodies in `DIR/tool-results/<sha256>.txt`. */
class FileBodies implements BodyStore {
  readonly #root: string;
  readonly #dir: string;

  constructor(root: string) {
    this.#root = root;
    this.#dir = join(root, RESULTS_DIR);
  }

  #file(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) {
      throw new TypeError(
        `Cannot address a result body by ${
          JSON.stringify(sha256)
        }: a digest is 64 lowercase hex digits`,
      );
    }
    return join(this.#dir, `${sha256}.txt`);
  }

  async put(sha256: string, bytes: Uint8Array): Promise<boolean> {
    const file = this.#file(sha256);
    if (await exists(file)) return false;
    try {
      await Deno.mkdir(this.#dir, { recursive: true, mode: 0o700 });
      await writeAtomic(file, bytes);
    } catch (error) {
      if (isNoRoom(error)) throw storeFull(this.#root, error);
      throw error;
    }
    return true;
  }

  async get(sha256: string): Promise<Uint8Array | undefined> {
    const file = this.#file(sha256);
    try {
      const info = await Deno.lstat(file);
      if (!info.isFile) {
        throw new TypeError(`Persisted result ${file} is not a regular file`);
      }
      return await Deno.readFile(file);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
  }

  has(sha256: string): Promise<boolean> {
    return exists(this.#file(sha256));
  }

  async delete(sha256: string): Promise<boolean> {
    try {
      await Deno.remove(this.#file(sha256));
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  }

  async collect(
    keep: ReadonlySet<string>,
    dryRun: boolean,
  ): Promise<Collected> {
    const doomed: { path: string; size: number }[] = [];
    const ignored: string[] = [];
    let kept = 0;
    try {
      for await (const entry of Deno.readDir(this.#root)) {
        if (entry.isFile && isTempName(entry.name)) {
          const info = await Deno.lstat(join(this.#root, entry.name))
            .catch(() => null);
          doomed.push({ path: entry.name, size: info?.size ?? 0 });
        }
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    const names: string[] = [];
    try {
      for await (const entry of Deno.readDir(this.#dir)) names.push(entry.name);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    names.sort();
    for (const name of names) {
      const path = `${RESULTS_DIR}/${name}`;
      const info = await Deno.lstat(join(this.#root, path));
      const ours = info.isFile && (RESULT_NAME.test(name) || isTempName(name));
      if (!ours) ignored.push(path);
      else if (RESULT_NAME.test(name) && keep.has(name.slice(0, 64))) {
        kept += 1;
      } else doomed.push({ path, size: info.size });
    }
    if (!dryRun) {
      for (const file of doomed) {
        await Deno.remove(join(this.#root, file.path)).catch((error) => {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        });
      }
    }
    return {
      deleted: doomed.map((f) => f.path),
      freedBytes: doomed.reduce((sum, f) => sum + f.size, 0),
      kept,
      ignored,
    };
  }
}

/** One session folder. */
class FolderSlot implements SessionSlot {
  readonly name: string;
  readonly where: string;
  readonly paths: readonly string[];
  readonly journal: FileJournal;
  readonly bodies: BodyStore;

  constructor(root: string, name: string) {
    this.name = name;
    this.where = root;
    this.paths = [root];
    this.journal = new FileJournal(join(root, JOURNAL_FILE));
    this.bodies = new FileBodies(root);
  }

  async outdated(): Promise<string | undefined> {
    const old = join(this.where, OLD_SESSION_FILE);
    return (await exists(old)) ? old : undefined;
  }

  async prepare(): Promise<void> {
    await Deno.mkdir(join(this.where, RESULTS_DIR), {
      recursive: true,
      mode: 0o700,
    });
  }

  acquireLease(options?: LeaseOptions): Promise<Lease> {
    return acquireFileLease(this.where, options);
  }
}

/**
 * The session stored in exactly the folder `dir` (what `--session DIR`
 * means without `--store`).
 *
 * @param dir The session folder (need not exist yet).
 * @returns Its slot; its name is the folder's base name.
 *
 * @example
 * ```ts
 * import { folderSession } from "./file_storage.ts";
 * import assert from "node:assert/strict";
 * const dir = `${await Deno.makeTempDir()}/run-1`;
 * const slot = folderSession(dir);
 * await slot.prepare();
 * await slot.journal.append(0, ['{"seq":0}']);
 * assert.equal(await Deno.readTextFile(`${dir}/journal.jsonl`), '{"seq":0}\n');
 * assert.equal(slot.name, "run-1");
 * ```
 */
export function folderSession(dir: string): SessionSlot {
  const root = resolve(dir);
  return new FolderSlot(root, basename(root) || "session");
}

/**
 * A store of session folders under one directory (`file:DIR`): session
 * `NAME` is the folder `DIR/NAME`.
 *
 * @example
 * ```ts
 * import { FileStorage } from "./file_storage.ts";
 * import assert from "node:assert/strict";
 * const store = await FileStorage.open(await Deno.makeTempDir());
 * const slot = store.session("a");
 * await slot.prepare();
 * await slot.journal.append(0, ["{}"]);
 * assert.deepEqual(await store.listSessions(), ["a"]);
 * ```
 */
export class FileStorage implements Storage {
  readonly kind: "file" = "file";
  readonly location: string;
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
    this.location = `file:${dir}`;
  }

  /**
   * A store over the directory `dir` (created on the first write).
   *
   * @param dir The directory.
   * @returns The store.
   */
  static open(dir: string): Promise<FileStorage> {
    return Promise.resolve(new FileStorage(resolve(dir)));
  }

  session(name: string): SessionSlot {
    return new FolderSlot(join(this.#dir, sessionName(name)), name);
  }

  async listSessions(): Promise<string[]> {
    const names: string[] = [];
    try {
      for await (const entry of Deno.readDir(this.#dir)) {
        if (!entry.isDirectory) continue;
        for (const file of [JOURNAL_FILE, OLD_SESSION_FILE]) {
          const info = await Deno.lstat(join(this.#dir, entry.name, file))
            .catch(() => undefined);
          if (info?.isFile) {
            names.push(entry.name);
            break;
          }
        }
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return names.sort();
  }

  async deleteSession(name: string): Promise<void> {
    await Deno.remove(join(this.#dir, sessionName(name)), { recursive: true })
      .catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
