/**
 * What a CLI command is: a pure `parse…Arguments` function, which checks
 * every argument before anything runs (and answers `--help` with a text),
 * and the function that does the work with what it parsed.
 *
 * @module
 */
import { type CliIo, ExitCode } from "./_io.ts";

/** A CLI command: parses its own arguments, returns an exit code. */
export type Command = (
  args: readonly string[],
  io: CliIo,
) => Promise<number>;

/** What a command's parser returns for `--help`: the text to print. */
export interface HelpArguments {
  /** Always `help`. */
  readonly kind: "help";
  /** The command's help text. */
  readonly text: string;
}

/** What a command's parser returns: its arguments, or the help. */
export type Parsed<A> = A | HelpArguments;

/**
 * The `--help` result of a parser.
 *
 * @param text The command's help text.
 * @returns The help request.
 */
export function help(text: string): HelpArguments {
  return { kind: "help", text };
}

/**
 * A command from its pure parser and the function that does its work:
 * `--help` prints the parser's text and exits 0.
 *
 * @param parse The command's `parse…Arguments` function.
 * @param run Does the command's work with the parsed arguments.
 * @returns The command.
 */
export function commandOf<A>(
  parse: (args: readonly string[]) => Parsed<A>,
  run: (parsed: A, io: CliIo) => number | Promise<number>,
): Command {
  return async (args, io) => {
    const parsed = parse(args);
    if (isHelp(parsed)) {
      io.out(parsed.text);
      return ExitCode.ok;
    }
    return await run(parsed, io);
  };
}

function isHelp(parsed: unknown): parsed is HelpArguments {
  return typeof parsed === "object" && parsed !== null &&
    (parsed as { kind?: unknown }).kind === "help";
}
