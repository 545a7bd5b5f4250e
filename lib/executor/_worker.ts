/**
 * The body of the executor's worker. `workerMain` must stay self-contained
 * (no references to anything outside the function, only type imports): the
 * executor ships it as the source text `WORKER_SOURCE` in a `blob:` URL, so
 * it works the same from source, from a `deno bundle` single file and from a
 * compiled binary — there is no separate worker module file to locate.
 *
 * Paths are resolved against the workspace and handed to Deno as they are,
 * so that Deno's permission check is the first guard an escaping path meets
 * (a `NotCapable` error). Deno checks paths lexically and does not follow
 * symlinks, so the worker also resolves real paths and refuses any that
 * lead outside the workspace. Files with more than one hard link are
 * refused: their contents may belong to a file outside the workspace.
 *
 * Files are opened only after `lstat` says they are regular files: a FIFO,
 * a socket or a device node is refused as `not_regular_file` from its
 * metadata and never opened. Between that check and the open a hostile
 * process could swap the file for a FIFO, whose blocking open would wait
 * for a writer forever; so files are opened through `node:fs` with
 * `O_NONBLOCK | O_NOFOLLOW` (an open that cannot block and never follows a
 * symlink swapped in last), reads are bounded by the size limit, and
 * `inspect` checks `fstat` on the open descriptor before it reads a byte.
 *
 * Every failure crosses the boundary as `{name: code, message}` where the
 * message names workspace-relative paths only, never a host path.
 *
 * @module
 */
import type {
  AttachMessage,
  DescribeMessage,
  DescribeReply,
  EditMessage,
  HelperFailedMessage,
  HelperMessage,
  HelpersMessage,
  InitMessage,
  InitReply,
  InspectEntry,
  InspectMessage,
  Reply,
  Request,
  SurveyReply,
  WireError,
} from "./_protocol.ts";

/** What a worker is sent by whoever started it. */
type WorkerRequest =
  | Request
  | AttachMessage
  | HelpersMessage
  | HelperFailedMessage;

/** What a helper is asked, on its port, by the worker it helps. */
type HelperRequest = HelperMessage | DescribeMessage;

interface WorkerScope {
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: Reply, transfer?: Transferable[]): void;
}

type NodeFs = typeof import("node:fs");
type NodeCrypto = typeof import("node:crypto");

/** The stat a remembered file or directory is compared by. */
interface StatKey {
  size: number;
  mtime: number;
  ctime: number;
  ino: number;
  dev: number;
  mode: number;
}

/** What the survey remembers of a file it hashed. */
interface Cached extends StatKey {
  /** The file's line of the tree digest (path, executable bit, SHA-256). */
  line: string;
  /** Whether both times were safely older than the survey (the racy rule). */
  clean: boolean;
}

/** What the survey remembers of a directory it read. */
interface ListedDir extends StatKey {
  /** Whether both times were safely older than the survey (the racy rule). */
  clean: boolean;
  /** The entries' names, sorted. */
  names: string[];
  /** Whether each entry is a directory (not following symlinks). */
  dirs: boolean[];
}

/** Runs inside the worker: answers {@linkcode Request}s, one at a time. */
export function workerMain(): void {
  const scope = globalThis as unknown as WorkerScope;
  let config: InitMessage | undefined;
  let queue: Promise<void> = Promise.resolve();
  let fs: NodeFs | undefined;
  let nodeCrypto: NodeCrypto | undefined;
  /** Survey's stat cache: workspace-relative path → what was hashed. */
  let cache = new Map<string, Cached>();
  /** The listing's: `""` or `dir/` → what the directory held. */
  let listed = new Map<string, ListedDir>();
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
    if (config === undefined) {
      throw fail("not_initialized", "The worker has not been initialised");
    }
    return config;
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
    if (fs === undefined) throw fail("not_initialized", "No file API yet");
    return fs;
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

  async function init(message: InitMessage): Promise<InitReply> {
    config = message;
    fs = await import("node:fs");
    nodeCrypto = await import("node:crypto");
    const permissions: Record<string, string> = {};
    const probes: [string, Deno.PermissionDescriptor][] = [
      ["read", { name: "read" }],
      ["write", { name: "write" }],
      ["read:workspace", { name: "read", path: message.workspace }],
      ["write:workspace", { name: "write", path: message.workspace }],
      ["run", { name: "run" }],
      ["net", { name: "net" }],
      ["env", { name: "env" }],
      ["sys", { name: "sys" }],
      ["ffi", { name: "ffi" }],
    ];
    for (const [key, descriptor] of probes) {
      permissions[key] = Deno.permissions.querySync(descriptor).state;
    }
    return { permissions };
  }

  async function inspectOne(
    workspace: string,
    path: string,
    limit: number,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const full = resolve(workspace, path);
    try {
      const real = await confine(full, workspace, path);
      requireRegular(Deno.lstatSync(real), path);
      const { fd, size } = openRegular(real, path);
      try {
        return readLimited(fd, size, limit, path);
      } finally {
        nodeFs().closeSync(fd);
      }
    } catch (error) {
      throw translate(error, path, "read");
    }
  }

  /** Sends each file as its own part, as soon as it is read. */
  async function inspect(message: InspectMessage): Promise<number> {
    const { workspace, maxFileBytes } = requireConfig();
    for (const path of message.paths) {
      let entry: InspectEntry;
      const transfer: Transferable[] = [];
      try {
        const bytes = await inspectOne(workspace, path, maxFileBytes);
        entry = { path, bytes };
        transfer.push(bytes.buffer);
      } catch (error) {
        const err = error as Error;
        entry = { path, code: err.name, error: err.message };
        if (err.name === "not_found") entry.missing = true;
      }
      scope.postMessage({ id: message.id, part: entry }, transfer);
    }
    return message.paths.length;
  }

  interface Plan {
    /** The path as asked. */
    path: string;
    full: string;
    temp: string | null;
    /** Inode of the file or symlink replaced, or null for a new file. */
    previous: { ino: number | null } | null;
    backup: string | null;
    renamed: boolean;
  }

  function sideName(full: string, kind: string): string {
    const parent = dirname(full);
    const name = full.slice(parent.length + 1);
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    const random = Array.from(bytes, (b) => b.toString(16).padStart(2, "0"))
      .join("");
    return `${parent}/.${name}.loom-${random}.${kind}`;
  }

  async function edit(message: EditMessage): Promise<null> {
    const { workspace } = requireConfig();
    const plans: Plan[] = [];
    const created: string[] = [];
    const seen = new Set<string>();
    let current = "";
    try {
      // Phase 1: check every target, make parents, write temp files.
      for (const file of message.files) {
        current = file.path;
        const full = resolve(workspace, file.path);
        if (full === workspace || seen.has(full)) {
          throw fail("invalid_path", `Cannot write ${show(file.path)} here`);
        }
        seen.add(full);
        const parent = dirname(full);
        // The deepest existing ancestor must really be inside the workspace.
        const missing: string[] = [];
        let probe = parent;
        while ((await exists(probe)) === null) {
          missing.unshift(probe);
          probe = dirname(probe);
        }
        await confine(probe, workspace, file.path);
        for (const dir of missing) {
          await Deno.mkdir(dir);
          created.push(dir);
        }
        await confine(parent, workspace, file.path);
        const plan: Plan = {
          path: file.path,
          full,
          temp: null,
          previous: null,
          backup: null,
          renamed: false,
        };
        plans.push(plan);
        const info = await exists(full);
        if (info?.isDirectory) {
          throw fail(
            "not_a_file",
            `Cannot write ${show(file.path)}: it is a directory`,
          );
        }
        if (info !== null && !info.isFile && !info.isSymlink) {
          throw fail(
            "not_a_file",
            `Cannot write ${show(file.path)}: it is ${
              special(info) ?? "not a regular file"
            }`,
          );
        }
        if (info?.isSymlink) await confine(full, workspace, file.path);
        if (info?.isFile && (info.nlink ?? 1) > 1) {
          throw fail(
            "hard_link",
            `Cannot write ${show(file.path)}: it has ${info.nlink} hard links`,
          );
        }
        if (info !== null) plan.previous = { ino: info.ino };
        plan.temp = sideName(full, "tmp");
        await Deno.writeFile(plan.temp, file.contents, {
          createNew: true,
          ...(info?.isFile && info.mode !== null
            ? { mode: info.mode & 0o777 }
            : {}),
        });
      }
      // Phase 2: move each old file aside under an unpredictable name, then
      // rename the new one into place. Nothing is copied, nothing followed.
      for (const plan of plans) {
        current = plan.path;
        await confine(dirname(plan.full), workspace, plan.path);
        if (plan.previous !== null) {
          const backup = sideName(plan.full, "bak");
          await Deno.rename(plan.full, backup);
          plan.backup = backup;
        }
        await Deno.rename(plan.temp as string, plan.full);
        plan.renamed = true;
        plan.temp = null;
      }
    } catch (error) {
      const failed = await rollback(plans, created);
      const cause = translate(error, current, "write");
      if (failed.length > 0) {
        throw fail(
          "rollback_failed",
          `${cause.message}; restoring the workspace failed for ${
            failed.map(show).join(", ")
          }, which may hold changed or missing contents`,
        );
      }
      throw cause;
    }
    for (const plan of plans) {
      if (plan.backup === null) continue;
      try {
        await Deno.remove(plan.backup);
      } catch {
        // A stray backup is harmless: the edit itself is complete.
      }
    }
    return null;
  }

  /** Undoes phase 2; returns the paths whose restore could not be verified. */
  async function rollback(plans: Plan[], created: string[]): Promise<string[]> {
    const failed: string[] = [];
    for (const plan of plans.slice().reverse()) {
      try {
        if (plan.temp !== null) await Deno.remove(plan.temp);
        // Phase 2 never touched this path: nothing to restore.
        if (!plan.renamed && plan.backup === null) continue;
        if (plan.renamed) await Deno.remove(plan.full);
        if (plan.backup !== null) await Deno.rename(plan.backup, plan.full);
        const now = await exists(plan.full);
        const restored = plan.previous === null
          ? now === null
          : now !== null && now.ino === plan.previous.ino;
        if (!restored) failed.push(plan.path);
      } catch {
        failed.push(plan.path);
      }
    }
    for (const dir of created.slice().reverse()) {
      try {
        await Deno.remove(dir);
      } catch {
        failed.push(dir.slice(requireConfig().workspace.length + 1) + "/");
      }
    }
    return failed;
  }

  /** The entries of the tree, in digest order (see {@linkcode listTree}). */
  interface Listing {
    /** One character per entry: `l` a finished line, `e` a path to describe. */
    kinds: string[];
    /** The finished line, or the workspace-relative path. */
    values: string[];
  }

  /**
   * Lists the tree (not following symlinks, `.git` aside) from the
   * directories' entries alone: a directory becomes its digest line and its
   * own entries, anything else a path to describe (by
   * {@linkcode describe}). A directory is read again only when its stat
   * differs from the one remembered with its entries, or the remembered
   * times were not safely older than the survey that read it: adding,
   * removing or renaming an entry sets the directory's mtime and ctime, and
   * ctime cannot be set back. Otherwise it costs its `lstat`.
   */
  function listTree(
    workspace: string,
    before: number,
    beat: () => void,
  ): Listing {
    const kinds: string[] = [];
    const values: string[] = [];
    const next = new Map<string, ListedDir>();
    function entriesOf(dir: string, prefix: string): ListedDir {
      const info = Deno.lstatSync(dir);
      if (!info.isDirectory) {
        throw fail("not_a_directory", "Replaced after its parent was read");
      }
      const known = listed.get(prefix);
      if (known !== undefined && known.clean && sameStat(known, info)) {
        return known;
      }
      const entries: Deno.DirEntry[] = [];
      for (const entry of Deno.readDirSync(dir)) entries.push(entry);
      entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      return {
        ...statKey(info),
        clean: settled(info, before),
        names: entries.map((entry) => entry.name),
        dirs: entries.map((entry) => entry.isDirectory),
      };
    }
    function walk(dir: string, prefix: string): void {
      let entries: ListedDir;
      try {
        entries = entriesOf(dir, prefix);
      } catch {
        // Gone or replaced while walking: the digest says so, nothing more.
        kinds.push("l");
        values.push(`? ${JSON.stringify(prefix)}`);
        return;
      }
      next.set(prefix, entries);
      const { names, dirs } = entries;
      for (let at = 0; at < names.length; at++) {
        const name = names[at] as string;
        if (prefix === "" && name === ".git") continue;
        const rel = prefix + name;
        if (dirs[at]) {
          kinds.push("l");
          values.push(`d ${JSON.stringify(rel)}`);
          walk(dir + "/" + name, rel + "/");
        } else {
          kinds.push("e");
          values.push(rel);
        }
        if ((values.length & 1023) === 0) beat();
      }
    }
    walk(workspace, "");
    listed = next;
    return { kinds, values };
  }

  /** What describing a share of the entries found. */
  interface Described {
    lines: string[];
    escapes: string[];
    links: [string, number, string][];
    hashed: number;
  }

  /**
   * Describes the entries `from` to `to` of a listing with synchronous
   * calls: a regular file's contents are read and hashed only when its stat
   * differs from the one remembered with its hash — path, size, mtime,
   * ctime, inode, device and mode — or when the remembered times were not
   * safely older than the survey that hashed it (git's racy-timestamp
   * rule). ctime is set by the kernel on every change of contents, mode or
   * name and cannot be set back without changing the system clock, so a
   * file rewritten with its mtime restored is hashed again. A file whose
   * stat matches costs its `lstat` and nothing more: its whole digest line
   * is remembered with it. What is remembered goes into `next`.
   */
  function describe(
    listing: Listing,
    from: number,
    to: number,
    before: number,
    next: Map<string, Cached>,
    beat: () => void,
  ): Described {
    const { workspace, digestFileBytes } = requireConfig();
    const api = nodeFs();
    const hasher = nodeCrypto;
    if (hasher === undefined) throw fail("not_initialized", "No hash yet");
    const found: Described = { lines: [], escapes: [], links: [], hashed: 0 };
    function contentSum(full: string, info: Deno.FileInfo): string {
      if (info.size > digestFileBytes) {
        return `large:${info.size}:${info.mtime?.getTime() ?? 0}:${
          info.ctime?.getTime() ?? 0
        }:${info.ino}`;
      }
      // No fstat here (it is slow through node:fs, and a survey opens every
      // file): lstat said regular, and the open and reads cannot block. The
      // size lstat gave is read and no more, without a read to see the end:
      // a file changed after that stat has a later stat, so the next survey
      // reads it again.
      const fd = openQuick(full);
      try {
        const bytes = new Uint8Array(info.size);
        let total = 0;
        while (total < bytes.length) {
          const read = api.readSync(
            fd,
            bytes,
            total,
            bytes.length - total,
            null,
          );
          if (read === 0) break;
          total += read;
        }
        found.hashed += 1;
        return hasher!.createHash("sha256").update(bytes.subarray(0, total))
          .digest("hex");
      } finally {
        api.closeSync(fd);
      }
    }
    /** The digest line of a regular file: remembered, or read and hashed. */
    function fileLine(full: string, rel: string, info: Deno.FileInfo): string {
      const known = cache.get(rel);
      if (known !== undefined && known.clean && sameStat(known, info)) {
        next.set(rel, known);
        return known.line;
      }
      const sum = contentSum(full, info);
      const line = `f ${JSON.stringify(rel)} ${
        (info.mode ?? 0) & 0o111 ? "x" : "-"
      } ${sum}`;
      next.set(rel, { ...statKey(info), line, clean: settled(info, before) });
      return line;
    }
    function entryLine(rel: string): string {
      const full = workspace + "/" + rel;
      const info = Deno.lstatSync(full);
      if (info.isFile) {
        if ((info.nlink ?? 1) > 1) {
          found.links.push([`${info.dev}:${info.ino}`, info.nlink ?? 1, rel]);
        }
        return fileLine(full, rel, info);
      }
      if (info.isSymlink) {
        const target = Deno.readLinkSync(full);
        let escaped = !inside(resolve(dirname(full), target), workspace);
        try {
          escaped ||= !inside(Deno.realPathSync(full), workspace);
        } catch {
          // Dangling: judged by its text alone.
        }
        if (escaped) found.escapes.push(rel);
        return `l ${JSON.stringify(rel)} ${JSON.stringify(target)}`;
      }
      // A directory here was put in place after its parent was listed.
      if (info.isDirectory) return `? ${JSON.stringify(rel)}`;
      // FIFOs, sockets, devices: never opened.
      return `o ${JSON.stringify(rel)}`;
    }
    const { kinds, values } = listing;
    for (let at = from; at < to; at++) {
      const value = values[at] as string;
      if (kinds[at] === "l") {
        found.lines.push(value);
        continue;
      }
      try {
        found.lines.push(entryLine(value));
      } catch {
        found.lines.push(`? ${JSON.stringify(value)}`);
      }
      if ((at & 255) === 0) beat();
    }
    return found;
  }

  /** A survey helper: a worker beside this one, reading the workspace only. */
  interface Helper {
    port: MessagePort;
    waiting: Map<number, (answer: unknown) => void>;
    broken: boolean;
  }
  /** The helpers, once asked for: kept for every later survey. */
  let helpers: Promise<Helper[]> | null = null;
  /** Takes the helpers' ports when whoever started this worker sends them. */
  let offered: ((ports: readonly MessagePort[]) => void) | null = null;
  let helperIds = 0;
  /** How long to wait for the helpers asked for before surveying alone. */
  const HELPERS_WAIT_MS = 5_000;

  function breakDown(helper: Helper): void {
    helper.broken = true;
    helper.port.close();
    for (const done of helper.waiting.values()) done(null);
    helper.waiting.clear();
  }

  /** Asks a helper; `null` when it failed or is broken. */
  function request(
    helper: Helper,
    message: { op: string; [key: string]: unknown },
  ): Promise<unknown> {
    if (helper.broken) return Promise.resolve(null);
    const id = ++helperIds;
    return new Promise((done) => {
      helper.waiting.set(id, done);
      helper.port.postMessage({ ...message, id });
    });
  }

  /** The survey under way, whose beats a helper's progress renews. */
  let surveying = 0;

  /**
   * A helper on `port`: it gets the configuration, and is kept only when
   * it reports exactly the permissions a helper holds (reading the
   * workspace, nothing else); otherwise it is broken from the start.
   */
  async function attach(port: MessagePort): Promise<Helper> {
    const { workspace, digestFileBytes } = requireConfig();
    const helper: Helper = { port, waiting: new Map(), broken: false };
    port.onmessage = (event: MessageEvent<Reply>) => {
      const reply = event.data;
      if ("alive" in reply) {
        // The helper's progress is the survey's: relayed, so a helper that
        // stops answering stops the beats and the executor's watchdog acts.
        scope.postMessage({ id: surveying, alive: true });
        return;
      }
      const done = helper.waiting.get(reply.id);
      if (done === undefined || !("ok" in reply)) return;
      helper.waiting.delete(reply.id);
      if (reply.ok) done(reply.value);
      else breakDown(helper);
    };
    const states = await request(helper, {
      op: "helper",
      workspace,
      digestFileBytes,
    }) as Record<string, string> | null;
    const exact = states !== null &&
      states["read:workspace"] === "granted" &&
      ["read", "write", "write:workspace", "run", "net", "env", "sys", "ffi"]
        .every((name) => states[name] !== "granted");
    if (!exact) breakDown(helper);
    return helper;
  }

  /**
   * The helpers, asked for on the first large survey: whoever started this
   * worker (the executor, or the relay inside bubblewrap) starts them beside
   * it — a worker started by a worker takes a second to boot — and sends a
   * port to each, in the order of their indices. Each describes a share of
   * every later survey and remembers the stats of its share.
   */
  function startHelpers(count: number): Promise<Helper[]> {
    if (helpers !== null) return helpers;
    helpers = new Promise<readonly MessagePort[]>((done) => {
      const timer = setTimeout(() => done([]), HELPERS_WAIT_MS);
      offered = (ports) => {
        clearTimeout(timer);
        offered = null;
        done(ports);
      };
      scope.postMessage({ id: surveying, spawn: count });
    }).then((ports) => Promise.all(ports.map(attach)));
    return helpers;
  }

  /** Asks a helper to describe a share; `null` when it cannot. */
  async function ask(
    helper: Helper,
    listing: Listing,
    from: number,
    to: number,
    before: number,
  ): Promise<DescribeReply | null> {
    return await request(helper, {
      op: "describe",
      kinds: listing.kinds.slice(from, to).join(""),
      values: listing.values.slice(from, to).join("\0"),
      before,
    }) as DescribeReply | null;
  }

  /** A helper's answer to a `describe`, over its own share and cache. */
  function describeShare(
    message: DescribeMessage,
    beat: () => void,
  ): DescribeReply {
    const listing = {
      kinds: message.kinds.split(""),
      values: message.kinds === "" ? [] : message.values.split("\0"),
    };
    const next = new Map<string, Cached>();
    const found = describe(
      listing,
      0,
      listing.kinds.length,
      message.before,
      next,
      beat,
    );
    cache = next;
    return {
      text: found.lines.join("\n"),
      count: found.lines.length,
      escapes: found.escapes,
      links: found.links,
      hashed: found.hashed,
    };
  }

  /**
   * Surveys the tree: lists it, then describes its entries — a large tree
   * in contiguous shares, one per helper (sent first) and one here, all at
   * once. Each worker keeps the stats of its share; an entry whose share
   * moves to another worker is read again there. A helper that fails
   * leaves its share to this worker. Sends an `alive` beat every second.
   */
  async function survey(id: number): Promise<SurveyReply> {
    const { workspace, surveyHelpers, surveySharedFrom } = requireConfig();
    const hasher = nodeCrypto;
    if (hasher === undefined) throw fail("not_initialized", "No hash yet");
    // Taken before every stat of this survey: one time for the whole
    // survey errs on the safe side of the racy rule.
    const before = Date.now();
    let last = before;
    const beat = () => {
      const now = Date.now();
      if (now - last >= 1000) {
        last = now;
        scope.postMessage({ id, alive: true });
      }
    };
    surveying = id;
    const listing = listTree(workspace, before, beat);
    const total = listing.kinds.length;
    const shared = surveyHelpers > 0 && total >= surveySharedFrom
      ? (await startHelpers(surveyHelpers)).filter((h) => !h.broken)
      : [];
    const shares = shared.length + 1;
    const bounds = Array.from(
      { length: shares + 1 },
      (_, k) => Math.floor((k * total) / shares),
    );
    const asked = shared.map((helper, k) =>
      ask(
        helper,
        listing,
        bounds[k + 1] as number,
        bounds[k + 2] as number,
        before,
      )
    );
    const next = new Map<string, Cached>();
    const parts: (Described | DescribeReply)[] = [
      describe(listing, 0, bounds[1] as number, before, next, beat),
    ];
    let helped = 0;
    for (const [k, pending] of asked.entries()) {
      const answer = await pending;
      if (answer !== null) helped += 1;
      parts.push(
        answer ?? describe(
          listing,
          bounds[k + 1] as number,
          bounds[k + 2] as number,
          before,
          next,
          beat,
        ),
      );
    }
    cache = next;
    const texts: string[] = [];
    const escapes: string[] = [];
    const links = new Map<string, { paths: string[]; nlink: number }>();
    let hashed = 0;
    for (const part of parts) {
      if ("lines" in part) {
        if (part.lines.length > 0) texts.push(part.lines.join("\n"));
      } else if (part.count > 0) texts.push(part.text);
      escapes.push(...part.escapes);
      for (const [key, nlink, path] of part.links) {
        const known = links.get(key) ?? { paths: [], nlink };
        known.paths.push(path);
        links.set(key, known);
      }
      hashed += part.hashed;
    }
    const externalLinks: string[] = [];
    for (const { paths, nlink } of links.values()) {
      if (paths.length < nlink) externalLinks.push(...paths);
    }
    const digest = hasher.createHash("sha256").update(texts.join("\n"))
      .digest("hex");
    return {
      digest,
      escapes,
      externalLinks: externalLinks.sort(),
      hashed,
      helpers: helped,
    };
  }

  /** A helper's configuration: returns its permission states. */
  async function becomeHelper(
    message: HelperMessage,
  ): Promise<Record<string, string>> {
    config = {
      op: "init",
      id: 0,
      workspace: message.workspace,
      maxFileBytes: 0,
      digestFileBytes: message.digestFileBytes,
      surveyHelpers: 0,
      surveySharedFrom: 0,
    };
    const { permissions } = await init(config);
    return { ...permissions };
  }

  async function handle(request: Request): Promise<unknown> {
    switch (request.op) {
      case "init":
        return await init(request);
      case "inspect":
        return await inspect(request);
      case "edit":
        return await edit(request);
      case "survey":
        return await survey(request.id);
    }
  }

  /** Answers one request after those before it, through `send`. */
  function serve(
    id: number,
    work: () => Promise<unknown> | unknown,
    send: (reply: Reply) => void,
  ): void {
    queue = queue.then(async () => {
      try {
        send({ id, ok: true, value: await work() });
      } catch (error) {
        const err = translate(error, "the workspace", "survey");
        const wire: WireError = { name: err.name, message: err.message };
        send({ id, ok: false, error: wire });
      }
    });
  }

  /** A helper's requests, from the worker it helps, on `port`. */
  function helpOn(port: MessagePort): void {
    const send = (reply: Reply) => port.postMessage(reply);
    port.onmessage = (event: MessageEvent<HelperRequest>) => {
      const message = event.data;
      if (message.op === "helper") {
        serve(message.id, () => becomeHelper(message), send);
      } else if (message.op === "describe") {
        let last = Date.now();
        const beat = () => {
          const now = Date.now();
          if (now - last >= 1000) {
            last = now;
            send({ id: message.id, alive: true });
          }
        };
        serve(message.id, () => describeShare(message, beat), send);
      }
    };
  }

  scope.onmessage = (event) => {
    const message = event.data;
    switch (message.op) {
      case "attach":
        // This worker is a helper: it answers on the port alone.
        helpOn(message.port);
        return;
      case "helpers":
        // Out of turn: the survey that asked for them is waiting.
        if (offered === null) {
          for (const port of message.ports) port.close();
        } else offered(message.ports);
        return;
      case "helper_failed":
        helpers?.then((known) => {
          const helper = known[message.index];
          if (helper !== undefined) breakDown(helper);
        });
        return;
      default:
        serve(
          message.id,
          () => handle(message),
          (reply) => scope.postMessage(reply),
        );
    }
  };
}

/** The worker's module source: `workerMain`, called. */
export const WORKER_SOURCE: string = `(${workerMain.toString()})();\n`;
