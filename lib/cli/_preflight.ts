/**
 * The checks `loom run` makes before its first effect: every path, URL and
 * program the arguments name, so a bad one is reported (exit 2) before any
 * session is created, model called or file in the workspace changed.
 *
 * @module
 */
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { createProvider } from "../providers/create_provider.ts";
import { fsReason } from "./_args.ts";
import { InputError, UsageError } from "./_io.ts";
import { readingFile } from "../fs_reason.ts";

/** What {@linkcode checkBeforeStart} checks. */
export interface StartChecks {
  /** `--workspace DIR`. */
  readonly workspace: string;
  /** `--model SPEC`. */
  readonly model: string;
  /** `--base-url URL`. */
  readonly baseUrl?: string | undefined;
  /** The test program and arguments of `--test`. */
  readonly test?: readonly string[] | undefined;
  /** `--context-report PATH`. */
  readonly contextReport?: string | undefined;
  /** `--persist-config F`. */
  readonly persistConfig?: string | undefined;
  /** `--session DIR` (a new session). */
  readonly session?: string | undefined;
  /** The environment API keys and `PATH` come from (default `Deno.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Checks the workspace, model spec (recording, API key, base URL), test
 * program, report path and session directory of a run.
 *
 * @param checks What the arguments name.
 * @throws {UsageError} For a bad path or flag.
 * @throws {InputError} `test_program_not_found` when the test program is
 *   not on `PATH` (or, with a `/`, not in the workspace).
 * @throws {Error} The provider's `bad_spec`, `missing_api_key`,
 *   `recording_invalid` or `bad_option` error.
 */
export async function checkBeforeStart(checks: StartChecks): Promise<void> {
  await checkDirectory(checks.workspace, "--workspace");
  checkModel(checks);
  if (checks.test !== undefined) {
    await findProgram(checks.test, checks.workspace, checks.env);
  }
  if (checks.contextReport !== undefined) {
    await checkWritableFile(checks.contextReport, "--context-report");
  }
  if (checks.persistConfig !== undefined) {
    await checkReadableFile(checks.persistConfig, "--persist-config");
  }
  if (checks.session !== undefined) {
    await checkDirectory(checks.session, "--session", {
      notDirectory:
        "it is a file; give a directory (it is created when missing)",
      missingOk: true,
    });
  }
}

async function checkReadableFile(path: string, flag: string): Promise<void> {
  await readingFile(
    `${flag} ${path}`,
    async () => (await Deno.open(path, { read: true })).close(),
    (message) => new UsageError("usage", message),
  );
}

/**
 * Checks that a flag names a directory; with `missingOk`, a path that does
 * not exist yet passes too (it is created at the start).
 */
async function checkDirectory(
  path: string,
  flag: string,
  options: { readonly notDirectory: string; readonly missingOk?: boolean } = {
    notDirectory: "it is not a directory",
  },
): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    if (options.missingOk && error instanceof Deno.errors.NotFound) return;
    throw new UsageError(
      "usage",
      `Cannot use ${flag} ${path}: ${fsReason(error)}`,
    );
  }
  if (!info.isDirectory) {
    throw new UsageError(
      "usage",
      `Cannot use ${flag} ${path}: ${options.notDirectory}`,
    );
  }
}

function checkModel(checks: StartChecks): void {
  const recorded = checks.model.startsWith("recorded:");
  if (recorded && checks.baseUrl !== undefined) {
    throw new UsageError(
      "usage",
      "--base-url has no effect with a recorded model: give anthropic:MODEL or openai:MODEL, or drop --base-url",
    );
  }
  if (recorded) checkRecordingReadable(checks.model.slice("recorded:".length));
  // Creating the provider reads and validates a recording, checks the API
  // key and the base URL; nothing is sent.
  createProvider(checks.model, {
    ...(checks.baseUrl === undefined ? {} : { baseUrl: checks.baseUrl }),
    ...(checks.env === undefined ? {} : { env: checks.env }),
  });
}

function checkRecordingReadable(path: string): void {
  if (path === "") return; // createProvider says the path is empty
  try {
    if (Deno.statSync(path).isFile) return;
    throw new InputError(
      "recording_invalid",
      `Cannot read the --model recording ${path}: it is not a file`,
    );
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(
      "recording_invalid",
      `Cannot read the --model recording ${path}: ${fsReason(error)}`,
    );
  }
}

/**
 * Finds the test program the way the executor runs it: a name with a `/`
 * resolves against the workspace, a bare name is looked up on `PATH`.
 */
async function findProgram(
  command: readonly string[],
  workspace: string,
  env: Readonly<Record<string, string | undefined>> | undefined,
): Promise<void> {
  const program = command[0]!;
  const candidates = program.includes("/")
    ? [isAbsolute(program) ? program : resolve(workspace, program)]
    : pathOf(env).split(delimiter).filter((dir) => dir !== "")
      .map((dir) => join(dir, program));
  for (const candidate of candidates) {
    if (await isExecutableFile(candidate)) return;
  }
  throw new InputError(
    "test_program_not_found",
    program.includes("/")
      ? `Cannot run the --test program ${program}: no executable file ${
        candidates[0]
      }`
      : `Cannot run the --test program ${program}: it is not on PATH`,
  );
}

function pathOf(
  env: Readonly<Record<string, string | undefined>> | undefined,
): string {
  if (env !== undefined) return env.PATH ?? "";
  const granted = Deno.permissions.querySync({ name: "env", variable: "PATH" })
    .state === "granted";
  return granted ? Deno.env.get("PATH") ?? "" : "";
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && (info.mode === null || (info.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/**
 * Checks that a file a flag names can be written later without writing it
 * now: its folder exists and takes a new file, or the file exists and opens
 * for writing (not truncated).
 *
 * @param path The path given.
 * @param flag The flag, e.g. `--context-report`, for the message.
 * @throws {UsageError} When the file could not be written.
 */
export async function checkWritableFile(
  path: string,
  flag: string,
): Promise<void> {
  let info: Deno.FileInfo | null = null;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new UsageError(
        "usage",
        `Cannot write ${flag} ${path}: ${fsReason(error)}`,
      );
    }
  }
  try {
    if (info !== null) {
      if (!info.isFile) {
        throw new UsageError(
          "usage",
          `Cannot write ${flag} ${path}: it is not a regular file`,
        );
      }
      (await Deno.open(path, { write: true })).close();
      return;
    }
    await checkFolderTakesFiles(dirname(resolve(path)), `${flag} ${path}`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      "usage",
      `Cannot write ${flag} ${path}: ${fsReason(error)}`,
    );
  }
}

async function checkFolderTakesFiles(folder: string, what: string) {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(folder);
  } catch (error) {
    throw new UsageError(
      "usage",
      `Cannot write ${what}: its folder ${folder} ${
        error instanceof Deno.errors.NotFound
          ? "does not exist"
          : `cannot be used, ${fsReason(error)}`
      }`,
    );
  }
  if (!info.isDirectory) {
    throw new UsageError(
      "usage",
      `Cannot write ${what}: ${folder} is not a directory`,
    );
  }
  try {
    const probe = await Deno.makeTempFile({ dir: folder, prefix: ".loom-" });
    await Deno.remove(probe);
  } catch (error) {
    throw new UsageError(
      "usage",
      `Cannot write ${what}: cannot create a file in ${folder}, ${
        fsReason(error)
      }`,
    );
  }
}
