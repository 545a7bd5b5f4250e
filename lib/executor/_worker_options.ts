/**
 * Whether this process runs with `--unstable-worker-options`. Creating a
 * Worker with `deno.permissions` without that flag makes Deno terminate the
 * whole process (exit code 70) instead of throwing, so the executor asks
 * before it tries.
 *
 * @module
 */

/** `enabled`/`disabled` when the command line tells, `unknown` otherwise. */
export type WorkerOptionsState = "enabled" | "disabled" | "unknown";

const FLAG = "--unstable-worker-options";

/**
 * Reads the process's command line (Linux `/proc/self/cmdline`, only when
 * read permission for it is already granted, so never prompts) and looks
 * for the flag among Deno's own arguments. A compiled binary bakes its flags
 * in, and other systems have no `/proc`: those answer `unknown`.
 */
export function workerOptionsState(): WorkerOptionsState {
  if (Deno.build.standalone) return "unknown";
  const path = "/proc/self/cmdline";
  try {
    if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") {
      return "unknown";
    }
    const args = Deno.readTextFileSync(path).split("\0");
    if (args.at(-1) === "") args.pop();
    // The script's own arguments come last: they are not Deno's flags.
    const own = args.slice(0, Math.max(1, args.length - Deno.args.length));
    if (own.length === 0 || !/deno/i.test(own[0] ?? "")) return "unknown";
    return own.includes(FLAG) ? "enabled" : "disabled";
  } catch {
    return "unknown";
  }
}
