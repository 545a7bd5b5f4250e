/**
 * Whether this process runs with `--unstable-worker-options`. Creating a
 * Worker with `deno.permissions` without that flag makes Deno terminate the
 * whole process (exit code 70) instead of throwing, so the executor asks
 * before it tries.
 *
 * Deno exposes its own flags nowhere in the runtime API, and reading
 * `/proc/self/cmdline` needs `--allow-all`. So the command line is read
 * directly when that is allowed, and otherwise by a short-lived
 * `deno eval` subprocess when the process may run its own executable.
 *
 * @module
 */

/** `enabled`/`disabled` when the command line tells, `unknown` otherwise. */
export type WorkerOptionsState = "enabled" | "disabled" | "unknown";

const FLAG = "--unstable-worker-options";

let known: WorkerOptionsState | undefined;

/**
 * Finds the flag among Deno's own arguments (the script's arguments, last on
 * the command line, do not count). A compiled binary bakes its flags in and
 * Windows has no `/proc`: those answer `unknown`, as does a process that
 * may neither read `/proc` nor run its own executable.
 */
export async function workerOptionsState(): Promise<WorkerOptionsState> {
  known ??= await detect();
  return known;
}

async function detect(): Promise<WorkerOptionsState> {
  if (Deno.build.standalone || Deno.build.os === "windows") return "unknown";
  const args = readOwnCommandLine() ?? await askSubprocess();
  if (args === null) return "unknown";
  // The script's own arguments come last: they are not Deno's flags.
  const own = args.slice(0, Math.max(1, args.length - Deno.args.length));
  return own.includes(FLAG) ? "enabled" : "disabled";
}

function readOwnCommandLine(): string[] | null {
  try {
    return splitCommandLine(Deno.readTextFileSync("/proc/self/cmdline"));
  } catch {
    return null;
  }
}

async function askSubprocess(): Promise<string[] | null> {
  const program = Deno.execPath();
  try {
    const state = Deno.permissions.querySync({ name: "run", command: program })
      .state;
    if (state !== "granted") return null;
    const script = `const pid = ${Deno.pid};
try {
  console.log(JSON.stringify(Deno.readTextFileSync("/proc/" + pid + "/cmdline")));
} catch {
  const out = new Deno.Command("ps", { args: ["-ww", "-o", "args=", "-p", String(pid)] }).outputSync();
  console.log(JSON.stringify(new TextDecoder().decode(out.stdout).trim().split(/\\s+/).join("\\0")));
}`;
    const output = await new Deno.Command(program, {
      args: ["eval", "--no-config", script],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!output.success) return null;
    const text = JSON.parse(new TextDecoder().decode(output.stdout));
    return typeof text === "string" && text !== ""
      ? splitCommandLine(text)
      : null;
  } catch {
    return null;
  }
}

function splitCommandLine(text: string): string[] {
  const args = text.split("\0");
  if (args.at(-1) === "") args.pop();
  return args;
}
