/**
 * The CLI's shared pieces: the output sinks, the exit-code policy (every
 * exit code the CLI returns is decided here) and the usage error.
 *
 * @module
 */
import {
  type ErrorCategory,
  errorCategory,
  isLoomError,
  LoomError,
} from "../errors.ts";
import type { StopReason } from "../briefing/context_report.ts";

export type { CliIo } from "./cli_io.ts";

/** Exit codes shared by every command (DESIGN.md "Errors and bad input"). */
export const ExitCode = {
  /** The command did its job (a slice completed). */
  ok: 0,
  /** A slice stopped without completing. */
  stopped: 1,
  /** Bad usage or bad input: nothing was done. */
  usage: 2,
  /** Internal or provider failure. */
  failure: 3,
} as const;

/** The exit code of each error category: the CLI's whole error policy. */
const CATEGORY_EXIT: Readonly<Record<ErrorCategory, number>> = {
  bad_input: ExitCode.usage,
  stopped: ExitCode.stopped,
  internal: ExitCode.failure,
};

/**
 * The exit code for a thrown value: by its category for a Loom error
 * (bad input 2, stopped 1, internal 3), 3 for anything else.
 *
 * @param error Anything caught.
 * @returns The process exit code.
 */
export function exitCodeOfError(error: unknown): number {
  return isLoomError(error)
    ? CATEGORY_EXIT[errorCategory(error.code)]
    : ExitCode.failure;
}

const STOPPED_EXIT: Readonly<Record<StopReason, number>> = {
  completed: ExitCode.ok,
  step_budget: ExitCode.stopped,
  refused: ExitCode.stopped,
  suspended: ExitCode.stopped,
  capacity: ExitCode.stopped,
  confinement_unavailable: ExitCode.failure,
  provider_error: ExitCode.failure,
  interrupted: ExitCode.stopped,
};

/**
 * The exit code of a slice outcome: 0 completed; 1 stopped without
 * completion (budget, refusals, suspension, capacity, the run timeout); 3
 * provider failure or confinement unavailable. `loom run` exits 130 (SIGINT)
 * or 143 (SIGTERM) instead when a signal interrupted the run.
 *
 * @param stop The stop reason.
 * @returns The process exit code.
 */
export function exitCodeOf(stop: StopReason): number {
  return STOPPED_EXIT[stop];
}

/** The exit code table, as `--help` prints it (docs/cli.md has the same). */
export const EXIT_CODES_HELP = `Exit codes:
  0  done (run: the slice completed)
  1  run: the slice stopped without completing (step budget, refusals,
     suspension, capacity, run timeout)
  2  bad usage or bad input: flags, files, model spec, API key, recording,
     session; nothing was done
  3  provider failure after the start, confinement unavailable, or an
     internal error
  130/143  run: interrupted by SIGINT/SIGTERM (report, summary and session
     written; a second signal exits at once)
`;

/**
 * A usage error: printed with the command's help hint, exit code 2. Its
 * `command`, when set, is the command whose usage is wrong when that is not
 * the one that ran (the top level's `help`): the message is then printed as
 * `loom <command>: …`.
 */
export class UsageError extends LoomError.TypeError<
  "UsageError",
  { readonly command?: string }
> {}

/**
 * Bad input found by a command's own checks, with a stable code (for
 * example `test_program_not_found`): exit code 2, no help hint.
 */
export class InputError extends LoomError.TypeError<"InputError"> {}
