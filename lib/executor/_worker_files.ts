/**
 * Part of the executor's worker (see `_worker.ts`): the guards every effect
 * goes through — paths resolved against the workspace and confined to its
 * real path, files opened only when regular and never through a symlink
 * swapped in last, reads bounded, errors translated into stable codes and
 * path-free messages — and the state the worker's parts share.
 *
 * Like all of the worker, {@linkcode workerFiles} must stay self-contained
 * (it is shipped as source text): only type imports, nothing referenced
 * from outside the function but its parameter and the runtime's globals.
 *
 * @module
 */
import type { InitMessage, Reply } from "./_protocol.ts";

/** The worker's global scope, as the parts use it. */
export interface WorkerScope {
  postMessage(message: Reply, transfer?: Transferable[]): void;
}

export type NodeFs = typeof import("node:fs");
export type NodeCrypto = typeof import("node:crypto");

/** The stat a remembered file or directory is compared by. */
export interface StatKey {
  size: number;
  mtime: number;
  ctime: number;
  ino: number;
  dev: number;
  mode: number;
}

/** What the survey remembers of a file it hashed. */
export interface Cached extends StatKey {
  /** The file's line of the tree digest (path, executable bit, SHA-256). */
  line: string;
  /** Whether both times were safely older than the survey (the racy rule). */
  clean: boolean;
}

/** What the survey remembers of a directory it read. */
export interface ListedDir extends StatKey {
  /** Whether both times were safely older than the survey (the racy rule). */
  clean: boolean;
  /** The entries' names, sorted. */
  names: string[];
  /** Whether each entry is a directory (not following symlinks). */
  dirs: boolean[];
}

/** What the worker's parts share: its configuration, the Node APIs it loaded, the survey's memory. */
export interface WorkerState {
  config: InitMessage | undefined;
  fs: NodeFs | undefined;
  nodeCrypto: NodeCrypto | undefined;
  /** Survey's stat cache: workspace-relative path → what was hashed. */
  cache: Map<string, Cached>;
  /** The listing's: `""` or `dir/` → what the directory held. */
  listed: Map<string, ListedDir>;
}

/** The guards of the worker's effects, over the state they share. */
// deno-lint-ignore explicit-function-return-type
export function workerFiles(state: WorkerState) {
  /**
   * How much older than the survey a file's times must be for its cached
   * hash to be trusted (git's racy-timestamp rule): the kernel stamps files
   * with a clock that may lag by a tick, and Deno reports ctime in whole
   * seconds, which the check accounts for separately.
   */
  const RACY_MARGIN_MS = 1000;

  function statKey(info: Deno.FileInfo): StatKey {
    return {
      size: info.size,
      mtime: info.mtime?.getTime() ?? 0,
      ctime: info.ctime?.getTime() ?? 0,
      ino: info.ino ?? 0,
      dev: info.dev,
      mode: info.mode ?? 0,
    };
  }

  function sameStat(known: StatKey, info: Deno.FileInfo): boolean {
    return known.size === info.size &&
      known.mtime === (info.mtime?.getTime() ?? 0) &&
      known.ctime === (info.ctime?.getTime() ?? 0) &&
      known.ino === (info.ino ?? 0) && known.dev === info.dev &&
      known.mode === (info.mode ?? 0);
  }

  /**
   * Whether a stat's times are safely older than `before`, taken before
   * the stat: a change the stat does not see happens later, so the kernel
   * stamps it at least this late (less a tick). Deno reports ctime in
   * whole seconds: its true value may be up to a second later than shown.
   * Without both times nothing is trusted.
   */
  function settled(info: Deno.FileInfo, before: number): boolean {
    return info.ctime !== null && info.mtime !== null &&
      info.ctime.getTime() + 1000 + RACY_MARGIN_MS <= before &&
      info.mtime.getTime() + 1 + RACY_MARGIN_MS <= before;
  }

  /** An error whose name is a stable code and whose message is safe to show. */
  function fail(code: string, message: string): Error {
    const error = new Error(message);
    error.name = code;
    return error;
  }

  function normalize(path: string): string {
    const parts: string[] = [];
    for (const part of path.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") parts.pop();
      else parts.push(part);
    }
    return "/" + parts.join("/");
  }

  function resolve(root: string, path: string): string {
    return normalize(path.startsWith("/") ? path : root + "/" + path);
  }

  function dirname(path: string): string {
    const at = path.lastIndexOf("/");
    return at <= 0 ? "/" : path.slice(0, at);
  }

  function inside(path: string, root: string): boolean {
    return path === root || path.startsWith(root + "/");
  }

  function show(path: string): string {
    return JSON.stringify(path.length > 200 ? path.slice(0, 200) + "…" : path);
  }

  function requireConfig(): InitMessage {
    if (state.config === undefined) {
      throw fail("not_initialized", "The worker has not been initialised");
    }
    return state.config;
  }

  /** Maps an error of Deno's file API to a code and a path-free message. */
  function translate(error: unknown, path: string, doing: string): Error {
    if (error instanceof Error && /^[a-z][a-z0-9_]*$/.test(error.name)) {
      return error;
    }
    const errno = (error as { code?: unknown } | null)?.code;
    if (error instanceof Deno.errors.NotFound || errno === "ENOENT") {
      return fail(
        "not_found",
        `Cannot ${doing} ${show(path)}: it does not exist`,
      );
    }
    if (error instanceof Deno.errors.NotCapable) {
      return fail(
        "outside_workspace",
        `Cannot ${doing} ${show(path)}: it lies outside the workspace`,
      );
    }
    if (errno === "ELOOP") {
      return fail(
        "symlink_escape",
        `Cannot ${doing} ${
          show(path)
        }: it became a symlink after it was checked, and symlinks are not followed here`,
      );
    }
    if (
      error instanceof Deno.errors.PermissionDenied || errno === "EACCES" ||
      errno === "EPERM"
    ) {
      return fail(
        "permission_denied",
        `Cannot ${doing} ${show(path)}: the operating system denied access`,
      );
    }
    if (error instanceof Deno.errors.IsADirectory || errno === "EISDIR") {
      return fail(
        "not_a_file",
        `Cannot ${doing} ${show(path)}: it is a directory`,
      );
    }
    const name = error instanceof Error ? error.name : "Error";
    return fail("io_error", `Cannot ${doing} ${show(path)}: ${name}`);
  }

  async function exists(path: string): Promise<Deno.FileInfo | null> {
    try {
      return await Deno.lstat(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
  }

  /** Refuses a real path that leads outside the workspace. */
  async function confine(
    full: string,
    root: string,
    shown: string,
  ): Promise<string> {
    let real: string;
    try {
      real = await Deno.realPath(full);
    } catch (error) {
      // Inside bubblewrap an outside target does not exist at all: say
      // where the path leads rather than that it is missing.
      if (error instanceof Deno.errors.NotFound) {
        await refuseLexicalEscape(full, root, shown);
      }
      throw error;
    }
    if (!inside(real, root)) {
      throw fail(
        "symlink_escape",
        `${show(shown)} leads through a symlink to outside the workspace`,
      );
    }
    return real;
  }

  /** Throws `symlink_escape` when a symlink on the path points outside. */
  async function refuseLexicalEscape(
    full: string,
    root: string,
    shown: string,
  ): Promise<void> {
    const parts = full.slice(root.length + 1).split("/");
    let current = root;
    for (const part of parts) {
      const next = current + "/" + part;
      let info: Deno.FileInfo;
      try {
        info = await Deno.lstat(next);
      } catch {
        return;
      }
      if (info.isSymlink) {
        const target = resolve(current, await Deno.readLink(next));
        if (!inside(target, root)) {
          throw fail(
            "symlink_escape",
            `${show(shown)} leads through a symlink to outside the workspace`,
          );
        }
        current = target;
      } else current = next;
    }
  }

  function nodeFs(): NodeFs {
    if (state.fs === undefined) {
      throw fail("not_initialized", "No file API yet");
    }
    return state.fs;
  }

  /** What kind of special file `info` describes, or `null` for none. */
  function special(info: Deno.FileInfo): string | null {
    if (info.isFifo) return "a FIFO (named pipe)";
    if (info.isSocket) return "a socket";
    if (info.isCharDevice) return "a character device";
    if (info.isBlockDevice) return "a block device";
    return null;
  }

  /** Refuses, from its metadata, anything but a regular file. */
  function requireRegular(info: Deno.FileInfo, shown: string): void {
    const kind = special(info);
    if (kind !== null) {
      throw fail(
        "not_regular_file",
        `${
          show(shown)
        } is ${kind}, not a regular file: it is not opened, since reading it could block or never end`,
      );
    }
    if (info.isDirectory) {
      throw fail("not_a_file", `${show(shown)} is a directory`);
    }
    if (!info.isFile) {
      throw fail("not_regular_file", `${show(shown)} is not a regular file`);
    }
  }

  /**
   * Opens a checked path for reading without blocking and without
   * following a final symlink. Whatever was swapped in after the check, the
   * open cannot wait (a FIFO opens at once, a read of it never waits) and
   * the reads after it are bounded by the size limit.
   */
  function openQuick(real: string): number {
    const api = nodeFs();
    const c = api.constants;
    return api.openSync(real, c.O_RDONLY | c.O_NONBLOCK | c.O_NOFOLLOW);
  }

  /**
   * {@linkcode openQuick}, then checks the open file is still a regular
   * file with a single link. Returns the descriptor and its size.
   */
  function openRegular(
    real: string,
    shown: string,
  ): { fd: number; size: number } {
    const api = nodeFs();
    const fd = openQuick(real);
    try {
      const info = api.fstatSync(fd);
      if (!info.isFile()) {
        throw fail(
          "not_regular_file",
          `${
            show(shown)
          } is not a regular file: it was replaced after it was checked`,
        );
      }
      if (info.nlink > 1) {
        throw fail(
          "hard_link",
          `${
            show(shown)
          } has ${info.nlink} hard links: its contents may belong to a file outside the workspace`,
        );
      }
      return { fd, size: info.size };
    } catch (error) {
      api.closeSync(fd);
      throw error;
    }
  }

  /**
   * Reads at most `limit + 1` bytes into one buffer sized from the file's
   * size; more than `limit` is `too_large`.
   */
  function readLimited(
    fd: number,
    size: number,
    limit: number,
    shown: string,
  ): Uint8Array<ArrayBuffer> {
    const api = nodeFs();
    let buffer = new Uint8Array(Math.min(size, limit) + 1);
    let total = 0;
    while (true) {
      if (total === buffer.length) {
        if (total > limit) break;
        const grown = new Uint8Array(Math.min(buffer.length * 2, limit + 1));
        grown.set(buffer);
        buffer = grown;
      }
      const read = api.readSync(fd, buffer, total, buffer.length - total, null);
      if (read === 0) break;
      total += read;
    }
    if (total > limit) {
      throw fail(
        "too_large",
        `${show(shown)} holds more than the ${limit} bytes inspect reads`,
      );
    }
    return buffer.subarray(0, total);
  }

  return {
    confine,
    dirname,
    exists,
    fail,
    inside,
    nodeFs,
    normalize,
    openQuick,
    openRegular,
    readLimited,
    requireConfig,
    requireRegular,
    resolve,
    sameStat,
    settled,
    show,
    special,
    statKey,
    translate,
  };
}

/** What {@linkcode workerFiles} gives the other parts. */
export type WorkerFiles = ReturnType<typeof workerFiles>;
