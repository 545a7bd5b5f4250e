/**
 * The error {@linkcode WorkspaceExecutor.start} throws instead of running
 * effects without Deno's permission-scoped worker.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * Deno cannot run the executor's worker with scoped permissions: the
 * `--unstable-worker-options` flag is missing, or the process itself lacks
 * a permission the worker would need (read/write of the workspace, run of
 * the test program). Loom never falls back to running effects unconfined.
 *
 * @example
 * ```ts
 * import { ConfinementUnavailableError } from "./confinement_unavailable.ts";
 * import assert from "node:assert/strict";
 * const error = new ConfinementUnavailableError("confinement_unavailable", "Worker permissions need --unstable-worker-options");
 * assert.equal(error.code, "confinement_unavailable");
 * assert.ok(error instanceof Error);
 * ```
 */
export class ConfinementUnavailableError
  extends LoomError.Error<"ConfinementUnavailableError"> {}
