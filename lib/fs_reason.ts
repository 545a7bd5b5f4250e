/**
 * Words for a failed file-system call, without the OS error's syscall and
 * path noise, so a message can say which file and what Loom was doing.
 *
 * @module
 */

/**
 * Says in words why a file-system call failed (`No such file or directory
 * (os error 2): readfile '/x'` becomes `it does not exist`).
 *
 * @param error What the call threw.
 * @returns A short reason such as `it does not exist`.
 *
 * @example
 * ```ts
 * import { fsReason } from "./fs_reason.ts";
 * import assert from "node:assert/strict";
 * try {
 *   Deno.readTextFileSync("/no/such/file");
 * } catch (error) {
 *   assert.equal(fsReason(error), "it does not exist");
 * }
 * ```
 */
export function fsReason(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "it does not exist";
  if (error instanceof Deno.errors.PermissionDenied) {
    return "permission denied";
  }
  if (error instanceof Deno.errors.NotCapable) {
    return "Deno's permissions do not allow it";
  }
  if (error instanceof Deno.errors.IsADirectory) return "it is a directory";
  if (error instanceof Deno.errors.NotADirectory) {
    return "a part of the path is a file, not a directory";
  }
  if (error instanceof Deno.errors.AlreadyExists) return "it already exists";
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/ \(os error [0-9]+\).*$/s, "");
}
