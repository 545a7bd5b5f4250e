/**
 * How `main` reports a failure a command threw: the `loom <command>:` line
 * and the exit code, which `exitCodeOfError` (`_io.ts`) decides from the
 * error's category in the registry of `lib/errors.ts`.
 *
 * @module
 */
import { isLoomError } from "../errors.ts";
import { fsReason } from "../fs_reason.ts";
import { exitCodeOfError, UsageError } from "./_io.ts";

/** What `main` prints and returns for a failure. */
export interface Failure {
  /** The line(s) for standard error, newline included. */
  readonly text: string;
  /** The process exit code. */
  readonly exitCode: number;
}

/**
 * Describes a failure a command threw.
 *
 * @param command The command's name, e.g. `run`.
 * @param error What it threw.
 * @returns The message for standard error and the exit code.
 */
export function describeFailure(command: string, error: unknown): Failure {
  const prefix = `loom ${command}:`;
  if (error instanceof UsageError) {
    return {
      text: `${prefix} ${error.message}; run 'loom help ${command}'\n`,
      exitCode: exitCodeOfError(error),
    };
  }
  if (isLoomError(error)) {
    return {
      text: `${prefix} ${error.code}: ${error.message}\n`,
      exitCode: exitCodeOfError(error),
    };
  }
  const os = error instanceof Error ? osFailure(error) : undefined;
  const detail = os ??
    (error instanceof Error
      ? `${error.name}: ${error.message}`
      : String(error));
  return {
    text: `${prefix} internal error: ${detail}\n`,
    exitCode: exitCodeOfError(error),
  };
}

/**
 * Rewords a raw OS error (`No such file or directory (os error 2): lstat
 * '/x'`) as the operation, the file and the reason.
 */
function osFailure(error: Error): string | undefined {
  const match = / \(os error [0-9]+\): ([a-z_]+) '(.*)'$/s.exec(error.message);
  if (match === null) return undefined;
  return `the file operation ${match[1]} on ${match[2]} failed: ${
    fsReason(error)
  }`;
}
