/**
 * The command line of one `run_code` process. Confined: `bwrap` with the
 * isolation every Loom sandbox has (new user, PID, network … namespaces, no
 * capabilities, its own session, death with its parent) and a file system
 * holding nothing but the Deno binary, the shared libraries it loads (as
 * `ldd` names them), the runtime script, and a private `/tmp`, `/dev` and
 * `/proc`: no `/etc`, no `/usr`, no home, store, workspace or servers file.
 * Unconfined (`--code-unconfined`): the same Deno process without bwrap,
 * confined by Deno's flags alone. Either way Deno runs with no permission,
 * no remote, npm, config or lock file, a V8 heap limit, an environment of
 * only `DENO_DIR` (its cache, which it cannot start without) and
 * `NO_COLOR`, and a data-segment limit (`ulimit -d`) that also bounds the
 * array buffers V8's heap limit does not count.
 *
 * Deno's cache is on the sandbox's private `/tmp`, empty at each start and
 * gone with it: nothing passes from one run to the next through it. (A
 * read-only cache filled ahead would save Deno's start some 10 ms, but Deno
 * then spends some 150 ms on each module it cannot record; a writable one
 * would let a run fill the host's disk.)
 *
 * @module
 */
import { ISOLATION_ARGS } from "../executor/bubblewrap.ts";
import { dirname, join } from "node:path";
import { INIT_REPORT_ARGS, INIT_REPORT_EXEC } from "../executor/sandbox_end.ts";

/** A spawnable command. */
export interface ProcessPlan {
  /** The program. */
  readonly program: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** The whole environment (nothing is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Where bubblewrap reports its sandbox's init (the base of
   * `takeInitReport`), or `null` when the program is not bubblewrap.
   */
  readonly initReport: string | null;
}

/** Where the runtime and the Deno binary are inside the sandbox. */
const INSIDE = { deno: "/loom/deno", runtime: "/loom/runtime.js" };
/** Data segment allowed beyond the heap limit: V8's other spaces, code, buffers. */
const DATA_MARGIN_MIB = 512;

/**
 * How a run is confined. `unprotected` is for the attack tests' control
 * runs only: every Deno permission and the remote and npm registries,
 * inside bubblewrap with the usual empty environment when `bwrap` is given
 * (to show what the OS layer alone stops), else with the gateway's whole
 * environment (to show what an unconfined runner lets through).
 */
export type Confinement =
  | { readonly kind: "bwrap"; readonly bwrap: string }
  | { readonly kind: "unconfined" }
  | { readonly kind: "unprotected"; readonly bwrap: string | null };

/** What a plan needs besides the confinement. */
export interface PlanInput {
  /** The runtime script on the host. */
  readonly runtime: string;
  /** Deno's cache folder when unconfined (the runner's own). */
  readonly denoDir: string;
  /** The V8 heap limit in MiB. */
  readonly memoryMiB: number;
  /** The Deno binary (default: this one). */
  readonly deno?: string;
}

/**
 * The command of one run (or, with `args` replaced by `--version`, of the
 * probe that checks the sandbox starts at all).
 */
export async function processPlan(
  confinement: Confinement,
  input: PlanInput,
  denoArgs: readonly string[] = runArgs(input.memoryMiB),
): Promise<ProcessPlan> {
  const deno = input.deno ?? Deno.execPath();
  if (confinement.kind === "unprotected" && denoArgs[0] === "run") {
    denoArgs = [
      "run",
      "--allow-all",
      `--v8-flags=--max-old-space-size=${input.memoryMiB}`,
      INSIDE.runtime,
    ];
  }
  const limit = (input.memoryMiB + DATA_MARGIN_MIB) * 1024;
  // `$0` names the process; under bubblewrap it is the report's base.
  const shell = (exec = 'exec "$@"', name = "loom-code") =>
    Deno.build.os === "windows" ? [] : [
      "/bin/sh",
      "-c",
      `ulimit -d ${limit} && ${exec}`,
      name,
    ];
  const bwrap = confinement.kind === "unconfined"
    ? null
    : confinement.kind === "bwrap"
    ? confinement.bwrap
    : confinement.bwrap;
  // Unprotected and without bubblewrap: nothing at all, the environment too.
  const inherited = confinement.kind === "unprotected" && bwrap === null
    ? Deno.env.toObject()
    : {};
  if (bwrap === null) {
    const [program, ...rest] = [
      ...shell(),
      deno,
      ...denoArgs.map((a) => a === INSIDE.runtime ? input.runtime : a),
    ];
    return {
      program: program!,
      args: rest,
      env: { ...inherited, DENO_DIR: input.denoDir, NO_COLOR: "1" },
      initReport: null,
    };
  }
  // Beside the runtime, in the runner's own folder: never inside a sandbox.
  const report = join(dirname(input.runtime), "init");
  const args = [
    ...ISOLATION_ARGS,
    ...INIT_REPORT_ARGS,
    "--ro-bind",
    deno,
    INSIDE.deno,
  ];
  for (const [source, target] of await libraries(deno)) {
    args.push("--ro-bind", source, target);
  }
  args.push(
    "--ro-bind",
    input.runtime,
    INSIDE.runtime,
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--chdir",
    "/tmp",
    "--",
    INSIDE.deno,
    ...denoArgs,
  );
  const [program, ...rest] = [
    ...shell(INIT_REPORT_EXEC, report),
    bwrap,
    ...args,
  ];
  return {
    program: program!,
    args: rest,
    env: { DENO_DIR: "/tmp/deno", NO_COLOR: "1" },
    initReport: report,
  };
}

/** Deno's arguments for a run of the runtime. */
function runArgs(memoryMiB: number): string[] {
  return [
    "run",
    "--no-remote",
    "--no-npm",
    "--no-config",
    "--no-lock",
    "--no-prompt",
    `--v8-flags=--max-old-space-size=${memoryMiB}`,
    INSIDE.runtime,
  ];
}

const known = new Map<string, Promise<[string, string][]>>();

/**
 * The shared libraries `deno` loads, as `[host file, path inside]` pairs:
 * what `ldd` names (the loader included), each file bound at the path the
 * loader looks for. Where `ldd` cannot say, the library directories
 * themselves, read-only (they hold no user data).
 */
function libraries(deno: string): Promise<[string, string][]> {
  let found = known.get(deno);
  if (found === undefined) {
    found = lddLibraries(deno);
    known.set(deno, found);
  }
  return found;
}

async function lddLibraries(deno: string): Promise<[string, string][]> {
  let text: string;
  try {
    const output = await new Deno.Command("ldd", {
      args: [deno],
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    text = new TextDecoder().decode(output.stdout) +
      new TextDecoder().decode(output.stderr);
    if (/not a dynamic executable|statically linked/.test(text)) return [];
    if (!output.success) return libraryDirectories();
  } catch {
    return libraryDirectories();
  }
  const pairs: [string, string][] = [];
  for (const line of text.split("\n")) {
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (match === null) continue;
    try {
      pairs.push([Deno.realPathSync(match[1]!), match[1]!]);
    } catch {
      return libraryDirectories();
    }
  }
  return pairs.length === 0 ? libraryDirectories() : pairs;
}

function libraryDirectories(): [string, string][] {
  const pairs: [string, string][] = [];
  for (const dir of ["/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64"]) {
    try {
      pairs.push([Deno.realPathSync(dir), dir]);
    } catch {
      // Not on this system.
    }
  }
  return pairs;
}
