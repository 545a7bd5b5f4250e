// The test kit: one CLI runner (with the test task's permission flags defined
// once), the vendored corpora, and disposables. Tests import it instead of
// keeping their own copies.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../lib/cli/main.ts";
import type { ModelProvider } from "../lib/providers/model_provider.ts";
import type { SliceRequest } from "../lib/slice/request.ts";
import {
  checkCommand,
  type FixtureName,
  INTENTS,
  prepareWorkspace,
} from "./e2e/_workspace.ts";
import "./_session_key.ts";

/** The repository root, found from this file (not the working directory). */
export const REPO_ROOT: string = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "..",
);

/** The permissions `deno task test` grants; CLI subprocesses get the same. */
export const TEST_PERMISSIONS: readonly string[] = [
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-net=127.0.0.1",
  "--allow-env",
];

/** `deno run <TEST_PERMISSIONS> cli.ts`: the arguments before loom's own. */
export const CLI_FLAGS: readonly string[] = [
  "run",
  ...TEST_PERMISSIONS,
  "cli.ts",
];

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

/** What a subprocess printed and returned. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: Uint8Array;
}

/** Options of {@linkcode loomWith}. */
export interface LoomOptions {
  /** Permission flags instead of {@linkcode TEST_PERMISSIONS}. */
  readonly flags?: readonly string[];
  /** Extra environment variables. */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory; the repository root by default. */
  readonly cwd?: string;
}

/** The `deno run … cli.ts ARGS` command of {@linkcode loomWith}. */
function loomCommand(
  options: LoomOptions,
  args: readonly string[],
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...(options.flags ?? TEST_PERMISSIONS),
      join(REPO_ROOT, "cli.ts"),
      ...args,
    ],
    cwd: options.cwd ?? REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    ...(options.env === undefined ? {} : { env: { ...options.env } }),
  });
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

/** A `loom` subprocess still running (to signal it, say). */
export interface LoomProcess {
  readonly child: Deno.ChildProcess;
  /** Waits for it to end. */
  finished(): Promise<CliResult>;
}

/**
 * Starts the real `loom` CLI as {@linkcode loomWith} runs it, without
 * waiting for it.
 *
 * @param options Flags, environment and working directory.
 * @param args Arguments after the program name.
 * @returns The running process.
 */
export function spawnLoom(
  options: LoomOptions,
  ...args: string[]
): LoomProcess {
  const child = loomCommand(options, args).spawn();
  const output = child.output();
  return { child, finished: async () => decoded(await output) };
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
export async function loomIn(...args: string[]): Promise<InProcessResult> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    out: (text) => stdout += text,
    err: (text) => stderr += text,
  });
  return { code, stdout, stderr };
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

// ---------------------------------------------------------------------------
// Factories shared by the context, briefing, bench, reference and store
// tests (and the persistence fixtures). They live in `_factories.ts`, which
// has no side effects, so the bench scripts can use them under their narrow
// permissions; tests take them from here with the rest of the kit.
// ---------------------------------------------------------------------------
export {
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
      intent: INTENTS[name],
      workspace: prepared.workspace,
      test: { command: checkCommand(), timeoutMs: 60_000 },
      maxSteps,
      provider,
    }),
    [Symbol.asyncDispose]: () => prepared.cleanup(),
  };
}
