/**
 * Runs model-written code, one fresh confined Deno process per run: the
 * code is the body of an async function whose `tools.<server>.<tool>`
 * calls go through the face's {@linkcode CodeBridge}. The next run's
 * process is started ahead, idle until it gets its code (a run never
 * shares a process with another), so a run does not wait for Deno to boot. At most four runs
 * execute at once (more wait in order); each has a deadline, a heap limit,
 * a number of calls, at most 16 requests in flight and 1 MiB of logs.
 * Without a working bubblewrap {@linkcode CodeRunner.start} refuses
 * (`confinement_unavailable`) unless asked to run unconfined.
 *
 * @module
 */
import { ConfinementUnavailableError } from "../executor/confinement_unavailable.ts";
import { usableBwrap } from "../executor/bubblewrap.ts";
import type { CodeName } from "./code_names.ts";
import {
  type CodeBridge,
  type CodeOutcome,
  discardSandbox,
  executeRun,
  type RunLimits,
  type Sandbox,
  spawnSandbox,
} from "./_bridge.ts";
import { type Confinement, type ProcessPlan, processPlan } from "./_process.ts";
import { runtimeSource } from "./_runtime.ts";
import { tracedBridge } from "./_traced_bridge.ts";
import { CodeError } from "./code_error.ts";
import { type CodeRunEnd, CodeRunSpan } from "../telemetry/code.ts";
import { messageOf } from "../errors.ts";

export type { CodeBridge, CodeOutcome };

/** Options of {@linkcode CodeRunner.start}. */
export interface CodeRunnerOptions {
  /**
   * Run without bubblewrap, confined by Deno's permission flags alone
   * (`--code-unconfined`). Default `false`.
   */
  readonly unconfined?: boolean;
  /** The bubblewrap program (default `bwrap` on `PATH`); `null` as if none. */
  readonly sandbox?: string | null;
  /** V8 heap limit of a run in MiB (`--code-memory`, default 256). */
  readonly memoryMiB?: number;
  /** The longest deadline a run may ask for (`--code-timeout`, default 120 s). */
  readonly maxTimeoutMs?: number;
  /** A run's deadline when it asks for none (default 30 s). */
  readonly defaultTimeoutMs?: number;
  /** Tool calls a run may make (`--code-max-calls`, default 500). */
  readonly maxCalls?: number;
  /** Runs executing at once (default 4); more wait in order. */
  readonly maxRuns?: number;
}

/** Options of {@linkcode CodeRunner.run}. */
export interface RunOptions {
  /** The tools the code may call, with their code names. */
  readonly tools: readonly CodeName[];
  /** Calls, reads and stores. */
  readonly bridge: CodeBridge;
  /** The run's deadline in ms (at most the runner's maximum). */
  readonly timeoutMs?: number;
  /**
   * What a call resolves to in the code: `mcp` (default) the tool's MCP
   * `CallToolResult`, `isError` thrown as a `ToolError`; `value` the
   * tool's own output (the AI SDK's tools).
   */
  readonly results?: "mcp" | "value";
  /** Cancels the run (or its wait for a turn). */
  readonly signal?: AbortSignal;
}

/** The limits every run of a runner has. */
export interface CodeLimits {
  /** V8 heap limit in MiB. */
  readonly memoryMiB: number;
  /** Default deadline in ms. */
  readonly defaultTimeoutMs: number;
  /** Longest deadline in ms. */
  readonly maxTimeoutMs: number;
  /** Tool calls per run. */
  readonly maxCalls: number;
  /** Requests in flight at once. */
  readonly maxInFlight: number;
  /** Bytes of logs per run. */
  readonly maxLogBytes: number;
  /** Runs at once. */
  readonly maxRuns: number;
}

const MIB = 1024 * 1024;
/** The largest argument, value or log line a frame carries. */
const MAX_BODY_BYTES = 64 * MIB;

/**
 * Runs code in fresh sandboxed processes (see the module doc).
 *
 * @example
 * ```ts
 * import { CodeRunner } from "./code_runner.ts";
 * import assert from "node:assert/strict";
 * await using runner = await CodeRunner.start({ unconfined: true });
 * const outcome = await runner.run("console.log('hi'); return 6 * 7;", {
 *   tools: [],
 *   bridge: {
 *     callTool: () => Promise.reject(new Error("no tools")),
 *     read: () => Promise.reject(new Error("no store")),
 *     store: () => Promise.reject(new Error("no store")),
 *   },
 * });
 * assert.equal(outcome.result, 42);
 * assert.deepEqual(outcome.logs, ["hi"]);
 * ```
 */
export class CodeRunner implements AsyncDisposable {
  readonly #confinement: Confinement;
  readonly #plan: ProcessPlan;
  readonly #folder: string;
  readonly #limits: CodeLimits;
  readonly #closing = new AbortController();
  readonly #waiting: (() => void)[] = [];
  readonly #active = new Set<Promise<unknown>>();
  #running = 0;
  /** The next run's process, started ahead (none once closed). */
  #spare: Sandbox | undefined;

  private constructor(
    confinement: Confinement,
    plan: ProcessPlan,
    folder: string,
    limits: CodeLimits,
  ) {
    this.#confinement = confinement;
    this.#plan = plan;
    this.#folder = folder;
    this.#limits = limits;
    this.#spare = spawnSandbox(plan);
  }

  /** A fresh process for a run: the spare when it is alive, and a new spare. */
  #sandbox(): Sandbox {
    const spare = this.#spare;
    this.#spare = this.#closing.signal.aborted
      ? undefined
      : spawnSandbox(this.#plan);
    if (spare !== undefined && !spare.exited()) return spare;
    if (spare !== undefined) discardSandbox(spare);
    return spawnSandbox(this.#plan);
  }

  /**
   * Prepares a runner: finds bubblewrap (unless unconfined) and starts one
   * sandbox to check that Deno runs in it.
   *
   * @param options Confinement and limits.
   * @returns The runner; close it (or `await using` it) when done.
   * @throws {ConfinementUnavailableError} `confinement_unavailable`: no
   *   working bubblewrap, or Deno does not start inside it.
   * @throws {RangeError} A limit that is not a positive integer.
   */
  static async start(options: CodeRunnerOptions = {}): Promise<CodeRunner> {
    let confinement: Confinement = { kind: "unconfined" };
    if (options.unconfined !== true) {
      const bwrap = await usableBwrap(options.sandbox);
      if (bwrap === null) {
        throw new ConfinementUnavailableError(
          "confinement_unavailable",
          "run_code needs bubblewrap (bwrap) to confine the code it runs, and none works here: install bubblewrap (apt-get install bubblewrap), or accept code confined by Deno's permission flags alone with --code-unconfined",
        );
      }
      confinement = { kind: "bwrap", bwrap };
    }
    return await CodeRunner.#start(confinement, options);
  }

  /** A runner with the given confinement. */
  static async #start(
    confinement: Confinement,
    options: CodeRunnerOptions,
  ): Promise<CodeRunner> {
    const limits: CodeLimits = {
      memoryMiB: positive(options.memoryMiB ?? 256, "memoryMiB"),
      defaultTimeoutMs: positive(
        Math.min(
          options.defaultTimeoutMs ?? 30_000,
          options.maxTimeoutMs ?? 120_000,
        ),
        "defaultTimeoutMs",
      ),
      maxTimeoutMs: positive(options.maxTimeoutMs ?? 120_000, "maxTimeoutMs"),
      maxCalls: positive(options.maxCalls ?? 500, "maxCalls"),
      maxInFlight: 16,
      maxLogBytes: MIB,
      maxRuns: positive(options.maxRuns ?? 4, "maxRuns"),
    };
    const folder = await Deno.makeTempDir({ prefix: "loom-code-" });
    try {
      const runtime = `${folder}/runtime.js`;
      await Deno.writeTextFile(
        runtime,
        runtimeSource({
          maxInFlight: limits.maxInFlight,
          maxBodyBytes: MAX_BODY_BYTES,
        }),
      );
      const denoDir = `${folder}/deno`;
      await Deno.mkdir(denoDir);
      const input = { runtime, denoDir, memoryMiB: limits.memoryMiB };
      const plan = await processPlan(confinement, input);
      // A first run, of Loom's own code, checks that the sandbox works.
      await warmUp(plan, limits);
      return new CodeRunner(confinement, plan, folder, limits);
    } catch (error) {
      await Deno.remove(folder, { recursive: true }).catch(() => {});
      throw error;
    }
  }

  /** Whether runs are confined by bubblewrap (`false` with `unconfined`). */
  get confined(): boolean {
    return this.#confinement.kind === "bwrap";
  }

  /**
   * How runs are confined, in the words answers and spans use:
   * `bubblewrap`, `deno-flags-only` (`unconfined`), or `none` (the attack
   * tests' unprotected runner).
   */
  get confinement(): "bubblewrap" | "deno-flags-only" | "none" {
    const kind = this.#confinement.kind;
    return kind === "bwrap"
      ? "bubblewrap"
      : kind === "unconfined"
      ? "deno-flags-only"
      : "none";
  }

  /** The limits of every run. */
  get limits(): CodeLimits {
    return this.#limits;
  }

  /**
   * Runs `code` (the body of an async function, TypeScript or JavaScript)
   * when a turn is free.
   *
   * @param code The code.
   * @param options Its tools, bridge, deadline and cancellation.
   * @returns The returned value (JSON), the logs, the calls, the time.
   * @throws {CodeError} `code_timeout`, `code_memory`, `code_calls`,
   *   `code_output` or `code_error`, with the logs so far.
   * @throws The signal's reason when cancelled.
   */
  async run(code: string, options: RunOptions): Promise<CodeOutcome> {
    const signal = options.signal === undefined
      ? this.#closing.signal
      : AbortSignal.any([options.signal, this.#closing.signal]);
    // The run's span: its calls are its children (telemetry/code.ts).
    const span = CodeRunSpan.start(this.confinement);
    try {
      await this.#turn(signal);
    } catch (error) {
      span.end(failureOf(error));
      throw error;
    }
    const requested = options.timeoutMs ?? this.#limits.defaultTimeoutMs;
    const limits: RunLimits = {
      timeoutMs: Math.max(1, Math.min(requested, this.#limits.maxTimeoutMs)),
      maxCalls: this.#limits.maxCalls,
      maxInFlight: this.#limits.maxInFlight,
      maxLogBytes: this.#limits.maxLogBytes,
      maxBodyBytes: MAX_BODY_BYTES,
    };
    span.began(limits.timeoutMs);
    try {
      signal.throwIfAborted();
      const running = executeRun({
        sandbox: this.#sandbox(),
        results: options.results ?? "mcp",
        code,
        tools: options.tools,
        bridge: span.recording
          ? tracedBridge(options.bridge, span)
          : options.bridge,
        limits,
        signal,
      });
      this.#active.add(running);
      try {
        const outcome = await running;
        span.end(outcome);
        return outcome;
      } finally {
        this.#active.delete(running);
      }
    } catch (error) {
      span.end(failureOf(error));
      throw error;
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  /** Waits for one of the runner's turns, in order of arrival. */
  async #turn(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#running < this.#limits.maxRuns) {
      this.#running++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal.removeEventListener("abort", cancel);
        this.#running++;
        resolve();
      };
      const cancel = () => {
        const at = this.#waiting.indexOf(go);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal.reason);
      };
      this.#waiting.push(go);
      signal.addEventListener("abort", cancel, { once: true });
    });
  }

  /** Stops every run (their processes are killed) and removes the runtime. */
  async close(): Promise<void> {
    this.#closing.abort(
      new DOMException("The code runner closed", "AbortError"),
    );
    const spare = this.#spare;
    this.#spare = undefined;
    await Promise.allSettled([
      ...this.#active,
      ...(spare === undefined ? [] : [discardSandbox(spare)]),
    ]);
    await Deno.remove(this.#folder, { recursive: true }).catch(() => {});
  }

  /** Same as {@linkcode CodeRunner.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * TEST ONLY: a runner without the protections — every Deno permission
   * and the remote and npm registries; inside bubblewrap (with the usual
   * empty environment) when `bwrap` names it, else with this process's
   * whole environment. The attack tests run each attack
   * here too and expect it to succeed: an attack test that an unprotected
   * runner passes could never fail. No face offers it.
   *
   * @param options Limits, and the bubblewrap program or `null`.
   * @returns The runner.
   */
  static unprotected(
    options: CodeRunnerOptions & { readonly bwrap: string | null },
  ): Promise<CodeRunner> {
    return CodeRunner.#start(
      { kind: "unprotected", bwrap: options.bwrap },
      options,
    );
  }
}

/** How a run that threw ends its span: its code, or why it stopped. */
function failureOf(error: unknown): CodeRunEnd {
  if (error instanceof CodeError) {
    return {
      error: error.code,
      message: error.message,
      // A code_error quotes the code's own exception (or names the frame
      // the run broke the protocol with): content, as the code is.
      messageIsContent: error.code === "code_error",
      calls: error.calls,
      ms: error.ms,
    };
  }
  const aborted = (error as { name?: unknown } | null)?.name === "AbortError";
  return { error: aborted ? "cancelled" : "_OTHER" };
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, not ${value}`);
  }
  return value;
}

/**
 * Runs Loom's own `return 1` in the sandbox; a failure is
 * `confinement_unavailable`, with what went wrong.
 */
async function warmUp(plan: ProcessPlan, limits: CodeLimits): Promise<void> {
  const refused = () => Promise.reject(new Error("No tools"));
  try {
    const outcome = await executeRun({
      sandbox: spawnSandbox(plan),
      results: "mcp",
      code: "const ready: number = 1;\nreturn ready;",
      tools: [],
      bridge: { callTool: refused, read: refused, store: refused },
      limits: {
        timeoutMs: 60_000,
        maxCalls: 0,
        maxInFlight: limits.maxInFlight,
        maxLogBytes: limits.maxLogBytes,
        maxBodyBytes: MAX_BODY_BYTES,
      },
    });
    if (outcome.result === 1) return;
  } catch (error) {
    throw new ConfinementUnavailableError(
      "confinement_unavailable",
      `Deno does not run in run_code's sandbox: ${
        messageOf(error).slice(0, 500)
      }`,
    );
  }
  throw new ConfinementUnavailableError(
    "confinement_unavailable",
    "Deno does not run in run_code's sandbox: its first run answered wrongly",
  );
}
