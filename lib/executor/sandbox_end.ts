/**
 * Ending a bubblewrap sandbox so that none of its processes outlives the
 * moment its end is reported. Killing bubblewrap itself is not enough: its
 * child, the init of the sandbox's PID namespace, dies of the parent-death
 * signal a moment after bubblewrap's end is reported, and the kernel kills
 * the namespace's other processes only as that init exits. So bubblewrap
 * reports the init's host pid first thing on standard error, and the init
 * is what is killed: bubblewrap's end is then reported only once the init
 * has been reaped, which the kernel allows only when every process of the
 * namespace has exited.
 *
 * @module
 */

/**
 * bubblewrap's flags that report the host pid of the sandbox's PID-namespace
 * init on fd 3, as JSON, before the sandbox runs anything; the shell that
 * starts bubblewrap makes fd 3 its standard error ({@linkcode INIT_REPORT_REDIRECT}).
 */
export const INIT_REPORT_ARGS: readonly string[] = ["--info-fd", "3"];

/** The redirection, after `exec "$@"`, that gives bubblewrap's fd 3 to stderr. */
export const INIT_REPORT_REDIRECT = "3>&2";

/** The most bytes bubblewrap's report takes (its pid and six namespace ids). */
const REPORT_BYTES = 1024;

/** A sandbox's standard error, bubblewrap's report taken off its head. */
export interface SandboxStderr {
  /** What the sandbox wrote to standard error. */
  readonly stream: ReadableStream<Uint8Array>;
  /** The host pid of the sandbox's PID-namespace init, once reported. */
  initPid(): number | undefined;
}

/**
 * Takes bubblewrap's report (see {@linkcode INIT_REPORT_ARGS}) off the head
 * of a sandbox's standard error. Only for a process that is bubblewrap
 * started with those flags: bubblewrap writes the report before it lets its
 * child go on to build the sandbox, so nothing inside can write first and
 * forge it; a head that is not the report passes unread.
 *
 * @param stderr The process's standard error.
 * @param reported Whether the process is bubblewrap reporting its init
 *   (else the stream passes as it is, and no init is known).
 * @returns The rest of it, and the init's pid once read.
 *
 * @example
 * ```ts
 * import { sandboxStderr } from "./sandbox_end.ts";
 * import assert from "node:assert/strict";
 * const report = '{\n    "child-pid": 4242,\n    "pid-namespace": 1\n}\n';
 * const err = sandboxStderr(ReadableStream.from([new TextEncoder().encode(`${report}boom`)]), true);
 * assert.equal(await new Response(err.stream).text(), "boom");
 * assert.equal(err.initPid(), 4242);
 * ```
 */
export function sandboxStderr(
  stderr: ReadableStream<Uint8Array>,
  reported: boolean,
): SandboxStderr {
  if (!reported) return { stream: stderr, initPid: () => undefined };
  let pid: number | undefined;
  let head: Uint8Array | null = new Uint8Array(0);
  const end = new TextEncoder().encode("\n}\n");
  const stream = stderr.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        if (head === null) return out.enqueue(chunk);
        const joined = new Uint8Array(head.length + chunk.length);
        joined.set(head);
        joined.set(chunk, head.length);
        const at = indexOf(joined, end);
        if (at < 0 && joined.length < REPORT_BYTES) {
          head = joined;
          return;
        }
        head = null;
        const cut = at < 0 ? 0 : at + end.length;
        const report = new TextDecoder().decode(joined.subarray(0, cut));
        const match = /^\{\n {4}"child-pid": ([1-9][0-9]{0,9})[,\n]/.exec(
          report,
        );
        if (match !== null) pid = Number(match[1]);
        const rest = joined.subarray(match === null ? 0 : cut);
        if (rest.length > 0) out.enqueue(rest);
      },
      flush(out) {
        if (head !== null && head.length > 0) out.enqueue(head);
      },
    }),
  );
  return { stream, initPid: () => pid };
}

function indexOf(bytes: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= bytes.length; i += 1) {
    for (let j = 0; j < needle.length; j += 1) {
      if (bytes[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}

/**
 * Kills a sandbox so that none of its processes outlives the end of its
 * `status` (see the module doc): its init when bubblewrap reported one,
 * else the process itself (not bubblewrap, or its init is gone already).
 *
 * @param child bubblewrap's process (or the unconfined process).
 * @param initPid The init's host pid, from {@linkcode sandboxStderr}.
 * @param exited Whether `child` has exited: its init was reaped then, and
 *   its pid may be another process's.
 *
 * @example
 * ```ts
 * import { killSandbox } from "./sandbox_end.ts";
 * import assert from "node:assert/strict";
 * const child = new Deno.Command("sleep", { args: ["30"] }).spawn();
 * killSandbox(child, undefined, false);
 * assert.equal((await child.status).signal, "SIGKILL");
 * ```
 */
export function killSandbox(
  child: Deno.ChildProcess,
  initPid: number | undefined,
  exited: boolean,
): void {
  if (initPid !== undefined && !exited) {
    try {
      Deno.kill(initPid, "SIGKILL");
      // bubblewrap ends on its own now; should it not, it is killed too.
      const late = setTimeout(() => kill(child), 2000);
      Deno.unrefTimer(late);
      child.status.finally(() => clearTimeout(late));
      return;
    } catch {
      // Gone already: bubblewrap is ending.
    }
  }
  kill(child);
}

function kill(child: Deno.ChildProcess): void {
  try {
    child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
}
