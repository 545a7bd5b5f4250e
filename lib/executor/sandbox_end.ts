/**
 * Ending a bubblewrap sandbox so that none of its processes outlives the
 * moment its end is reported. Killing bubblewrap itself is not enough: its
 * child, the init of the sandbox's PID namespace, dies of the parent-death
 * signal a moment after bubblewrap's end is reported, and the kernel kills
 * the namespace's other processes only as that init exits. So bubblewrap
 * reports the init's host pid (`--info-fd`) into a file beside the runner's
 * other files, and the init is what is killed: bubblewrap's end is then
 * reported only once the init has been reaped, which the kernel allows only
 * when every process of the namespace has exited.
 *
 * The report goes to a file, not to a pipe of ours: bubblewrap writes it
 * before it lets its child go on, and a write to a pipe whose reader has
 * died (Loom killed just after starting a sandbox) makes bubblewrap exit and
 * leaves that child waiting forever.
 *
 * @module
 */

/** bubblewrap's flags that write the report to its fd 3. */
export const INIT_REPORT_ARGS: readonly string[] = ["--info-fd", "3"];

/**
 * The end of `sh -c` that starts bubblewrap (its arguments after `$0`) with
 * fd 3 on `<$0>.<pid>`: `$0` is the report's base, and the shell's pid is
 * bubblewrap's, since it execs it.
 */
export const INIT_REPORT_EXEC = 'exec "$@" 3>"$0.$$"';

/**
 * The init's host pid from bubblewrap's report, which is removed once read.
 *
 * @param base The report's base (the shell's `$0`).
 * @param bubblewrap bubblewrap's pid.
 * @returns The pid, or `undefined` when there is no complete report.
 *
 * @example
 * ```ts
 * import { takeInitReport } from "./sandbox_end.ts";
 * import assert from "node:assert/strict";
 * const base = `${await Deno.makeTempDir()}/init`;
 * await Deno.writeTextFile(`${base}.7`, '{\n    "child-pid": 4242,\n    "pid-namespace": 1\n}\n');
 * assert.equal(takeInitReport(base, 7), 4242);
 * assert.equal(takeInitReport(base, 7), undefined);
 * ```
 */
export function takeInitReport(
  base: string,
  bubblewrap: number,
): number | undefined {
  const file = `${base}.${bubblewrap}`;
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
    Deno.removeSync(file);
  } catch {
    return undefined;
  }
  const match = /^\{\n {4}"child-pid": ([1-9][0-9]{0,9})[,\n]/.exec(text);
  return match === null ? undefined : Number(match[1]);
}

/**
 * Kills a sandbox so that none of its processes outlives the end of its
 * `status` (see the module doc): its init when bubblewrap reported one,
 * else the process itself (not bubblewrap, or its init is gone already).
 *
 * @param child bubblewrap's process (or the unconfined process).
 * @param report The base of bubblewrap's report, or `null` for none.
 * @param exited Whether `child` has exited: its init was reaped then, and
 *   its pid may be another process's.
 *
 * @example
 * ```ts
 * import { killSandbox } from "./sandbox_end.ts";
 * import assert from "node:assert/strict";
 * const child = new Deno.Command("sleep", { args: ["30"] }).spawn();
 * killSandbox(child, null, false);
 * assert.equal((await child.status).signal, "SIGKILL");
 * ```
 */
export function killSandbox(
  child: Deno.ChildProcess,
  report: string | null,
  exited: boolean,
): void {
  const init = report === null ? undefined : takeInitReport(report, child.pid);
  if (init !== undefined && !exited) {
    try {
      Deno.kill(init, "SIGKILL");
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
