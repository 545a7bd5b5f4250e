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
 * The worker is in three parts, each a self-contained function, composed
 * into {@linkcode WORKER_SOURCE}: the guards and shared state
 * (`_worker_files.ts`), the survey and its helpers (`_worker_survey.ts`),
 * and here the protocol and the effects it serves (init, inspect, edit).
 *
 * @module
 */
import type {
  AttachMessage,
  DescribeMessage,
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
  WireError,
} from "./_protocol.ts";
import { workerFiles, type WorkerState } from "./_worker_files.ts";
import { workerSurvey } from "./_worker_survey.ts";

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

/**
 * Runs inside the worker: answers {@linkcode Request}s, one at a time.
 *
 * @param files {@linkcode workerFiles}, passed in as source.
 * @param surveys {@linkcode workerSurvey}, passed in as source.
 */
export function workerMain(
  files: typeof workerFiles,
  surveys: typeof workerSurvey,
): void {
  const scope = globalThis as unknown as WorkerScope;
  let queue: Promise<void> = Promise.resolve();
  const state: WorkerState = {
    config: undefined,
    fs: undefined,
    nodeCrypto: undefined,
    cache: new Map(),
    listed: new Map(),
  };
  const guards = files(state);
  const {
    fail,
    resolve,
    dirname,
    show,
    requireConfig,
    translate,
    exists,
    confine,
    nodeFs,
    special,
    requireRegular,
    openRegular,
    readLimited,
  } = guards;
  const { survey, describeShare, takePorts, helperFailed } = surveys(
    guards,
    state,
    scope,
  );

  async function init(message: InitMessage): Promise<InitReply> {
    state.config = message;
    state.fs = await import("node:fs");
    state.nodeCrypto = await import("node:crypto");
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

  /** A helper's configuration: returns its permission states. */
  async function becomeHelper(
    message: HelperMessage,
  ): Promise<Record<string, string>> {
    const config: InitMessage = {
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
        takePorts(message.ports);
        return;
      case "helper_failed":
        helperFailed(message.index);
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

/**
 * The worker's module source: `workerMain`, called with its parts (each a
 * self-contained function, as source).
 */
export const WORKER_SOURCE: string =
  `(${workerMain.toString()})(${workerFiles.toString()}, ${workerSurvey.toString()});\n`;
