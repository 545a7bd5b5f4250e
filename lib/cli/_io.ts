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
