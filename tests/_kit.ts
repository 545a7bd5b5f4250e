// The test kit: one CLI runner (with the test task's permission flags defined
// once), the vendored corpora, and disposables. Tests import it instead of
// keeping their own copies. The MCP kit (servers, clients, descriptors) is
// `_kit/mcp.ts`; what figure scripts measure with is `_kit/measure.ts`.
import { join } from "node:path";
import { main } from "../lib/cli/main.ts";
import type { ModelProvider } from "../lib/providers/model_provider.ts";
import type { SliceRequest } from "../lib/slice/request.ts";
import {
  type FixtureName,
  fixtureSlice,
  prepareWorkspace,
} from "./e2e/_workspace.ts";
import { CLI, REPO_ROOT, TEST_PERMISSIONS } from "./_kit/repo.ts";
import "./_session_key.ts";

export { REPO_ROOT, TEST_PERMISSIONS };

/**
 * The path of a vendored corpus file under `tests/testdata/` (see its
 * README for sources and licences).
 *
 * @param path A path inside `tests/testdata/`, e.g. `rfc6901/rfc6901_vectors.json`.
 * @returns The absolute path.
 */
export function testdata(path: string): string {
  return join(REPO_ROOT, "tests", "testdata", path);
}

/**
 * Runs `deno ARGS` (this Deno) in the repository root and returns its
 * standard output; a failure fails the test with its standard error.
 *
 * @param args Arguments after `deno`, e.g. `info`, `--json`, `cli.ts`.
 * @returns The decoded standard output.
 */
export async function deno(...args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!output.success) {
    throw new Error(
      `deno ${args.join(" ")} exited ${output.code}: ${
        decoder.decode(output.stderr)
      }`,
    );
  }
  return decoder.decode(output.stdout);
}

/** What a subprocess printed and returned. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: Uint8Array;
}

/** Options of {@linkcode loomWith} and {@linkcode spawnLoom}. */
export interface LoomOptions {
  /** Permission flags instead of {@linkcode TEST_PERMISSIONS}. */
  readonly flags?: readonly string[];
  /** Extra environment variables. */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory; the repository root by default. */
  readonly cwd?: string;
  /** Where standard output goes (piped by default). */
  readonly stdout?: "piped" | "null";
}

/** The one command line of a `loom` subprocess: `stdin: "null"`, stderr piped. */
function loomCommand(
  options: LoomOptions,
  args: readonly string[],
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...(options.flags ?? TEST_PERMISSIONS),
      CLI,
      ...args,
    ],
    cwd: options.cwd ?? REPO_ROOT,
    stdin: "null",
    stdout: options.stdout ?? "piped",
    stderr: "piped",
    ...(options.env === undefined ? {} : { env: { ...options.env } }),
  });
}

/**
 * Runs the real `loom` CLI (`cli.ts`) as a subprocess with the given flags,
 * environment and working directory, `stdin: "null"`.
 *
 * @param options Flags, environment and working directory.
 * @param args Arguments after the program name.
 * @returns Exit code and decoded output.
 */
export async function loomWith(
  options: LoomOptions,
  ...args: string[]
): Promise<CliResult> {
  return decoded(await loomCommand(options, args).output());
}

function decoded(output: Deno.CommandOutput): CliResult {
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    stdoutBytes: output.stdout,
  };
}

/**
 * Starts the real `loom` CLI as a subprocess and returns at once, for tests
 * that signal or kill it while it runs.
 *
 * @param args Arguments after the program name.
 * @param options Flags, environment, working directory and stdout.
 * @returns The running child.
 */
export function spawnLoom(
  args: readonly string[],
  options: LoomOptions = {},
): Deno.ChildProcess {
  return loomCommand(options, args).spawn();
}

/**
 * Waits for a `loom` started with {@linkcode spawnLoom} (stdout piped) to
 * end.
 *
 * @param child The running child.
 * @returns Exit code and decoded output.
 */
export async function finished(child: Deno.ChildProcess): Promise<CliResult> {
  return decoded(await child.output());
}

/**
 * Runs the real `loom` CLI as a subprocess with the test task's permissions.
 *
 * @param args Arguments after the program name.
 * @returns Exit code and decoded output.
 */
export function loom(...args: string[]): Promise<CliResult> {
  return loomWith({}, ...args);
}

/** What an in-process {@linkcode main} call printed and returned. */
export interface InProcessResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `main(args, io)` in this process, capturing what it writes.
 *
 * @param args Arguments after the program name.
 * @returns Exit code and output.
 */
export function loomIn(...args: string[]): Promise<InProcessResult> {
  return loomInWith({}, ...args);
}

/** Options of {@linkcode loomInWith}. */
export interface InProcessOptions {
  /**
   * Environment variables set for the call and restored after it (an empty
   * string is set as empty).
   */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Runs `main(args, io)` in this process with some environment variables
 * set for the call, capturing what it writes.
 *
 * @param options The variables.
 * @param args Arguments after the program name.
 * @returns Exit code and output.
 */
export async function loomInWith(
  options: InProcessOptions,
  ...args: string[]
): Promise<InProcessResult> {
  const saved = Object.keys(options.env ?? {}).map((name) =>
    [name, Deno.env.get(name)] as const
  );
  for (const [name, value] of Object.entries(options.env ?? {})) {
    Deno.env.set(name, value);
  }
  let stdout = "";
  let stderr = "";
  try {
    const code = await main(args, {
      out: (text) => stdout += text,
      err: (text) => stderr += text,
    });
    return { code, stdout, stderr };
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
}

/** A temporary directory removed with everything in it when disposed. */
export interface TempDir extends AsyncDisposable {
  /** Its real path. */
  readonly path: string;
}

/**
 * Makes a temporary directory for `await using`.
 *
 * @returns The directory; disposing it removes it recursively.
 */
export async function tempDir(): Promise<TempDir> {
  const path = await Deno.realPath(await Deno.makeTempDir());
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }),
  };
}

/**
 * The names in a directory, sorted: a before/after check that a command
 * left nothing behind.
 *
 * @param dir The directory.
 * @returns Its entries' names.
 */
export async function dirNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

// Whether a path exists itself (lstat: a dangling symlink an attack left
// behind counts): the folder back-end's own check.
export { exists } from "../lib/storage/_files.ts";

// ---------------------------------------------------------------------------
// Factories shared by the context, briefing, bench, reference and store
// tests (and the persistence fixtures). They live in `_factories.ts`, which
// has no side effects, so the bench scripts can use them under their narrow
// permissions; tests take them from here with the rest of the kit.
// ---------------------------------------------------------------------------
export {
  apiDump,
  CONTEXT_REPORT_KEYS,
  type Put,
  rng,
  storeWith,
  testsRunRecord,
  type TestsRunRecordOptions,
} from "./_factories.ts";

// ---------------------------------------------------------------------------
// Factories of the slice, provider and executor tests.

/** A temp copy of a fixture workspace, removed when disposed. */
export interface FixtureCopy extends AsyncDisposable {
  /** The temp root holding the workspace (and `outside/` for `hostile`). */
  readonly root: string;
  readonly workspace: string;
  /**
   * The request the fixture's recordings were made with, on this copy: its
   * intent and `deno run check.ts` as the test (60 s).
   */
  request(provider: string | ModelProvider, maxSteps: number): SliceRequest;
}

/**
 * Copies a fixture workspace (see `tests/e2e/_workspace.ts`) into a fresh
 * temp root.
 *
 * @param name The fixture.
 * @returns The copy; disposing it removes the temp root.
 */
export async function fixtureCopy(name: FixtureName): Promise<FixtureCopy> {
  const prepared = await prepareWorkspace(name);
  return {
    root: prepared.root,
    workspace: prepared.workspace,
    request: (provider, maxSteps) => ({
      ...fixtureSlice(name, prepared.workspace, maxSteps),
      provider,
    }),
    [Symbol.asyncDispose]: () => prepared.cleanup(),
  };
}
