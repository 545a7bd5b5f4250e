/**
 * The workspace executor: file effects of a slice (reading files, writing
 * them, surveying the tree) happen inside a Deno Worker whose permissions
 * allow reading and writing the workspace and nothing else; the test
 * command runs inside bubblewrap, or under Deno's own permission flags, or
 * (only when asked) unconfined. Commission's own path checks come first.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { ConfinementUnavailableError } from "./confinement_unavailable.ts";
import { ExecutorError } from "./executor_error.ts";
import type {
  InitReply,
  InspectEntry,
  Request,
  SurveyReply,
} from "./_protocol.ts";
import { decodeTail } from "./_tail.ts";
import {
  type Channel,
  type ChannelEvents,
  sandboxChannel,
  workerChannel,
} from "./_channel.ts";
import type { TestConfinement, TestPlan } from "./_test_plan.ts";
import type { ProtectedPaths } from "./protected_paths.ts";
import { runTestProcess } from "./_test_process.ts";
import { Watchdog } from "./_watchdog.ts";
import { workerOptionsState } from "./_worker_options.ts";
import {
  describe,
  overreach,
  realWorkspace,
  spareCores,
  testPlan,
} from "./_executor_setup.ts";
import { usableBwrap } from "./bubblewrap.ts";
import {
  type EditedFileDigest,
  type InspectedFileText,
  inspectedText,
  TEST_OUTPUT_TAIL_BYTES,
  type TestRunOutcome,
  type WorkspaceExecutorOptions,
  type WorkspaceSurvey,
} from "./workspace_answers.ts";

export {
  type EditedFileDigest,
  type InspectedFileText,
  TEST_OUTPUT_TAIL_BYTES,
  type TestRunOutcome,
  type WorkspaceExecutorOptions,
  type WorkspaceSurvey,
};

const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;
const DIGEST_FILE_BYTES = 64 * 1024 * 1024;
const DRAIN_MS = 1_000;
const SHARED_FROM = 4096;

/**
 * Runs a slice's effects: file effects in a permission-scoped Deno Worker,
 * the test command confined by bubblewrap or by Deno's own flags.
 *
 * The worker may read and write only the workspace's real path and has no
 * run, net, env, sys, ffi or import access. Deno checks permissions on
 * paths as written and does not follow symlinks, so the worker also refuses
 * real paths outside the workspace and files with more than one hard link.
 *
 * The test command runs inside bubblewrap when a working `bwrap` exists;
 * without it a `deno run`/`deno test` command runs under Deno's permission
 * flags scoped to the workspace; any other command makes
 * {@linkcode WorkspaceExecutor.start} throw {@linkcode ConfinementUnavailableError}
 * unless `unconfinedTests` is set. Needs `--unstable-worker-options`.
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
 *   assert.equal(outside?.code, "outside_workspace");
 * } finally {
 *   executor.close();
 *   await Deno.remove(workspace, { recursive: true });
 * }
 * ```
 */
export class WorkspaceExecutor {
  #channel: Channel | null = null;
  readonly #workspace: string;
  readonly #test: TestPlan | null;
  readonly #protect: ProtectedPaths | null;
  readonly #pending = new Map<number, Pending>();
  readonly #watchdog = new Watchdog(SILENCE_MS, (op) =>
    this.#shutDown(
      new ExecutorError(
        "worker_failed",
        `The executor's worker sent nothing for ${
          SILENCE_MS / 1000
        } s while serving ${op}, so it was stopped; the workspace may hold a file that cannot be read without waiting`,
      ),
    ));
  #nextId = 1;
  #closed: Error | null = null;
  #sandboxed = false;
  /**
   * The last survey, while nothing the executor ran or wrote can have
   * changed the tree since: an edit forgets it, a test run replaces it.
   */
  #current: WorkspaceSurvey | null = null;

  private constructor(
    workspace: string,
    test: TestPlan | null,
    protect: ProtectedPaths | null,
  ) {
    this.#workspace = workspace;
    this.#test = test;
    this.#protect = protect;
  }

  #events(): ChannelEvents {
    return {
      reply: (reply) => {
        const waiting = this.#pending.get(reply.id);
        if (waiting === undefined) return;
        this.#watch();
        if ("part" in reply) {
          // Decoded as it arrives: the worker reads the next file meanwhile.
          waiting.parts.push(waiting.onPart(reply.part));
          return;
        }
        // A request for helpers is the channel's, which answers it.
        if ("alive" in reply || "spawn" in reply) return;
        this.#pending.delete(reply.id);
        this.#watch();
        if (reply.ok) {
          waiting.resolve({ value: reply.value, parts: waiting.parts });
        } else {
          const error = new Error(reply.error.message);
          error.name = reply.error.name;
          waiting.reject(error);
        }
      },
      failure: (message) =>
        this.#shutDown(new ExecutorError("worker_failed", message)),
    };
  }

  /**
   * Decides how the tests are confined, starts the worker with permissions
   * scoped to the workspace and checks, from inside it, that Deno granted
   * no more than that.
   *
   * @param options The workspace, the optional test command and its confinement.
   * @returns A running executor; call {@linkcode WorkspaceExecutor.close}.
   * @throws {ConfinementUnavailableError} When Deno runs without
   *   `--unstable-worker-options`, the process lacks a permission the worker
   *   needs, the worker holds more permissions than asked for, or neither
   *   bubblewrap nor Deno can confine the test command.
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
   * await assert.rejects(
   *   WorkspaceExecutor.start({ workspace, testCommand: ["node", "check.mjs"], sandbox: null }),
   *   { code: "confinement_unavailable" },
   * );
   * await Deno.remove(workspace);
   * ```
   */
  static async start(
    options: WorkspaceExecutorOptions,
  ): Promise<WorkspaceExecutor> {
    const workspace = await realWorkspace(options.workspace);
    if ((await workerOptionsState()) === "disabled") {
      throw new ConfinementUnavailableError(
        "confinement_unavailable",
        "Cannot confine the executor: Deno runs without --unstable-worker-options, which scoping a worker's permissions needs; run again with that flag",
      );
    }
    const test = await testPlan(workspace, options);
    const executor = new WorkspaceExecutor(
      workspace,
      test,
      options.protect ?? null,
    );
    const bwrap = await usableBwrap(options.sandbox);
    if (bwrap !== null) {
      executor.#channel = await sandboxChannel(
        bwrap,
        workspace,
        executor.#events(),
      );
      executor.#sandboxed = true;
    } else {
      try {
        executor.#channel = workerChannel(workspace, executor.#events());
      } catch (error) {
        throw new ConfinementUnavailableError(
          "confinement_unavailable",
          `Cannot confine the executor: Deno refused the worker's permissions (${
            describe(error)
          }); the process needs read and write access to ${workspace}`,
          { cause: error },
        );
      }
    }
    let reply: InitReply;
    try {
      const answer = await executor.#call({
        op: "init",
        id: 0,
        workspace,
        maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
        digestFileBytes: DIGEST_FILE_BYTES,
        surveyHelpers: options.surveyHelpers ?? spareCores(),
        surveySharedFrom: options.surveySharedFrom ?? SHARED_FROM,
      });
      reply = answer.value as InitReply;
    } catch (error) {
      executor.close();
      throw new ConfinementUnavailableError(
        "confinement_unavailable",
        `Cannot confine the executor: its worker did not start (${
          describe(error)
        })`,
        { cause: error },
      );
    }
    const excess = overreach(reply.permissions);
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
   * Whether the worker runs inside bubblewrap (a Deno subprocess that sees
   * only the workspace and the system directories) rather than in this
   * process.
   */
  get sandboxed(): boolean {
    return this.#sandboxed;
  }

  /** How the tests are confined, or `null` without a test command. */
  get testConfinement(): TestConfinement | null {
    return this.#test?.confinement ?? null;
  }

  /**
   * Reads files as UTF-8 text, at most the size limit plus one byte from
   * each opened file. Each path resolves against the workspace; a file that
   * is missing, binary, not valid UTF-8, too large, a directory, hard-linked,
   * or outside the workspace gets a `code` and an `error` (naming
   * workspace-relative paths only) instead of `text`. A FIFO, a socket or a
   * device node is refused as `not_regular_file` from its metadata, without
   * being opened; the other files are read as usual. Each file crosses from
   * the worker as its own message of raw bytes.
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
   * const executor = await WorkspaceExecutor.start({ workspace, maxFileBytes: 4 });
   * const [a, b] = await executor.inspect(["a.txt", "b.txt"]);
   * assert.equal(a?.code, "too_large");
   * assert.equal(b?.missing, true);
   * executor.close();
   * await Deno.remove(workspace, { recursive: true });
   * ```
   */
  async inspect(paths: readonly string[]): Promise<InspectedFileText[]> {
    const { parts } = await this.#call(
      { op: "inspect", id: 0, paths: [...paths] },
      (part) => inspectedText(part as InspectEntry),
    );
    return parts as InspectedFileText[];
  }

  /**
   * Writes whole files atomically: every file goes to a temporary file in
   * its target directory first (exclusive create, unpredictable name); then
   * each old file is renamed aside to an unpredictable name and the new one
   * renamed into place. When any step fails, the old files are renamed
   * back and each restore is verified; nothing is copied and no symlink is
   * followed.
   *
   * @param files Workspace-relative paths (commissioned) and their text.
   * @returns Size and SHA-256 of each file written, in order.
   * @throws {ExecutorError} `edit_failed`, `hard_link`, `symlink_escape` or
   *   `not_a_file` (nothing changed, verified), `rollback_failed` (the
   *   workspace may be changed: the message lists the files), or
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
    // Whatever the outcome, the tree may differ from the last survey.
    this.#current = null;
    const encoder = new TextEncoder();
    const encoded = files.map((f) => ({
      path: f.path,
      contents: encoder.encode(f.contents),
    }));
    const digests = encoded.map((f) => ({
      path: f.path,
      utf8_bytes: f.contents.length,
      sha256: createHash("sha256").update(f.contents).digest("hex"),
    }));
    try {
      await this.#call({ op: "edit", id: 0, files: encoded });
    } catch (error) {
      if (error instanceof ExecutorError) throw error;
      const name = (error as Error).name;
      if (name === "rollback_failed") {
        throw new ExecutorError(
          "rollback_failed",
          `Cannot write the edit, and the workspace may be changed: ${
            (error as Error).message
          }`,
          { cause: error },
        );
      }
      throw new ExecutorError(
        EDIT_CODES.has(name) ? name as ExecutorError["code"] : "edit_failed",
        `Cannot write the edit, so nothing changed: ${
          (error as Error).message
        }`,
        { cause: error },
      );
    }
    return { files: digests };
  }

  /**
   * Walks the workspace (not following symlinks, `.git` aside): a digest of
   * the whole tree, symlinks that lead outside, and files that share their
   * inode with a file outside.
   *
   * @returns The survey.
   * @throws {ExecutorError} `executor_closed`, `worker_failed`, or
   *   `edit_failed` when the tree cannot be read.
   *
   * @example
   * ```ts
   * import { WorkspaceExecutor } from "./workspace_executor.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * const executor = await WorkspaceExecutor.start({ workspace });
   * const before = await executor.survey();
   * await executor.edit([{ path: "a.txt", contents: "a" }]);
   * assert.notEqual((await executor.survey()).digest, before.digest);
   * executor.close();
   * await Deno.remove(workspace, { recursive: true });
   * ```
   */
  async survey(): Promise<WorkspaceSurvey> {
    const { value } = await this.#call({ op: "survey", id: 0 });
    const reply = value as SurveyReply;
    const survey = {
      digest: reply.digest,
      escapes: [...reply.escapes],
      externalLinks: [...reply.externalLinks],
      hashedFiles: reply.hashed,
      helpers: reply.helpers,
    };
    this.#current = survey;
    return {
      ...survey,
      escapes: [...survey.escapes],
      externalLinks: [...survey.externalLinks],
    };
  }

  /**
   * Runs the configured test command in the workspace under its
   * confinement, kills it (and with bubblewrap every process it started) at
   * the end or at the timeout, and keeps the tail of its combined output.
   * The tree is surveyed before (or the last survey reused, when nothing
   * the executor ran or wrote can have changed it since) and after: a test
   * that changes it shows in `tree_before !== tree_after`. A survey reads
   * again only the files whose stat changed (see
   * {@linkcode WorkspaceSurvey.hashedFiles}).
   *
   * @returns Exit code, timeout flag, output tail, the confinement note and
   *   the tree digests.
   * @throws {ExecutorError} `no_test_command`, `hard_link` (a file shares
   *   its inode with one outside: the test could read it),
   *   `tests_failed_to_start`, or `executor_closed`.
   *
   * @example
   * ```ts
   * import { WorkspaceExecutor } from "./workspace_executor.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * await Deno.writeTextFile(`${workspace}/check.ts`, "console.log('ok')");
   * const executor = await WorkspaceExecutor.start({
   *   workspace,
   *   testCommand: [Deno.execPath(), "run", "check.ts"],
   *   sandbox: null,
   * });
   * const run = await executor.runTests();
   * assert.equal(run.exit_code, 0);
   * assert.equal(run.output_tail, "ok\n");
   * assert.equal(run.confined_by, "deno");
   * assert.equal(run.tree_before, run.tree_after);
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
    // The survey after the previous run (or after the last edit) is the
    // tree as it still is, unless something outside the executor changed
    // it; then the survey after this run differs from it.
    const before = this.#current ?? await this.survey();
    this.#current = null;
    if (test.confinement !== "unconfined") {
      if (before.externalLinks.length > 0) {
        throw new ExecutorError(
          "hard_link",
          `Cannot run the tests: ${
            listed(before.externalLinks)
          } share their contents with files outside the workspace (hard links), which the test could read`,
        );
      }
    }
    const readOnly = this.#protect === null
      ? []
      : await this.#protect.existingFiles(this.#workspace);
    let result;
    try {
      result = await runTestProcess(
        test.spec(readOnly, before.escapes, DRAIN_MS, TEST_OUTPUT_TAIL_BYTES),
      );
    } catch (error) {
      throw new ExecutorError(
        "tests_failed_to_start",
        // The name only: the error's own message holds host paths.
        `Cannot run the test command ${
          JSON.stringify(test.program.split("/").at(-1))
        }: it could not be started (${
          error instanceof Error ? error.name : "error"
        })`,
        { cause: error },
      );
    }
    const after = await this.survey();
    return {
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      output_tail: decodeTail(result.tail, TEST_OUTPUT_TAIL_BYTES),
      output_bytes: result.outputBytes,
      confinement: test.note(readOnly.length),
      confined_by: test.confinement,
      tree_before: before.digest,
      tree_after: after.digest,
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
    this.#watchdog.stop();
    this.#channel?.close();
    for (const waiting of this.#pending.values()) waiting.reject(reason);
    this.#pending.clear();
  }

  /**
   * (Re)arms the watchdog while a request waits: a worker silent for
   * {@linkcode SILENCE_MS} (no part, no beat, no answer) is stopped, and the
   * request it served fails with `worker_failed` saying so, so no action
   * can hang the run.
   */
  #watch(): void {
    this.#watchdog.watch(this.#pending.values().next().value?.op);
  }

  #call(
    request: Request,
    onPart: (part: unknown) => unknown = (part) => part,
  ): Promise<Answer> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, {
        op: request.op,
        parts: [],
        onPart,
        resolve,
        reject,
      });
      if (this.#pending.size === 1) this.#watch();
      this.#channel?.post({ ...request, id });
    });
  }
}

const EDIT_CODES = new Set(["hard_link", "symlink_escape", "not_a_file"]);
/** How long a worker serving a request may stay silent. */
const SILENCE_MS = 60_000;

/** A request's final value and the parts that came before it. */
interface Answer {
  readonly value: unknown;
  readonly parts: readonly unknown[];
}

/** A request waiting for its answer. */
interface Pending {
  readonly op: string;
  readonly parts: unknown[];
  /** What a part becomes when it arrives. */
  readonly onPart: (part: unknown) => unknown;
  resolve(answer: Answer): void;
  reject(error: Error): void;
}

function listed(paths: readonly string[]): string {
  const shown = paths.slice(0, 5).map((p) => JSON.stringify(p)).join(", ");
  return paths.length > 5 ? `${shown} and ${paths.length - 5} more` : shown;
}
