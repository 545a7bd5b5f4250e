/**
 * How the test command runs: inside bubblewrap, under Deno's own permission
 * flags (a `deno run`/`deno test` command without bubblewrap), or, only when
 * the user asked for it, unconfined. There is no silent fallback.
 *
 * @module
 */
import { resolve } from "node:path";
import { bwrapArgs, SANDBOX_PATH } from "./_sandbox.ts";
import type { TestProcessSpec } from "./_test_process.ts";

/** Which mechanism confines the test process. */
export type TestConfinement = "bubblewrap" | "deno" | "unconfined";

/** What the plan needs to know. */
export interface TestPlanInput {
  /** Real path of the workspace. */
  readonly workspace: string;
  /** Program first, as the user gave it. */
  readonly command: readonly string[];
  /** Kill after this many milliseconds. */
  readonly timeoutMs: number;
  /** Variables the user passed through (`--test-env NAME`), with values. */
  readonly env: Readonly<Record<string, string>>;
  /** Give the test the network (`--test-network`). */
  readonly network: boolean;
  /** Run unconfined (`--unconfined-tests`). */
  readonly unconfined: boolean;
  /** A working bwrap program, or null when there is none. */
  readonly bwrap: string | null;
}

/** A decided plan: how to confine, and the note the report carries. */
export interface TestPlan {
  /** The mechanism. */
  readonly confinement: TestConfinement;
  /** The program as resolved on the host (for messages). */
  readonly program: string;
  /**
   * The final command line, given the workspace-relative files bound or
   * denied read-only (protected files) for this run, and the symlinks that
   * lead outside (denied outright where the mechanism would follow them).
   */
  spec(
    readOnly: readonly string[],
    escapes: readonly string[],
    drainMs: number,
    tailBytes: number,
  ): TestProcessSpec;
  /** Machine-independent description for the report (no host paths). */
  note(readOnly: number): string;
}

/** Environment of an unconfined test: the user's, minus everything else. */
const UNCONFINED_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TMPDIR",
  "TMP",
  "TEMP",
  "SYSTEMROOT",
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "NO_COLOR",
];
/** Variables Deno itself reads; the test code cannot (no `--allow-env`). */
const DENO_RUNTIME_ENV = [
  "PATH",
  "HOME",
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "NO_COLOR",
  "LANG",
  "LC_ALL",
];

/** Why a plan cannot be made; the caller turns it into a typed error. */
export class PlanRefused extends Error {
  /** Makes the error. */
  constructor(message: string) {
    super(message);
    this.name = "PlanRefused";
  }
}

/**
 * Decides how the test runs.
 *
 * @throws {PlanRefused} When neither bubblewrap nor Deno can confine it and
 *   `unconfined` is not set.
 */
export function planTest(input: TestPlanInput): TestPlan {
  const [program = "", ...args] = input.command;
  const shown = `${program.split("/").at(-1) ?? program}${
    args.length > 0 ? " " + args.join(" ") : ""
  }`;
  if (input.unconfined) return unconfinedPlan(input, program, args);
  if (input.bwrap !== null) {
    return bubblewrapPlan(input, input.bwrap, program, args);
  }
  const deno = denoPlan(input, program, args);
  if (typeof deno !== "string") return deno;
  throw new PlanRefused(
    `Cannot confine the test command ${
      JSON.stringify(shown)
    }: bubblewrap (bwrap) is not available here, and without it only a "deno run" or "deno test" command can be confined (${deno}); install bubblewrap (apt-get install bubblewrap), or pass --unconfined-tests to run the tests with your privileges`,
  );
}

function pick(names: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    try {
      if (
        Deno.permissions.querySync({ name: "env", variable: name }).state !==
          "granted"
      ) continue;
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    } catch {
      // Not readable: left out.
    }
  }
  return env;
}

function envNames(env: Readonly<Record<string, string>>): string {
  const names = Object.keys(env).sort();
  return names.length === 0 ? "" : `, ${names.join(", ")}`;
}

function unconfinedPlan(
  input: TestPlanInput,
  program: string,
  args: readonly string[],
): TestPlan {
  const resolved = program.includes("/") && !program.startsWith("/")
    ? `${input.workspace}/${program}`
    : program;
  return {
    confinement: "unconfined",
    program: resolved,
    spec: (_readOnly, _escapes, drainMs, tailBytes) => ({
      program: resolved,
      args,
      cwd: input.workspace,
      env: { ...pick(UNCONFINED_ENV), ...input.env },
      timeoutMs: input.timeoutMs,
      drainMs,
      tailBytes,
    }),
    note: () =>
      `UNCONFINED: the test ran with the user's privileges because --unconfined-tests was given (working directory the workspace, environment cleared except ${
        UNCONFINED_ENV.join(", ")
      } where set${
        envNames(input.env)
      }, stdin closed, killed after ${input.timeoutMs} ms; it could read and write anything the user can, and processes it started itself were not killed)`,
  };
}

/**
 * Finds a program on the host — relative to `base`, absolute, or on the
 * user's `PATH` — and returns its real path, or `null`.
 */
export function locateProgram(base: string, program: string): string | null {
  const candidates = program.includes("/")
    ? [program.startsWith("/") ? program : `${base}/${program}`]
    : (pick(["PATH"]).PATH ?? SANDBOX_PATH).split(":").filter((d) => d !== "")
      .map((dir) => `${dir}/${program}`);
  for (const candidate of candidates) {
    try {
      const real = Deno.realPathSync(candidate);
      if (Deno.statSync(real).isFile) return real;
    } catch {
      // Not here.
    }
  }
  return null;
}

function within(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

function bubblewrapPlan(
  input: TestPlanInput,
  bwrap: string,
  program: string,
  args: readonly string[],
): TestPlan {
  const located = locateProgram(input.workspace, program);
  if (
    located !== null && program.includes("/") && !program.startsWith("/") &&
    !within(located, input.workspace)
  ) {
    throw new PlanRefused(
      `Cannot run the test program ${
        JSON.stringify(program)
      }: it leads through a symlink to outside the workspace`,
    );
  }
  const inWorkspace = located !== null && within(located, input.workspace);
  const onSystem = located !== null && within(located, "/usr");
  // Bound read-only at its real path; a program missing here fails to start.
  const real = located ?? program;
  const hostFiles = located === null || inWorkspace || onSystem
    ? []
    : [located];
  const env = {
    PATH: SANDBOX_PATH,
    HOME: "/tmp",
    TMPDIR: "/tmp",
    ...input.env,
  };
  return {
    confinement: "bubblewrap",
    program: real,
    spec: (readOnly, _escapes, drainMs, tailBytes) => {
      const inside = readOnly.map((rel) => `${input.workspace}/${rel}`);
      try {
        if (Deno.lstatSync(`${input.workspace}/.git`).isDirectory) {
          inside.unshift(`${input.workspace}/.git`);
        }
      } catch {
        // No .git directory.
      }
      return {
        program: bwrap,
        args: [
          ...bwrapArgs({
            workspace: input.workspace,
            readOnlyInside: inside,
            hostFiles,
            network: input.network,
          }),
          "--",
          real,
          ...args,
        ],
        cwd: input.workspace,
        env,
        timeoutMs: input.timeoutMs,
        drainMs,
        tailBytes,
      };
    },
    note: (readOnly) =>
      `Bubblewrap confined the test: new user, PID, IPC, UTS and network namespaces (${
        input.network ? "network shared by --test-network" : "no network"
      }), no capabilities, read-only system directories, the workspace read-write with .git and ${readOnly} protected file${
        readOnly === 1 ? "" : "s"
      } read-only, nothing else of the host, a private /tmp as $HOME, environment PATH, HOME, TMPDIR${
        envNames(input.env)
      } only, stdin closed; the whole sandbox, every process the test started included, was killed when the test ended or after ${input.timeoutMs} ms`,
  };
}

const DENO_SAFE_FLAG =
  /^(?:-q|--quiet|--check(?:=all)?|--no-check(?:=remote)?|-r|--reload|--unstable(?:-[a-z-]+)?|--parallel|--fail-fast(?:=[0-9]+)?|--filter=.*|--doc|--no-config|--no-lock|--no-remote|--no-npm|--no-prompt|--cached-only|--shuffle(?:=[0-9]+)?|--seed=[0-9]+|--permit-no-files|--hide-stacktraces|--reporter=(?:pretty|dot|tap|junit))$/;

/** A Deno plan, or the reason a Deno plan does not apply. */
function denoPlan(
  input: TestPlanInput,
  program: string,
  args: readonly string[],
): TestPlan | string {
  const base = program.split("/").at(-1) ?? program;
  const isDeno = base === "deno" || program === Deno.execPath();
  const [sub, ...rest] = args;
  if (!isDeno) return `the program is ${JSON.stringify(base)}, not deno`;
  if (sub !== "run" && sub !== "test") {
    return `"deno ${sub ?? ""}" is not "deno run" or "deno test"`;
  }
  const kept: string[] = [];
  let scanning = true;
  for (const arg of rest) {
    if (!scanning || arg === "--" || !arg.startsWith("-")) {
      if (sub === "run") scanning = false;
      if (arg === "--") scanning = false;
      kept.push(arg);
      continue;
    }
    const scoped = /^--allow-(read|write)=(.+)$/.exec(arg);
    if (scoped !== null) {
      const outside = scoped[2]!.split(",").some((path) =>
        !within(
          resolve(input.workspace, path),
          input.workspace,
        )
      );
      if (outside) return `${arg} reaches outside the workspace`;
      continue; // The workspace-wide grant covers it.
    }
    if (!DENO_SAFE_FLAG.test(arg)) {
      return `its flag ${arg} could widen what the test may do`;
    }
    kept.push(arg);
  }
  const ws = input.workspace;
  const names = Object.keys(input.env).sort();
  const flags = [
    "--no-config",
    "--no-lock",
    "--no-remote",
    "--no-npm",
    "--no-prompt",
    `--allow-read=${escapeList([ws])}`,
    `--allow-write=${escapeList([ws])}`,
    ...(names.length === 0 ? [] : [`--allow-env=${names.join(",")}`]),
    ...(input.network ? ["--allow-net"] : []),
  ];
  return {
    confinement: "deno",
    program,
    spec: (readOnly, escapes, drainMs, tailBytes) => ({
      program,
      args: [
        sub,
        ...flags,
        // Deno follows symlinks but checks the path as written: a link that
        // leads outside is denied outright, and the directories above it
        // may not be renamed (which would give the link a new, allowed path).
        // .git is not surveyed (it may be large): none of it is readable.
        `--deny-read=${
          escapeList([`${ws}/.git`, ...escapes.map((rel) => `${ws}/${rel}`)])
        }`,
        `--deny-write=${
          escapeList([
            `${ws}/.git`,
            ...readOnly.map((rel) => `${ws}/${rel}`),
            ...escapes.flatMap((rel) =>
              withParents(rel).map((p) => `${ws}/${p}`)
            ),
          ])
        }`,
        ...kept,
      ],
      cwd: ws,
      env: { ...pick(DENO_RUNTIME_ENV), ...input.env },
      timeoutMs: input.timeoutMs,
      drainMs,
      tailBytes,
    }),
    note: (readOnly) =>
      `Deno confined the test ("deno ${sub}" without bubblewrap): --no-config, read and write only inside the workspace, .git unreadable and ${readOnly} protected file${
        readOnly === 1 ? "" : "s"
      } read-only, symlinks leading outside neither readable nor writable, ${
        input.network ? "network allowed by --test-network" : "no network"
      }, environment ${
        names.length === 0 ? "none" : names.join(", ")
      }, no run, ffi or sys, no remote or npm imports, stdin closed, killed after ${input.timeoutMs} ms (a Deno test cannot start processes)`,
  };
}

/** `a/b/c` → `a/b/c`, `a/b`, `a`. */
function withParents(rel: string): string[] {
  const parts = rel.split("/");
  return parts.map((_, i) => parts.slice(0, parts.length - i).join("/"));
}

function escapeList(paths: readonly string[]): string {
  return paths.map((path) => path.replaceAll(",", ",,")).join(",");
}
