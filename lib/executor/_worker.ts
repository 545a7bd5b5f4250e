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
  EditMessage,
  InitMessage,
  InitReply,
  InspectEntry,
  InspectMessage,
  Reply,
  Request,
  SurveyReply,
  WireError,
} from "./_protocol.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent<Request>) => void) | null;
  postMessage(message: Reply, transfer?: Transferable[]): void;
}

type NodeFs = typeof import("node:fs");
type NodeCrypto = typeof import("node:crypto");

/** What the survey remembers of a file it hashed. */
interface Cached {
  size: number;
  mtime: number;
  ctime: number;
  ino: number;
  dev: number;
  mode: number;
  sum: string;
  /** Whether both times were safely older than the stat (the racy rule). */
  clean: boolean;
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
  /**
   * How much older than the stat a file's times must be for its cached
   * hash to be trusted (git's racy-timestamp rule): the kernel stamps files
   * with a clock that may lag by a tick, and Deno reports ctime in whole
   * seconds, which the check accounts for separately.
   */
  const RACY_MARGIN_MS = 1000;

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

  /**
   * Walks the tree with synchronous calls (this thread does nothing else
   * meanwhile) and hashes a regular file's contents only when its stat
   * differs from the one remembered with its hash — path, size, mtime,
   * ctime, inode, device and mode — or when the remembered times were not
   * safely older than that stat (git's racy-timestamp rule). ctime is set
   * by the kernel on every change of contents, mode or name and cannot be
   * set back without changing the system clock, so a file rewritten with
   * its mtime restored is hashed again. Sends an `alive` beat every second.
   */
  function survey(id: number): SurveyReply {
    const { workspace, digestFileBytes } = requireConfig();
    const api = nodeFs();
    const hasher = nodeCrypto;
    if (hasher === undefined) throw fail("not_initialized", "No hash yet");
    const lines: string[] = [];
    const escapes: string[] = [];
    const links = new Map<string, { paths: string[]; nlink: number }>();
    const next = new Map<string, Cached>();
    let hashed = 0;
    let beat = Date.now();
    function walk(dir: string, prefix: string): void {
      const names: string[] = [];
      try {
        for (const entry of Deno.readDirSync(dir)) names.push(entry.name);
      } catch {
        // Gone or replaced while walking: the digest says so, nothing more.
        lines.push(`? ${JSON.stringify(prefix)}`);
        return;
      }
      names.sort();
      for (const name of names) {
        if (prefix === "" && name === ".git") continue;
        const rel = prefix + name;
        try {
          entry(dir, name, rel);
        } catch {
          lines.push(`? ${JSON.stringify(rel)}`);
        }
        const now = Date.now();
        if (now - beat >= 1000) {
          beat = now;
          scope.postMessage({ id, alive: true });
        }
      }
    }
    function contentSum(full: string, rel: string, info: Deno.FileInfo) {
      if (info.size > digestFileBytes) {
        return `large:${info.size}:${info.mtime?.getTime() ?? 0}:${
          info.ctime?.getTime() ?? 0
        }:${info.ino}`;
      }
      // No fstat here (it is slow through node:fs, and a survey opens every
      // file): lstat said regular, and the open and reads cannot block.
      const fd = openQuick(full);
      try {
        const bytes = readLimited(fd, info.size, digestFileBytes, rel);
        hashed += 1;
        return hasher!.createHash("sha256").update(bytes).digest("hex");
      } catch (error) {
        if ((error as Error).name === "too_large") {
          return `large:${info.size}:${info.ino}`;
        }
        throw error;
      } finally {
        api.closeSync(fd);
      }
    }
    function fileSum(
      full: string,
      rel: string,
      info: Deno.FileInfo,
      before: number,
    ): string {
      const stat: Omit<Cached, "sum" | "clean"> = {
        size: info.size,
        mtime: info.mtime?.getTime() ?? 0,
        ctime: info.ctime?.getTime() ?? 0,
        ino: info.ino ?? 0,
        dev: info.dev,
        mode: info.mode ?? 0,
      };
      const known = cache.get(rel);
      if (
        known !== undefined && known.clean && known.size === stat.size &&
        known.mtime === stat.mtime && known.ctime === stat.ctime &&
        known.ino === stat.ino && known.dev === stat.dev &&
        known.mode === stat.mode
      ) {
        next.set(rel, known);
        return known.sum;
      }
      const sum = contentSum(full, rel, info);
      // Deno reports ctime in whole seconds: its true value may be up to a
      // second later than shown. Without both times nothing is trusted.
      const clean = info.ctime !== null && info.mtime !== null &&
        stat.ctime + 1000 + RACY_MARGIN_MS <= before &&
        stat.mtime + 1 + RACY_MARGIN_MS <= before;
      next.set(rel, { ...stat, sum, clean });
      return sum;
    }
    function entry(dir: string, name: string, rel: string): void {
      const full = dir + "/" + name;
      // Taken before the stat: a change the stat does not see happens
      // later, so the kernel stamps it at least this late (less a tick).
      const before = Date.now();
      const info = Deno.lstatSync(full);
      if (info.isSymlink) {
        const target = Deno.readLinkSync(full);
        lines.push(`l ${JSON.stringify(rel)} ${JSON.stringify(target)}`);
        let escaped = !inside(resolve(dir, target), workspace);
        try {
          escaped ||= !inside(Deno.realPathSync(full), workspace);
        } catch {
          // Dangling: judged by its text alone.
        }
        if (escaped) escapes.push(rel);
      } else if (info.isDirectory) {
        lines.push(`d ${JSON.stringify(rel)}`);
        walk(full, rel + "/");
      } else if (info.isFile) {
        if ((info.nlink ?? 1) > 1) {
          const key = `${info.dev}:${info.ino}`;
          const known = links.get(key) ??
            { paths: [], nlink: info.nlink ?? 1 };
          known.paths.push(rel);
          links.set(key, known);
        }
        const sum = fileSum(full, rel, info, before);
        const x = (info.mode ?? 0) & 0o111 ? "x" : "-";
        lines.push(`f ${JSON.stringify(rel)} ${x} ${sum}`);
      } else {
        // FIFOs, sockets, devices: never opened.
        lines.push(`o ${JSON.stringify(rel)}`);
      }
    }
    walk(workspace, "");
    cache = next;
    const externalLinks: string[] = [];
    for (const { paths, nlink } of links.values()) {
      if (paths.length < nlink) externalLinks.push(...paths);
    }
    const digest = hasher.createHash("sha256").update(lines.join("\n"))
      .digest("hex");
    return {
      digest,
      escapes,
      externalLinks: externalLinks.sort(),
      hashed,
    };
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
        return survey(request.id);
    }
  }

  scope.onmessage = (event) => {
    const request = event.data;
    queue = queue.then(async () => {
      try {
        const value = await handle(request);
        scope.postMessage({ id: request.id, ok: true, value });
      } catch (error) {
        const err = translate(error, "the workspace", "survey");
        const wire: WireError = { name: err.name, message: err.message };
        scope.postMessage({ id: request.id, ok: false, error: wire });
      }
    });
  };
}

/** The worker's module source: `workerMain`, called. */
export const WORKER_SOURCE: string = `(${workerMain.toString()})();\n`;
