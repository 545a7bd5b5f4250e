/**
 * The workspace executor: every effect of a slice (reading files, writing
 * them, running the tests) happens inside a Deno Worker whose permissions
 * allow reading and writing the workspace, running the configured test
 * program, and nothing else. Deno enforces that boundary; commission's own
 * path checks come first.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { ConfinementUnavailableError } from "./confinement_unavailable.ts";
import { ExecutorError } from "./executor_error.ts";
import type {
  InitReply,
  InspectEntry,
  Reply,
  Request,
  RunTestsReply,
} from "./_protocol.ts";
import { decodeTail } from "./_tail.ts";
import { workerPermissions } from "./_permissions.ts";
import { WORKER_SOURCE } from "./_worker.ts";
import { workerOptionsState } from "./_worker_options.ts";

/** How {@linkcode WorkspaceExecutor.start} sets up the executor. */
export interface WorkspaceExecutorOptions {
  /** The workspace directory; effects stay inside its real path. */
  workspace: string;
  /**
   * The test command, program first. A program with a `/` resolves against
   * the workspace; a bare name is looked up on `PATH`.
   */
  testCommand?: readonly string[];
  /** Kill the test process after this many milliseconds (default 120,000). */
  testTimeoutMs?: number;
  /**
   * Extra environment for the test process. Its environment is otherwise
   * cleared except `PATH`, `HOME`, locale, temp-dir and Deno cache variables.
   */
  testEnv?: Readonly<Record<string, string>>;
  /** Largest file `inspect` reads (default 16 MiB). */
  maxFileBytes?: number;
}

/** One file `inspect` was asked for: its text, or why there is none. */
export interface InspectedFileText {
  /** The path as asked. */
  path: string;
  /** The file's UTF-8 text. */
  text?: string;
  /** `ErrorName: message` when the file could not be read as text. */
  error?: string;
  /** Present when the file does not exist. */
  missing?: true;
}

/** One file an edit wrote. */
export interface EditedFileDigest {
  /** The path as asked. */
  path: string;
  /** Size of the new contents in UTF-8 bytes. */
  utf8_bytes: number;
  /** SHA-256 of the new contents, lowercase hex. */
  sha256: string;
}

/** The outcome of a test run. */
export interface TestRunOutcome {
  /** The process's exit code (128 + signal number when it was killed). */
  exit_code: number;
  /** Whether the run hit the timeout and was killed. */
  timed_out: boolean;
  /**
   * The last 8 KiB (at most 8,192 UTF-8 bytes) of stdout and stderr
   * combined in arrival order, starting on a character boundary.
   */
  output_tail: string;
  /** All output bytes the process wrote. */
  output_bytes: number;
  /** What guarded the run, and what did not. */
  confinement: string;
}

/**
 * Bytes of combined test output {@linkcode WorkspaceExecutor.runTests}
 * keeps: 8 KiB, the upstream runner's tail.
 *
 * @example
 * ```ts
 * import { TEST_OUTPUT_TAIL_BYTES } from "./workspace_executor.ts";
 * import assert from "node:assert/strict";
 * assert.equal(TEST_OUTPUT_TAIL_BYTES, 8 * 1024);
 * ```
 */
export const TEST_OUTPUT_TAIL_BYTES: number = 8192;
const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;
const DRAIN_MS = 1_000;
const WATCHDOG_MARGIN_MS = 30_000;
const KEPT_ENV = [
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

interface TestSetup {
  program: string;
  args: string[];
  timeoutMs: number;
  env: Record<string, string>;
}

/**
 * Runs a slice's effects in a permission-scoped Deno Worker.
 *
 * The worker may read and write only the workspace's real path, run only
 * the configured test program, and has no net, env, sys, ffi or import
 * access. Deno checks permissions on paths as written and does not follow
 * symlinks, so the worker also refuses real paths outside the workspace.
 * The test process itself is an ordinary subprocess: Deno does not confine
 * it, and {@linkcode WorkspaceExecutor.runTests} says so.
 *
 * Needs `--unstable-worker-options`; without it {@linkcode
 * WorkspaceExecutor.start} throws {@linkcode ConfinementUnavailableError} rather
 * than run unconfined.
 *
 * @example
 * ```ts
 * import { WorkspaceExecutor } from "./workspace_executor.ts";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * const executor = await WorkspaceExecutor.start({ workspace });
 * try {
 *   const edited = await executor.edit([{ path: "src/a.txt", contents: "hi\n" }]);
 *   assert.equal(edited.files[0]?.utf8_bytes, 3);
 *   const [file] = await executor.inspect(["src/a.txt"]);
 *   assert.equal(file?.text, "hi\n");
 *   const [outside] = await executor.inspect(["/etc/passwd"]);
 *   assert.match(outside?.error ?? "", /NotCapable/);
 * } finally {
 *   executor.close();
 *   await Deno.remove(workspace, { recursive: true });
 * }
 * ```
 */
export class WorkspaceExecutor {
  readonly #worker: Worker;
  readonly #workspace: string;
  readonly #test: TestSetup | null;
  readonly #pending = new Map<
    number,
    { resolve(value: unknown): void; reject(error: Error): void }
  >();
  #nextId = 1;
  #closed: Error | null = null;

  private constructor(
    worker: Worker,
    workspace: string,
    test: TestSetup | null,
  ) {
    this.#worker = worker;
    this.#workspace = workspace;
    this.#test = test;
    worker.onmessage = (event: MessageEvent<Reply>) => {
      const reply = event.data;
      const waiting = this.#pending.get(reply.id);
      if (waiting === undefined) return;
      this.#pending.delete(reply.id);
      if (reply.ok) {
        waiting.resolve(reply.value);
      } else {
        const error = new Error(reply.error.message);
        error.name = reply.error.name;
        waiting.reject(error);
      }
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#shutDown(
        new ExecutorError(
          "worker_failed",
          `The executor's worker failed: ${event.message}`,
        ),
      );
    };
    worker.onmessageerror = () => {
      this.#shutDown(
        new ExecutorError(
          "worker_failed",
          "The executor's worker sent a message that could not be read",
        ),
      );
    };
  }

  /**
   * Starts the worker with permissions scoped to the workspace and checks,
   * from inside it, that Deno granted no more than that.
   *
   * @param options The workspace and the optional test command.
   * @returns A running executor; call {@linkcode WorkspaceExecutor.close}.
   * @throws {ConfinementUnavailableError} When Deno runs without
   *   `--unstable-worker-options`, the process lacks a permission the worker
   *   needs, or the worker holds more permissions than asked for.
   * @throws {ExecutorError} `workspace_unavailable` when the workspace is not
   *   a directory.
   *
   * @example
   * ```ts
   * import { WorkspaceExecutor } from "./workspace_executor.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * const executor = await WorkspaceExecutor.start({ workspace });
   * assert.equal(executor.workspace, await Deno.realPath(workspace));
   * executor.close();
   * await Deno.remove(workspace);
   * ```
   */
  static async start(
    options: WorkspaceExecutorOptions,
  ): Promise<WorkspaceExecutor> {
    const workspace = await realWorkspace(options.workspace);
    const test = testSetup(workspace, options);
    if ((await workerOptionsState()) === "disabled") {
      throw new ConfinementUnavailableError(
        "confinement_unavailable",
        "Cannot confine the executor: Deno runs without --unstable-worker-options, which scoping a worker's permissions needs; run again with that flag",
      );
    }
    const url = URL.createObjectURL(
      new Blob([WORKER_SOURCE], { type: "text/javascript" }),
    );
    let worker: Worker;
    try {
      worker = new Worker(url, {
        type: "module",
        name: "loom-executor",
        deno: {
          permissions: workerPermissions(workspace, test?.program ?? null),
        },
      });
    } catch (error) {
      URL.revokeObjectURL(url);
      throw new ConfinementUnavailableError(
        "confinement_unavailable",
        `Cannot confine the executor: Deno refused the worker's permissions (${
          describe(error)
        }); the process needs read and write access to ${workspace}${
          test === null ? "" : ` and run access to ${test.program}`
        }`,
        { cause: error },
      );
    }
    const executor = new WorkspaceExecutor(worker, workspace, test);
    let reply: InitReply;
    try {
      reply = await executor.#call({
        op: "init",
        id: 0,
        workspace,
        test: test === null ? null : { ...test, drainMs: DRAIN_MS },
        maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
        tailBytes: TEST_OUTPUT_TAIL_BYTES,
      }) as InitReply;
    } catch (error) {
      executor.close();
      throw new ConfinementUnavailableError(
        "confinement_unavailable",
        `Cannot confine the executor: its worker did not start (${
          describe(error)
        })`,
        { cause: error },
      );
    } finally {
      URL.revokeObjectURL(url);
    }
    const excess = overreach(reply.permissions, test !== null);
    if (excess.length > 0) {
      executor.close();
      throw new ConfinementUnavailableError(
        "confinement_unavailable",
        `Cannot confine the executor: its worker's permissions differ from the ones asked for (${
          excess.join(", ")
        })`,
      );
    }
    return executor;
  }

  /** The workspace's real path, which the worker is confined to. */
  get workspace(): string {
    return this.#workspace;
  }

  /**
   * Reads files as UTF-8 text. Each path resolves against the workspace;
   * a file that is missing, binary, not valid UTF-8, too large, or outside
   * the workspace (Deno's `NotCapable`) gets an `error` instead of `text`.
   *
   * @param paths Workspace-relative paths (commissioned).
   * @returns One entry per path, in order.
   * @throws {ExecutorError} `executor_closed` or `worker_failed`.
   *
   * @example
   * ```ts
   * import { WorkspaceExecutor } from "./workspace_executor.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * await Deno.writeTextFile(`${workspace}/a.txt`, "alpha");
   * const executor = await WorkspaceExecutor.start({ workspace });
   * const [a, b] = await executor.inspect(["a.txt", "b.txt"]);
   * assert.equal(a?.text, "alpha");
   * assert.equal(b?.missing, true);
   * executor.close();
   * await Deno.remove(workspace, { recursive: true });
   * ```
   */
  async inspect(paths: readonly string[]): Promise<InspectedFileText[]> {
    const entries = await this.#call({
      op: "inspect",
      id: 0,
      paths: [...paths],
    }) as InspectEntry[];
    return entries;
  }

  /**
   * Writes whole files atomically: every file goes to a temporary file in
   * its target directory first, then all are renamed into place. When any
   * step fails, the files already renamed are restored, created directories
   * removed, and the old files stay byte-identical.
   *
   * @param files Workspace-relative paths (commissioned) and their text.
   * @returns Size and SHA-256 of each file written, in order.
   * @throws {ExecutorError} `edit_failed` (nothing changed), or
   *   `executor_closed`/`worker_failed`.
   *
   * @example
   * ```ts
   * import { WorkspaceExecutor } from "./workspace_executor.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * const executor = await WorkspaceExecutor.start({ workspace });
   * const { files } = await executor.edit([{ path: "a.txt", contents: "" }]);
   * assert.equal(files[0]?.sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
   * executor.close();
   * await Deno.remove(workspace, { recursive: true });
   * ```
   */
  async edit(
    files: readonly { path: string; contents: string }[],
  ): Promise<{ files: EditedFileDigest[] }> {
    try {
      await this.#call({
        op: "edit",
        id: 0,
        files: files.map((f) => ({ path: f.path, contents: f.contents })),
      });
    } catch (error) {
      if (error instanceof ExecutorError) throw error;
      throw new ExecutorError(
        "edit_failed",
        `Cannot write the edit, so nothing changed: ${describe(error)}`,
        { cause: error },
      );
    }
    return {
      files: files.map((f) => {
        const bytes = new TextEncoder().encode(f.contents);
        return {
          path: f.path,
          utf8_bytes: bytes.length,
          sha256: createHash("sha256").update(bytes).digest("hex"),
        };
      }),
    };
  }

  /**
   * Runs the configured test command in the workspace, kills it at the
   * timeout, and keeps the tail of its combined output.
   *
   * @returns Exit code, timeout flag, output tail and the confinement note.
   * @throws {ExecutorError} `no_test_command`, `tests_failed_to_start` (the
   *   program could not be spawned), `worker_failed` (the worker stopped
   *   answering past the timeout), or `executor_closed`.
   *
   * @example
   * ```ts
   * import { WorkspaceExecutor } from "./workspace_executor.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * const executor = await WorkspaceExecutor.start({
   *   workspace,
   *   testCommand: [Deno.execPath(), "eval", "console.log('ok')"],
   * });
   * const run = await executor.runTests();
   * assert.equal(run.exit_code, 0);
   * assert.equal(run.output_tail, "ok\n");
   * assert.match(run.confinement, /not confined by Deno/);
   * executor.close();
   * await Deno.remove(workspace, { recursive: true });
   * ```
   */
  async runTests(): Promise<TestRunOutcome> {
    const test = this.#test;
    if (test === null) {
      throw new ExecutorError(
        "no_test_command",
        "Cannot run tests: no test command is configured",
      );
    }
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const overdue = new Promise<never>((_, reject) => {
      watchdog = setTimeout(() => {
        const error = new ExecutorError(
          "worker_failed",
          `The executor's worker did not finish the tests within ${test.timeoutMs} ms and a ${WATCHDOG_MARGIN_MS} ms margin; it was stopped`,
        );
        this.#shutDown(error);
        reject(error);
      }, test.timeoutMs + WATCHDOG_MARGIN_MS);
    });
    let reply: RunTestsReply;
    try {
      reply = await Promise.race([
        this.#call({ op: "runTests", id: 0 }),
        overdue,
      ]) as RunTestsReply;
    } catch (error) {
      if (error instanceof ExecutorError) throw error;
      throw new ExecutorError(
        "tests_failed_to_start",
        `Cannot run the test command ${JSON.stringify(test.program)}: ${
          describe(error)
        }`,
        { cause: error },
      );
    } finally {
      clearTimeout(watchdog);
    }
    return {
      exit_code: reply.exit_code,
      timed_out: reply.timed_out,
      output_tail: decodeTail(reply.tail, TEST_OUTPUT_TAIL_BYTES),
      output_bytes: reply.output_bytes,
      confinement: this.#confinement(test),
    };
  }

  /**
   * Stops the worker. Calls still waiting fail with `executor_closed`.
   * Closing twice is harmless.
   *
   * @example
   * ```ts
   * import { WorkspaceExecutor } from "./workspace_executor.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * const executor = await WorkspaceExecutor.start({ workspace });
   * executor.close();
   * await assert.rejects(executor.inspect(["a.txt"]), { code: "executor_closed" });
   * await Deno.remove(workspace);
   * ```
   */
  close(): void {
    this.#shutDown(
      new ExecutorError("executor_closed", "The executor is closed"),
    );
  }

  #shutDown(reason: Error): void {
    if (this.#closed !== null) return;
    this.#closed = reason;
    this.#worker.terminate();
    for (const waiting of this.#pending.values()) waiting.reject(reason);
    this.#pending.clear();
  }

  #call(request: Request): Promise<unknown> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...request, id });
    });
  }

  // Machine-independent on purpose: the text lands in events whose digests a
  // recording may quote, so it names no absolute path and no present variables.
  #confinement(test: TestSetup): string {
    const program = test.program.split("/").at(-1) ?? test.program;
    return `Deno confined the executor's worker: read and write only inside the workspace, run only ${
      JSON.stringify(program)
    }, no net, env, sys, ffi or import access, symlinks leading outside refused. The test process is not confined by Deno: it ran as an ordinary subprocess with the user's privileges (working directory the workspace, environment cleared except ${
      KEPT_ENV.join(", ")
    } where set, stdin closed, killed after ${test.timeoutMs} ms; processes it starts itself are not killed)`;
  }
}

async function realWorkspace(workspace: string): Promise<string> {
  let real: string;
  try {
    real = await Deno.realPath(workspace);
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) {
      throw new ConfinementUnavailableError(
        "confinement_unavailable",
        `Cannot confine the executor: the process may not read the workspace ${workspace}`,
        { cause: error },
      );
    }
    throw new ExecutorError(
      "workspace_unavailable",
      `Cannot use the workspace ${workspace}: ${describe(error)}`,
      { cause: error },
    );
  }
  if (!(await Deno.stat(real)).isDirectory) {
    throw new ExecutorError(
      "workspace_unavailable",
      `Cannot use the workspace ${workspace}: it is not a directory`,
    );
  }
  return real;
}

function testSetup(
  workspace: string,
  options: WorkspaceExecutorOptions,
): TestSetup | null {
  const command = options.testCommand;
  if (command === undefined) return null;
  const [program, ...args] = command;
  if (program === undefined || program === "") {
    throw new TypeError("Cannot configure tests: the test command is empty");
  }
  const timeoutMs = options.testTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(
      `Cannot configure tests: the timeout ${timeoutMs} ms is not a positive number`,
    );
  }
  const env: Record<string, string> = {};
  for (const variable of KEPT_ENV) {
    try {
      if (
        Deno.permissions.querySync({ name: "env", variable }).state !==
          "granted"
      ) {
        continue;
      }
      const value = Deno.env.get(variable);
      if (value !== undefined) env[variable] = value;
    } catch {
      // Not readable: left out.
    }
  }
  Object.assign(env, options.testEnv ?? {});
  return {
    program: program.includes("/") && !program.startsWith("/")
      ? `${workspace}/${program}`
      : program,
    args,
    timeoutMs,
    env,
  };
}

/** Permission states that differ from what the executor asked for. */
function overreach(
  states: Readonly<Record<string, string>>,
  testConfigured: boolean,
): string[] {
  const excess: string[] = [];
  for (const name of ["read", "write", "run", "net", "env", "sys", "ffi"]) {
    if (states[name] === "granted") excess.push(`${name} everywhere`);
  }
  for (const name of ["read:workspace", "write:workspace"]) {
    if (states[name] !== "granted") excess.push(`${name} missing`);
  }
  if (testConfigured && states["run:test"] !== "granted") {
    excess.push("run:test missing");
  }
  return excess;
}

function describe(error: unknown): string {
  return error instanceof Error
    ? `${error.name}: ${error.message}`
    : String(error);
}
