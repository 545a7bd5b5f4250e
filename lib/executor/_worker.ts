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

/** Runs inside the worker: answers {@linkcode Request}s, one at a time. */
export function workerMain(): void {
  const scope = globalThis as unknown as WorkerScope;
  let config: InitMessage | undefined;
  let queue: Promise<void> = Promise.resolve();

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
    if (error instanceof Deno.errors.NotFound) {
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
    if (error instanceof Deno.errors.PermissionDenied) {
      return fail(
        "permission_denied",
        `Cannot ${doing} ${show(path)}: the operating system denied access`,
      );
    }
    if (error instanceof Deno.errors.IsADirectory) {
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

  /** Reads at most `limit + 1` bytes; more than `limit` is `too_large`. */
  async function readLimited(
    file: Deno.FsFile,
    limit: number,
    shown: string,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    const buffer = new Uint8Array(64 * 1024);
    while (total <= limit) {
      const want = Math.min(buffer.length, limit + 1 - total);
      const read = await file.read(buffer.subarray(0, want));
      if (read === null) break;
      chunks.push(buffer.slice(0, read));
      total += read;
    }
    if (total > limit) {
      throw fail(
        "too_large",
        `${show(shown)} holds more than the ${limit} bytes inspect reads`,
      );
    }
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    return bytes;
  }

  function init(message: InitMessage): InitReply {
    config = message;
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
  ): Promise<string> {
    const full = resolve(workspace, path);
    let file: Deno.FsFile;
    try {
      const real = await confine(full, workspace, path);
      file = await Deno.open(real, { read: true });
    } catch (error) {
      throw translate(error, path, "read");
    }
    try {
      const info = await file.stat();
      if (!info.isFile) {
        throw fail("not_a_file", `${show(path)} is not a regular file`);
      }
      if ((info.nlink ?? 1) > 1) {
        throw fail(
          "hard_link",
          `${
            show(path)
          } has ${info.nlink} hard links: its contents may belong to a file outside the workspace`,
        );
      }
      const bytes = await readLimited(file, limit, path);
      if (bytes.includes(0)) {
        throw fail(
          "binary_file",
          `${show(path)} holds NUL bytes: it is not text`,
        );
      }
      try {
        return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
          .decode(bytes);
      } catch {
        throw fail("invalid_utf8", `${show(path)} is not valid UTF-8 text`);
      }
    } catch (error) {
      throw translate(error, path, "read");
    } finally {
      file.close();
    }
  }

  async function inspect(message: InspectMessage): Promise<InspectEntry[]> {
    const { workspace, maxFileBytes } = requireConfig();
    const entries: InspectEntry[] = [];
    for (const path of message.paths) {
      try {
        entries.push({
          path,
          text: await inspectOne(workspace, path, maxFileBytes),
        });
      } catch (error) {
        const err = error as Error;
        const entry: InspectEntry = {
          path,
          code: err.name,
          error: err.message,
        };
        if (err.name === "not_found") entry.missing = true;
        entries.push(entry);
      }
    }
    return entries;
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
    const encoder = new TextEncoder();
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
            `Cannot write ${show(file.path)}: it is not a regular file`,
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
        await Deno.writeFile(plan.temp, encoder.encode(file.contents), {
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

  async function survey(): Promise<SurveyReply> {
    const { workspace, digestFileBytes } = requireConfig();
    const lines: string[] = [];
    const escapes: string[] = [];
    const links = new Map<string, { paths: string[]; nlink: number }>();
    const hex = (buffer: ArrayBuffer) =>
      Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0"))
        .join("");
    async function walk(dir: string, prefix: string): Promise<void> {
      const names: string[] = [];
      try {
        for await (const entry of Deno.readDir(dir)) names.push(entry.name);
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
          await entry(dir, name, rel);
        } catch {
          lines.push(`? ${JSON.stringify(rel)}`);
        }
      }
    }
    async function entry(
      dir: string,
      name: string,
      rel: string,
    ): Promise<void> {
      {
        const full = dir + "/" + name;
        const info = await Deno.lstat(full);
        if (info.isSymlink) {
          const target = await Deno.readLink(full);
          lines.push(`l ${JSON.stringify(rel)} ${JSON.stringify(target)}`);
          let escaped = !inside(resolve(dir, target), workspace);
          try {
            escaped ||= !inside(await Deno.realPath(full), workspace);
          } catch {
            // Dangling: judged by its text alone.
          }
          if (escaped) escapes.push(rel);
        } else if (info.isDirectory) {
          lines.push(`d ${JSON.stringify(rel)}`);
          await walk(full, rel + "/");
        } else if (info.isFile) {
          if ((info.nlink ?? 1) > 1) {
            const key = `${info.dev}:${info.ino}`;
            const known = links.get(key) ??
              { paths: [], nlink: info.nlink ?? 1 };
            known.paths.push(rel);
            links.set(key, known);
          }
          let sum: string;
          if (info.size > digestFileBytes) {
            sum = `large:${info.size}:${
              info.mtime?.getTime() ?? 0
            }:${info.ino}`;
          } else {
            const file = await Deno.open(full, { read: true });
            try {
              const bytes = await readLimited(file, digestFileBytes, rel)
                .catch(() => null);
              sum = bytes === null
                ? `large:${info.size}:${info.ino}`
                : hex(await crypto.subtle.digest("SHA-256", bytes));
            } finally {
              file.close();
            }
          }
          const x = (info.mode ?? 0) & 0o111 ? "x" : "-";
          lines.push(`f ${JSON.stringify(rel)} ${x} ${sum}`);
        } else {
          lines.push(`o ${JSON.stringify(rel)}`);
        }
      }
    }
    await walk(workspace, "");
    const externalLinks: string[] = [];
    for (const { paths, nlink } of links.values()) {
      if (paths.length < nlink) externalLinks.push(...paths);
    }
    const digest = hex(
      await crypto.subtle.digest(
        "SHA-256",
        new TextEncoder().encode(lines.join("\n")),
      ),
    );
    return { digest, escapes, externalLinks: externalLinks.sort() };
  }

  async function handle(request: Request): Promise<unknown> {
    switch (request.op) {
      case "init":
        return init(request);
      case "inspect":
        return await inspect(request);
      case "edit":
        return await edit(request);
      case "survey":
        return await survey();
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
