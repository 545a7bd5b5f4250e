/**
 * The error {@linkcode WorkspaceExecutor.start} throws instead of running
 * effects without Deno's permission-scoped worker.
 *
 * @module
 */
import type { CodedError } from "../errors.ts";

/**
 * Deno cannot run the executor's worker with scoped permissions: the
 * `--unstable-worker-options` flag is missing, or the process itself lacks
 * a permission the worker would need (read/write of the workspace, run of
 * the test program). Loom never falls back to running effects unconfined.
 *
 * @example
 * ```ts
 * import { ConfinementUnavailable } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const error = new ConfinementUnavailable("Worker permissions need --unstable-worker-options");
 * assert.equal(error.code, "confinement_unavailable");
 * assert.ok(error instanceof Error);
 * ```
 */
export class ConfinementUnavailable extends Error implements CodedError {
  /** Always `confinement_unavailable`. */
  readonly code: "confinement_unavailable" = "confinement_unavailable";

  /**
   * Makes the error.
   *
   * @param message What is missing and why it matters.
   * @param options The underlying error, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfinementUnavailable";
  }
}
