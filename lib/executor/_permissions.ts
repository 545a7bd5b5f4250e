/**
 * The permissions of the executor's worker, in one place so tests can
 * create a worker with exactly the same scope.
 *
 * @module
 */

/**
 * Read and write of the workspace, run of the test program only (or
 * nothing), no net, env, sys, ffi or import.
 */
export function workerPermissions(
  workspace: string,
  program: string | null,
): Deno.PermissionOptionsObject {
  return {
    read: [workspace],
    write: [workspace],
    run: program === null ? false : [program],
    net: false,
    env: false,
    sys: false,
    ffi: false,
    import: false,
  };
}
