/**
 * The permissions of the executor's worker, in one place so tests can
 * create a worker with exactly the same scope.
 *
 * @module
 */

/**
 * Read and write of the workspace only; no run, net, env, sys, ffi or
 * import. The test process is spawned by the executor itself, confined by
 * bubblewrap or Deno's flags (see `_test_plan.ts`).
 */
export function workerPermissions(
  workspace: string,
): Deno.PermissionOptionsObject {
  return {
    read: [workspace],
    write: [workspace],
    run: false,
    net: false,
    env: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/**
 * A survey helper's permissions: reading the workspace, nothing else (no
 * write either). It answers only the worker it helps.
 */
export function helperPermissions(
  workspace: string,
): Deno.PermissionOptionsObject {
  return { ...workerPermissions(workspace), write: false };
}
