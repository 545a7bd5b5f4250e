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
 * lead outside the workspace.
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
  RunTestsReply,
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

  function fail(name: string, message: string): Error {
    const error = new Error(message);
    error.name = name;
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

  function requireConfig(): InitMessage {
    if (config === undefined) {
      throw fail("NotInitialized", "The worker has not been initialised");
    }
    return config;
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
  async function confine(path: string, root: string): Promise<string> {
    const real = await Deno.realPath(path);
    if (!inside(real, root)) {
      throw fail(
        "SymlinkEscape",
        `${path} resolves to ${real}, outside the workspace`,
      );
    }
    return real;
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
    if (message.test !== null) {
      probes.push(["run:test", { name: "run", command: message.test.program }]);
    }
    for (const [key, descriptor] of probes) {
      permissions[key] = Deno.permissions.querySync(descriptor).state;
    }
    return { permissions };
  }

  async function inspect(message: InspectMessage): Promise<InspectEntry[]> {
    const { workspace, maxFileBytes } = requireConfig();
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    const entries: InspectEntry[] = [];
    for (const path of message.paths) {
      try {
        const full = resolve(workspace, path);
        const real = await confine(full, workspace);
        const info = await Deno.stat(real);
        if (!info.isFile) throw fail("NotAFile", `${path} is not a file`);
        if (info.size > maxFileBytes) {
          throw fail(
            "TooLarge",
            `${path} has ${info.size} bytes, more than the ${maxFileBytes} inspect reads`,
          );
        }
        const bytes = await Deno.readFile(real);
        if (bytes.includes(0)) {
          throw fail("BinaryFile", `${path} holds NUL bytes: it is not text`);
        }
        let text: string;
        try {
          text = decoder.decode(bytes);
        } catch {
          throw fail("InvalidData", `${path} is not valid UTF-8 text`);
        }
        entries.push({ path, text });
      } catch (error) {
        const err = error as Error;
        const entry: InspectEntry = {
          path,
          error: `${err.name}: ${err.message}`,
        };
        if (error instanceof Deno.errors.NotFound) entry.missing = true;
        entries.push(entry);
      }
    }
    return entries;
  }

  type Previous =
    | { kind: "none" }
    | { kind: "file"; bytes: Uint8Array; mode: number | null }
    | { kind: "symlink"; target: string };

  interface Plan {
    full: string;
    temp: string | null;
    previous: Previous;
    renamed: boolean;
  }

  async function edit(message: EditMessage): Promise<null> {
    const { workspace } = requireConfig();
    const encoder = new TextEncoder();
    const plans: Plan[] = [];
    const created: string[] = [];
    const seen = new Set<string>();
    try {
      // Phase 1: check every target, make parents, write temp files.
      for (const file of message.files) {
        const full = resolve(workspace, file.path);
        if (full === workspace || seen.has(full)) {
          throw fail("InvalidPath", `Cannot write ${file.path} here`);
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
        await confine(probe, workspace);
        for (const dir of missing) {
          await Deno.mkdir(dir);
          created.push(dir);
        }
        await confine(parent, workspace);
        const plan: Plan = {
          full,
          temp: null,
          previous: { kind: "none" },
          renamed: false,
        };
        plans.push(plan);
        const info = await exists(full);
        if (info?.isDirectory) {
          throw fail(
            "IsADirectory",
            `Cannot write ${file.path}: it is a directory`,
          );
        }
        if (info?.isSymlink) {
          await confine(full, workspace);
          plan.previous = {
            kind: "symlink",
            target: await Deno.readLink(full),
          };
        } else if (info?.isFile) {
          plan.previous = {
            kind: "file",
            bytes: await Deno.readFile(full),
            mode: info.mode,
          };
        }
        const name = full.slice(parent.length + 1);
        const suffix = crypto.randomUUID().slice(0, 8);
        plan.temp = `${parent}/.${name}.loom-${suffix}.tmp`;
        await Deno.writeFile(plan.temp, encoder.encode(file.contents), {
          createNew: true,
          ...(plan.previous.kind === "file" && plan.previous.mode !== null
            ? { mode: plan.previous.mode & 0o777 }
            : {}),
        });
      }
      // Phase 2: rename into place.
      for (const plan of plans) {
        await Deno.rename(plan.temp as string, plan.full);
        plan.renamed = true;
        plan.temp = null;
      }
      return null;
    } catch (error) {
      await rollback(plans, created);
      throw error;
    }
  }

  async function rollback(plans: Plan[], created: string[]): Promise<void> {
    for (const plan of plans.slice().reverse()) {
      try {
        if (plan.temp !== null) await Deno.remove(plan.temp);
        if (!plan.renamed) continue;
        const previous = plan.previous;
        if (previous.kind === "none") {
          await Deno.remove(plan.full);
        } else if (previous.kind === "symlink") {
          await Deno.remove(plan.full);
          await Deno.symlink(previous.target, plan.full);
        } else {
          const back = `${plan.full}.loom-restore.tmp`;
          await Deno.writeFile(back, previous.bytes, {
            ...(previous.mode !== null ? { mode: previous.mode & 0o777 } : {}),
          });
          await Deno.rename(back, plan.full);
        }
      } catch {
        // Best effort: the original error is what the caller hears about.
      }
    }
    for (const dir of created.slice().reverse()) {
      try {
        await Deno.remove(dir);
      } catch {
        // Not empty or already gone.
      }
    }
  }

  async function runTests(): Promise<RunTestsReply> {
    const { workspace, test, tailBytes } = requireConfig();
    if (test === null) {
      throw fail("NoTestCommand", "No test command is configured");
    }
    const child = new Deno.Command(test.program, {
      args: [...test.args],
      cwd: workspace,
      clearEnv: true,
      env: { ...test.env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let tail = new Uint8Array(0);
    let total = 0;
    function keep(chunk: Uint8Array): void {
      total += chunk.length;
      if (chunk.length >= tailBytes) {
        tail = chunk.slice(chunk.length - tailBytes);
        return;
      }
      const kept = Math.min(tail.length, tailBytes - chunk.length);
      const next = new Uint8Array(kept + chunk.length);
      next.set(tail.subarray(tail.length - kept), 0);
      next.set(chunk, kept);
      tail = next;
    }
    const readers = [child.stdout.getReader(), child.stderr.getReader()];
    const pumps = readers.map(async (reader) => {
      try {
        while (true) {
          const { done, value } = await reader.read();
          if (done) return;
          keep(value);
        }
      } catch {
        // Cancelled after the drain period.
      }
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, test.timeoutMs);
    let status: Deno.CommandStatus;
    try {
      status = await child.status;
    } finally {
      clearTimeout(timer);
    }
    // A process the test started may still hold the pipes: drain briefly.
    let drainTimer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(pumps),
      new Promise<void>((done) => {
        drainTimer = setTimeout(done, test.drainMs);
      }),
    ]);
    clearTimeout(drainTimer);
    for (const reader of readers) {
      reader.cancel().catch(() => {});
    }
    return {
      exit_code: status.code,
      signal: status.signal,
      timed_out: timedOut,
      tail,
      output_bytes: total,
    };
  }

  async function handle(request: Request): Promise<unknown> {
    switch (request.op) {
      case "init":
        return init(request);
      case "inspect":
        return await inspect(request);
      case "edit":
        return await edit(request);
      case "runTests":
        return await runTests();
    }
  }

  scope.onmessage = (event) => {
    const request = event.data;
    queue = queue.then(async () => {
      try {
        const value = await handle(request);
        const transfer: Transferable[] = value !== null &&
            typeof value === "object" && "tail" in value &&
            value.tail instanceof Uint8Array &&
            value.tail.buffer instanceof ArrayBuffer
          ? [value.tail.buffer]
          : [];
        scope.postMessage({ id: request.id, ok: true, value }, transfer);
      } catch (error) {
        const err = error instanceof Error ? error : new Error(String(error));
        const wire: WireError = { name: err.name, message: err.message };
        scope.postMessage({ id: request.id, ok: false, error: wire });
      }
    });
  };
}

/** The worker's module source: `workerMain`, called. */
export const WORKER_SOURCE: string = `(${workerMain.toString()})();\n`;
