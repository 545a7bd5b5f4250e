/**
 * How the executor talks to its worker: directly (a Worker in this
 * process), or through a Deno subprocess inside bubblewrap that runs the
 * same Worker, with length-prefixed frames (`frames.ts`) over stdin and
 * stdout. Either way a message costs time linear in its bytes: file
 * contents cross as bytes, each file in its own message.
 *
 * @module
 */
import { encodeFrame, frameReader } from "./frames.ts";
import { helperPermissions, workerPermissions } from "./_permissions.ts";
import type { Reply, Request } from "./_protocol.ts";
import { bwrapArgs, SANDBOX_PATH } from "./_sandbox.ts";
import { WORKER_SOURCE } from "./_worker.ts";

/** A two-way message channel to the worker. */
export interface Channel {
  /** Sends one request. */
  post(request: Request): void;
  /** Stops the worker (and its process); idempotent. */
  close(): void;
}

/** What a channel reports back. */
export interface ChannelEvents {
  /** A reply arrived. */
  reply(reply: Reply): void;
  /** The worker failed or went away. */
  failure(message: string): void;
}

/** A Worker in this process, with permissions scoped to the workspace. */
export function workerChannel(
  workspace: string,
  events: ChannelEvents,
): Channel {
  const url = URL.createObjectURL(
    new Blob([WORKER_SOURCE], { type: "text/javascript" }),
  );
  let worker: Worker;
  try {
    worker = new Worker(url, {
      type: "module",
      name: "loom-executor",
      deno: { permissions: workerPermissions(workspace) },
    });
  } finally {
    // The worker has fetched its module once constructed.
    queueMicrotask(() => URL.revokeObjectURL(url));
  }
  let helpers: Worker[] = [];
  worker.onmessage = (event: MessageEvent<Reply>) => {
    const reply = event.data;
    if ("spawn" in reply) {
      helpers = spawnHelpers(
        worker,
        WORKER_SOURCE,
        helperPermissions(workspace),
        reply.spawn,
      );
    } else events.reply(reply);
  };
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    events.failure(`The executor's worker failed: ${event.message}`);
  };
  worker.onmessageerror = () =>
    events.failure(
      "The executor's worker sent a message that could not be read",
    );
  return {
    post: (request) => worker.postMessage(request),
    close: () => {
      worker.terminate();
      for (const helper of helpers) helper.terminate();
    },
  };
}

/**
 * Starts a worker's survey helpers beside it (a worker started by a worker
 * takes a second to boot; one started here, a few milliseconds): `count`
 * workers (at most eight) running the worker's own source with `permissions`,
 * each attached to one end of a `MessageChannel` whose other end goes to
 * `lead`, by index. A helper that fails is reported to `lead` by index.
 * Self-contained: the relay inside bubblewrap embeds its source text.
 */
export function spawnHelpers(
  lead: Worker,
  source: string,
  permissions: Deno.PermissionOptionsObject,
  count: number,
): Worker[] {
  const url = URL.createObjectURL(
    new Blob([source], { type: "text/javascript" }),
  );
  const helpers: Worker[] = [];
  const ports: MessagePort[] = [];
  try {
    for (let index = 0; index < Math.min(count, 8); index++) {
      const helper = new Worker(url, {
        type: "module",
        name: "loom-executor-helper",
        deno: { permissions },
      } as WorkerOptions);
      helper.onerror = (event: ErrorEvent) => {
        event.preventDefault();
        helper.terminate();
        lead.postMessage({ op: "helper_failed", id: 0, index });
      };
      const channel = new MessageChannel();
      helper.postMessage({ op: "attach", id: 0, port: channel.port2 }, [
        channel.port2,
      ]);
      helpers.push(helper);
      ports.push(channel.port1);
    }
  } catch {
    // Fewer helpers: the worker shares its surveys with those it gets.
  } finally {
    // Each helper has fetched its module once constructed.
    queueMicrotask(() => URL.revokeObjectURL(url));
  }
  lead.postMessage({ op: "helpers", id: 0, ports }, ports);
  return helpers;
}

/** The largest frame header either side accepts (paths and reasons only). */
const MAX_HEADER_BYTES = 256 * 1024 * 1024;

/**
 * The subprocess's program: the same Worker (same permissions), relaying
 * frames between stdin/stdout and the worker's messages. It runs inside a
 * sandbox where only the workspace, the Deno binary and the system
 * directories exist.
 */
export function relaySource(): string {
  return `const workspace = Deno.args[0];
const permissions = ${JSON.stringify(workerPermissions("WORKSPACE"))};
permissions.read = [workspace];
permissions.write = [workspace];
const source = ${JSON.stringify(WORKER_SOURCE)};
const helperPermissions = ${JSON.stringify(helperPermissions("WORKSPACE"))};
helperPermissions.read = [workspace];
const encodeFrame = ${encodeFrame.toString()};
const frameReader = ${frameReader.toString()};
const spawnHelpers = ${spawnHelpers.toString()};
const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
const worker = new Worker(url, { type: "module", deno: { permissions } });
const write = (value) => {
  for (const piece of encodeFrame(value)) {
    let at = 0;
    while (at < piece.length) at += Deno.stdout.writeSync(piece.subarray(at));
  }
};
worker.onmessage = (event) => {
  if ("spawn" in event.data) {
    spawnHelpers(worker, source, helperPermissions, event.data.spawn);
  } else write(event.data);
};
worker.onerror = (event) => { event.preventDefault(); write({ fatal: String(event.message) }); Deno.exit(1); };
const push = frameReader(
  (message, buffer) => worker.postMessage(message, [buffer]),
  ${MAX_HEADER_BYTES},
);
for await (const chunk of Deno.stdin.readable) push(chunk);
Deno.exit(0);
`;
}

/** Where the relay script is mounted inside the sandbox. */
const RELAY_PATH = "/loom/executor.js";

/**
 * The worker inside a Deno subprocess inside bubblewrap: a symlink swapped
 * in at any moment can only resolve to what exists in the sandbox — the
 * workspace, the Deno binary and the system directories.
 */
export async function sandboxChannel(
  bwrap: string,
  workspace: string,
  events: ChannelEvents,
): Promise<Channel> {
  const deno = Deno.execPath();
  const relay = await Deno.makeTempFile({
    prefix: "loom-executor-",
    suffix: ".js",
  });
  await Deno.writeTextFile(relay, relaySource());
  const readOnly: string[] = [];
  try {
    if (Deno.lstatSync(`${workspace}/.git`).isDirectory) {
      readOnly.push(`${workspace}/.git`);
    }
  } catch {
    // No .git directory.
  }
  const args = bwrapArgs({
    workspace,
    readOnlyInside: readOnly,
    hostFiles: [deno],
    network: false,
  });
  args.push("--ro-bind", relay, RELAY_PATH);
  const child = new Deno.Command(bwrap, {
    args: [
      ...args,
      "--",
      deno,
      "run",
      "--no-config",
      "--no-lock",
      "--no-prompt",
      "--unstable-worker-options",
      `--allow-read=${workspace.replaceAll(",", ",,")}`,
      `--allow-write=${workspace.replaceAll(",", ",,")}`,
      RELAY_PATH,
      workspace,
    ],
    clearEnv: true,
    env: {
      PATH: SANDBOX_PATH,
      HOME: "/tmp",
      DENO_DIR: "/tmp/deno",
      NO_COLOR: "1",
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdin = child.stdin.getWriter();
  let closed = false;
  let stderr = "";
  // The sandbox's bind mount keeps the relay once it runs: the file itself
  // goes at its first frame, or at the latest when the channel closes (a
  // CLI that exits right after would not wait for the process's end).
  let relayed = false;
  const dropRelay = () => {
    if (relayed) return;
    relayed = true;
    try {
      Deno.removeSync(relay);
    } catch {
      // Gone already.
    }
  };
  (async () => {
    const push = frameReader((message) => {
      dropRelay();
      const reply = message as Reply | { fatal: string };
      if ("fatal" in reply) {
        events.failure(`The executor's worker failed: ${reply.fatal}`);
      } else events.reply(reply);
    }, MAX_HEADER_BYTES);
    try {
      for await (const chunk of child.stdout) push(chunk);
    } catch (error) {
      if (!closed) {
        events.failure(`The executor's process failed: ${String(error)}`);
      }
    }
  })();
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      if (stderr.length < 4096) stderr += decoder.decode(chunk);
    }
  })().catch(() => {});
  child.status.then((status) => {
    dropRelay();
    if (!closed) {
      events.failure(
        `The executor's sandboxed process ended (exit ${status.code})${
          stderr === "" ? "" : `: ${stderr.trim().slice(0, 500)}`
        }`,
      );
    }
  });
  return {
    post: (request) => {
      for (const piece of encodeFrame(request)) {
        stdin.write(piece).catch(() => {});
      }
    },
    close: () => {
      if (closed) return;
      closed = true;
      dropRelay();
      stdin.close().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    },
  };
}
