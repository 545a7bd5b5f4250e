// Where the repository is and how the tests start its CLI: free of side
// effects and of permissions, so figure scripts run with narrow flags can
// import it (tests take these names through `../_kit.ts`).
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root, found from this file (not the working directory). */
export const REPO_ROOT: string = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
);

/** `cli.ts` of this checkout, by absolute path. */
export const CLI: string = join(REPO_ROOT, "cli.ts");

/** The permissions `deno task test` grants; CLI subprocesses get the same. */
export const TEST_PERMISSIONS: readonly string[] = [
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-net=127.0.0.1",
  "--allow-env",
];

/**
 * The permissions of a `loom` subprocess that needs no network (`loom run`
 * on a recording, `loom mcp` over stdio): the test task's, without
 * `--allow-net`, so a test also shows that no network is asked for.
 */
export const LOOM_PERMISSIONS: readonly string[] = TEST_PERMISSIONS.filter(
  (flag) => !flag.startsWith("--allow-net"),
);

/** Options of {@linkcode loomArgs}. */
export interface LoomArgsOptions {
  /** Permission flags instead of {@linkcode LOOM_PERMISSIONS}. */
  readonly permissions?: readonly string[];
  /** Deno flags added after the permissions (e.g. `--allow-net=…`). */
  readonly denoFlags?: readonly string[];
  /** The `cli.ts` to run (another checkout's, for a before/after figure). */
  readonly cli?: string;
}

/**
 * The command line of a quiet `loom` subprocess after the Deno executable:
 * `run --quiet FLAGS cli.ts ARGS`.
 *
 * @param args Arguments after the program name, e.g. `mcp --root DIR`.
 * @param options Permissions, more Deno flags, another `cli.ts`.
 * @returns The arguments for `Deno.Command(Deno.execPath(), …)`.
 */
export function loomArgs(
  args: readonly string[],
  options: LoomArgsOptions = {},
): string[] {
  return [
    "run",
    "--quiet",
    ...(options.permissions ?? LOOM_PERMISSIONS),
    ...(options.denoFlags ?? []),
    options.cli ?? CLI,
    ...args,
  ];
}
