/**
 * How `main` reports a failure a command threw: the `loom <command>:` line
 * and the exit code. The one place that maps errors to exit codes.
 *
 * @module
 */
import { isCodedError } from "../errors.ts";
import { ExitCode, UsageError } from "./_io.ts";

/**
 * Codes of errors that mean the input was bad and nothing was done (exit 2).
 * Every other coded error that reaches `main` is a failure (exit 3).
 */
const BAD_INPUT_CODES: ReadonlySet<string> = new Set([
  "usage",
  "invalid_request",
  "bad_spec",
  "bad_option",
  "missing_api_key",
  "recording_invalid",
  "invalid_config",
  "invalid_context_file",
  "unreadable_context_file",
  "invalid_utf8",
  "session_invalid",
  "session_missing",
  "session_exists",
  "session_inside_workspace",
  "session_outdated",
  "session_tampered",
  "session_locked",
  "session_key_invalid",
  "test_program_not_found",
]);

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
      exitCode: ExitCode.usage,
    };
  }
  if (isCodedError(error)) {
    const bad = isBadInput(error.code);
    return {
      text: `${prefix} ${error.code}: ${error.message}\n`,
      exitCode: bad ? ExitCode.usage : ExitCode.failure,
    };
  }
  const detail = error instanceof Error
    ? `${error.name}: ${error.message}`
    : String(error);
  return {
    text: `${prefix} internal error: ${detail}\n`,
    exitCode: ExitCode.failure,
  };
}

/**
 * Whether an error code means bad input (exit 2) rather than a failure.
 *
 * @param code A stable error code.
 * @returns `true` for bad input.
 */
export function isBadInput(code: string): boolean {
  return BAD_INPUT_CODES.has(code);
}
