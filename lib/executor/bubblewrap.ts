/**
 * Bubblewrap for every Loom sandbox: finding a `bwrap` that works here, and
 * the isolation every sandbox starts from — new user, PID, IPC, UTS, cgroup
 * and network namespaces, no capabilities, its own session, and death with
 * its parent. What a sandbox mounts is its owner's choice: the executor's
 * in `_sandbox.ts`, `run_code`'s in `lib/code/`.
 *
 * @module
 */
import { bwrapWorks } from "./_sandbox.ts";
import { locateProgram } from "./_test_plan.ts";

export { ISOLATION_ARGS } from "./_sandbox.ts";

/**
 * The bubblewrap program when it can build a sandbox here, else `null`.
 *
 * @param sandbox The program (`bwrap` on the user's `PATH` by default, or a
 *   path); `null` acts as if there were none.
 * @returns Its real path, or `null`: not Linux, not found, or it cannot
 *   create namespaces here (as in some containers).
 *
 * @example
 * ```ts
 * import { usableBwrap } from "./bubblewrap.ts";
 * import assert from "node:assert/strict";
 * assert.equal(await usableBwrap(null), null);
 * assert.equal(await usableBwrap("/nonexistent/bwrap"), null);
 * ```
 */
export async function usableBwrap(
  sandbox: string | null = "bwrap",
): Promise<string | null> {
  if (sandbox === null || Deno.build.os !== "linux" || Deno.build.standalone) {
    return null;
  }
  // Resolved on the user's PATH: the sandbox's own PATH is not the user's.
  const program = locateProgram(".", sandbox);
  if (program === null) return null;
  return (await bwrapWorks(program)) ? program : null;
}
