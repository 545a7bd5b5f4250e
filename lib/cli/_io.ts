/**
 * Where a CLI command writes. Commands never touch `Deno.stdout` directly, so
 * tests can capture output and `cli.ts` stays the only place that exits.
 *
 * @module
 */

/** Output sinks and process facts handed to every command. */
export interface CliIo {
  /** Writes text to standard output exactly as given (no newline added). */
  out(text: string): void;
  /** Writes text to standard error exactly as given (no newline added). */
  err(text: string): void;
}

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

/** The exit code table, as `--help` prints it (README "CLI" has the same). */
export const EXIT_CODES_HELP = `Exit codes:
  0  done (run: the slice completed)
  1  run: the slice stopped without completing (step budget, refusals,
     suspension, capacity)
  2  bad usage or bad input: flags, files, model spec, API key, recording,
     session; nothing was done
  3  provider failure after the start, confinement unavailable, or an
     internal error
`;

/** A CLI command: parses its own arguments, returns an exit code. */
export type Command = (args: string[], io: CliIo) => Promise<number>;

/** A usage error: printed with the command's help hint, exit code 2. */
export class UsageError extends TypeError {
  /** Always `usage`. */
  readonly code = "usage";
  /** @param message What is wrong with the arguments. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Bad input found by a command's own checks, with a stable code (for
 * example `test_program_not_found`): exit code 2, no help hint.
 */
export class InputError extends TypeError {
  /** Stable machine code. */
  readonly code: string;
  /**
   * @param code Stable machine code.
   * @param message What is wrong and how to fix it.
   */
  constructor(code: string, message: string) {
    super(message);
    this.name = "InputError";
    this.code = code;
  }
}
