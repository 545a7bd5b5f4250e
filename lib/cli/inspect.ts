/**
 * `loom inspect FILE`: prints the result descriptor the model would see for
 * a file, as pretty JSON.
 *
 * @module
 */
import { compactDescriptor, ResultStore } from "../store/result_store.ts";
import { onlyPositional, parseFlags, readTextInput } from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { type CliIo, ExitCode } from "./_io.ts";

const USAGE = `Usage: loom inspect FILE [--partial] [--compact]

Prints the result descriptor the model sees when FILE is stored: id, SHA-256,
size, a preview of at most 1,024 bytes (the head; the tail with --partial)
and a whole-content reference.

Options:
  --partial   Describe the file as partial output (tail preview)
  --compact   Print the compact form the bounded policy shows
  -h, --help  Show this help
`;

/** Parsed `loom inspect` arguments. */
export interface InspectArguments {
  /** The file to describe. */
  readonly file: string;
  /** `--partial`: describe it as partial output (tail preview). */
  readonly partial: boolean;
  /** `--compact`: print the bounded policy's form. */
  readonly compact: boolean;
}

/**
 * Parses `loom inspect` arguments; reads nothing.
 *
 * @param args Arguments after `inspect`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On an unknown option or not exactly one FILE.
 */
export function parseInspectArguments(
  args: readonly string[],
): Parsed<InspectArguments> {
  const { values, positionals } = parseFlags(args, {
    partial: { type: "boolean", default: false },
    compact: { type: "boolean", default: false },
  }, true);
  if (values.help) return help(USAGE);
  return {
    file: onlyPositional(positionals, "FILE"),
    partial: values.partial,
    compact: values.compact,
  };
}

async function inspect(a: InspectArguments, io: CliIo): Promise<number> {
  const bytes = await readTextInput(a.file, { command: "inspect", io });
  if (bytes === null) return ExitCode.usage;
  const descriptor = await new ResultStore().put(bytes, {
    origin: `repository.inspect ${a.file}`,
    capture: a.partial ? "partial" : "complete",
  });
  const shown = a.compact ? compactDescriptor(descriptor) : descriptor;
  io.out(JSON.stringify(shown, null, 2) + "\n");
  return ExitCode.ok;
}

/** `loom inspect`: exit 0, or 2 for bad usage, a missing file or invalid UTF-8. */
export const inspectCommand: Command = commandOf(
  parseInspectArguments,
  inspect,
);
