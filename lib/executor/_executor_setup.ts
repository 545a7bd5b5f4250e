/**
 * What `WorkspaceExecutor.start` checks before any effect: the
 * workspace's real path, whether bubblewrap works here, the test command's
 * plan, and that the worker got exactly the permissions asked for.
 *
 * @module
 */
import { ConfinementUnavailableError } from "./confinement_unavailable.ts";
import { ExecutorError } from "./executor_error.ts";
import { usableBwrap } from "./bubblewrap.ts";
import { PlanRefused, planTest, type TestPlan } from "./_test_plan.ts";
import type { WorkspaceExecutorOptions } from "./workspace_answers.ts";

const DEFAULT_TIMEOUT_MS = 120_000;

/** Survey helpers: one per core beside the worker's own, at most three. */
export function spareCores(): number {
  return Math.max(0, Math.min(3, (navigator.hardwareConcurrency ?? 1) - 1));
}

/** The workspace's real path; refuses one that is not a readable directory. */
export async function realWorkspace(workspace: string): Promise<string> {
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

/** The test command's plan (confinement and all), or `null` without one. */
export async function testPlan(
  workspace: string,
  options: WorkspaceExecutorOptions,
): Promise<TestPlan | null> {
  const command = options.testCommand;
  if (command === undefined) return null;
  const [program] = command;
  if (program === undefined || program === "") {
    throw new TypeError("Cannot configure tests: the test command is empty");
  }
  const timeoutMs = options.testTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(
      `Cannot configure tests: the timeout ${timeoutMs} ms is not a positive number`,
    );
  }
  const unconfined = options.unconfinedTests === true;
  const bwrap = unconfined ? null : await usableBwrap(options.sandbox);
  try {
    return planTest({
      workspace,
      command,
      timeoutMs,
      env: { ...(options.testEnv ?? {}) },
      network: options.testNetwork === true,
      unconfined,
      bwrap,
    });
  } catch (error) {
    if (error instanceof PlanRefused) {
      throw new ConfinementUnavailableError(
        "confinement_unavailable",
        error.message,
      );
    }
    throw error;
  }
}

/** Permission states that differ from what the executor asked for. */
export function overreach(states: Readonly<Record<string, string>>): string[] {
  const excess: string[] = [];
  for (const name of ["read", "write", "run", "net", "env", "sys", "ffi"]) {
    if (states[name] === "granted") excess.push(`${name} everywhere`);
  }
  for (const name of ["read:workspace", "write:workspace"]) {
    if (states[name] !== "granted") excess.push(`${name} missing`);
  }
  return excess;
}

/** An error in a sentence. */
export function describe(error: unknown): string {
  return error instanceof Error
    ? `${error.name}: ${error.message}`
    : String(error);
}
