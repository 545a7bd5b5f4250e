/**
 * How the executor talks to its worker: directly (a Worker in this
 * process), or through a Deno subprocess inside bubblewrap that runs the
 * same Worker, with JSON lines over stdin and stdout.
 *
 * @module
 */
import { workerPermissions } from "./_permissions.ts";
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
  worker.onmessage = (event: MessageEvent<Reply>) => events.reply(event.data);
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
    close: () => worker.terminate(),
  };
}

/**
 * The subprocess's program: the same Worker (same permissions), relaying
 * JSON lines. It runs inside a sandbox where only the workspace, the Deno
 * binary and the system directories exist.
 */
function relaySource(): string {
  return `const workspace = Deno.args[0];
const permissions = ${JSON.stringify(workerPermissions("WORKSPACE"))};
permissions.read = [workspace];
permissions.write = [workspace];
const source = ${JSON.stringify(WORKER_SOURCE)};
const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
const worker = new Worker(url, { type: "module", deno: { permissions } });
const encoder = new TextEncoder();
const write = (value) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(value) + "\\n"));
worker.onmessage = (event) => {
  const bytes = encoder.encode(JSON.stringify(event.data) + "\\n");
  let at = 0;
  while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
};
worker.onerror = (event) => { event.preventDefault(); write({ fatal: String(event.message) }); Deno.exit(1); };
// Only each new chunk is searched for the end of a line: a 40 MB message
// costs one pass, not one pass per chunk over all that came before.
let parts = [];
const decoder = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  let text = decoder.decode(chunk, { stream: true });
  let at;
  while ((at = text.indexOf("\\n")) >= 0) {
    parts.push(text.slice(0, at));
    const line = parts.join("");
    parts = [];
    text = text.slice(at + 1);
    if (line !== "") worker.postMessage(JSON.parse(line));
  }
  if (text !== "") parts.push(text);
}
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
  const encoder = new TextEncoder();
  (async () => {
    const decoder = new TextDecoder();
    // Only each new chunk is searched for the end of a line (see the relay).
    let parts: string[] = [];
    try {
      for await (const chunk of child.stdout) {
        let text = decoder.decode(chunk, { stream: true });
        let at;
        while ((at = text.indexOf("\n")) >= 0) {
          parts.push(text.slice(0, at));
          const line = parts.join("");
          parts = [];
          text = text.slice(at + 1);
          const message = JSON.parse(line) as Reply | { fatal: string };
          if ("fatal" in message) {
            events.failure(`The executor's worker failed: ${message.fatal}`);
          } else events.reply(message);
        }
        if (text !== "") parts.push(text);
      }
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
    Deno.remove(relay).catch(() => {});
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
      stdin.write(encoder.encode(JSON.stringify(request) + "\n")).catch(
        () => {},
      );
    },
    close: () => {
      if (closed) return;
      closed = true;
      stdin.close().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    },
  };
}
