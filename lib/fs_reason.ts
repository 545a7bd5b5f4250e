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

/**
 * Reads a file; when the read fails, throws the error `fail` makes of
 * `Cannot read WHAT: <reason>` (the reason in words, as
 * {@linkcode fsReason} says it), with the failure as its cause.
 *
 * @param what What the file is, with its path: `the servers file /x.json`.
 * @param read The read.
 * @param fail Makes the caller's typed error of the message.
 * @returns What the read returned.
 *
 * @example
 * ```ts
 * import { readingFile } from "./fs_reason.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   readingFile("the report /no/such.json", () => Deno.readTextFile("/no/such.json"),
 *     (message, cause) => new TypeError(message, { cause })),
 *   /^TypeError: Cannot read the report \/no\/such.json: it does not exist$/,
 * );
 * ```
 */
export async function readingFile<T>(
  what: string,
  read: () => Promise<T>,
  fail: (message: string, cause: unknown) => Error,
): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw fail(`Cannot read ${what}: ${fsReason(error)}`, error);
  }
}
