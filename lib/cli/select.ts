/**
 * `loom select FILE (--bytes A:B | --lines A:B | --pointer P) [--json]
 * [--sha256 HEX]`: resolves a reference against a file with the same rules
 * the model's lookups follow and prints the selection raw.
 *
 * @module
 */
import { sha256Hex } from "../store/digest.ts";
import type { ResultReference, Selector } from "../store/result_store.ts";
import { ReferenceFailureError, select } from "../reference/selection.ts";
import { defined, onlyPositional, parseFlags, readTextInput } from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { type CliIo, ExitCode, UsageError } from "./_io.ts";

const USAGE =
  `Usage: loom select FILE (--bytes A:B | --lines A:B | --pointer P) [--json] [--sha256 HEX]

Prints the selected part of FILE to standard output exactly (no newline is
added). On failure prints 'loom select: <code>: <message>' to standard error
and exits 2.

Options:
  --bytes A:B    Bytes A (inclusive) to B (exclusive), zero-based; both on
                 UTF-8 character boundaries
  --lines A:B    Lines A to B, one-based and inclusive, with their endings
  --pointer P    An RFC 6901 JSON pointer; prints the decoded string value
  --json         With --pointer: print the value's original JSON lexeme
  --sha256 HEX   Verify FILE against this SHA-256 digest first (64 hex
                 digits, any case; digest_mismatch)
  -h, --help     Show this help
`;

function range(flag: string, value: string): { start: number; end: number } {
  const match = /^(-?[0-9]+):(-?[0-9]+)$/.exec(value);
  if (match === null) {
    throw new UsageError(
      "usage",
      `Invalid --${flag} ${value}: expected A:B with integers A and B`,
    );
  }
  return { start: Number(match[1]), end: Number(match[2]) };
}

/** Rewords the model-facing hints of a selection failure with this command's flags. */
function forPeople(message: string): string {
  return message.replace(
    /; ask for json rendering$/,
    "; add --json to print its JSON",
  );
}

/** Parsed `loom select` arguments. */
export interface SelectArguments {
  /** The file to select from. */
  readonly file: string;
  /** The part of it, from `--bytes`, `--lines` or `--pointer`. */
  readonly selector: Selector;
  /** `--json`: print the value's JSON lexeme (with `--pointer` only). */
  readonly json: boolean;
  /** `--sha256`, lowercased: the digest to verify the file against. */
  readonly sha256?: string;
}

/**
 * Parses `loom select` arguments; reads nothing.
 *
 * @param args Arguments after `select`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On an unknown option, not exactly one FILE or one
 *   selector, a malformed range or digest, or `--json` without `--pointer`.
 */
export function parseSelectArguments(
  args: readonly string[],
): Parsed<SelectArguments> {
  const { values, positionals } = parseFlags(args, {
    bytes: { type: "string" },
    lines: { type: "string" },
    pointer: { type: "string" },
    json: { type: "boolean", default: false },
    sha256: { type: "string" },
  }, true);
  if (values.help) return help(USAGE);
  const file = onlyPositional(positionals, "FILE");
  const given = [values.bytes, values.lines, values.pointer].filter((v) =>
    v !== undefined
  );
  if (given.length !== 1) {
    throw new UsageError(
      "usage",
      "Give exactly one of --bytes, --lines, --pointer",
    );
  }
  let selector: Selector;
  if (values.bytes !== undefined) {
    selector = { kind: "bytes", ...range("bytes", values.bytes) };
  } else if (values.lines !== undefined) {
    selector = { kind: "lines", ...range("lines", values.lines) };
  } else {
    selector = { kind: "json_pointer", pointer: values.pointer! };
  }
  if (values.json && values.pointer === undefined) {
    throw new UsageError(
      "usage",
      "--json needs --pointer: byte and line selections print raw text",
    );
  }
  const sha256 = values.sha256?.toLowerCase();
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256)) {
    throw new UsageError(
      "usage",
      `Invalid --sha256 ${values.sha256}: expected 64 hexadecimal digits`,
    );
  }
  return defined({ file, selector, json: values.json, sha256 });
}

async function selectPart(a: SelectArguments, io: CliIo): Promise<number> {
  const bytes = await readTextInput(a.file, { command: "select", io });
  if (bytes === null) return ExitCode.usage;
  const sha256 = sha256Hex(bytes);
  const reference: ResultReference = {
    result: a.file,
    sha256: a.sha256 ?? sha256,
    select: a.selector,
    rendering: a.json ? "json" : "text",
  };
  try {
    const selection = select({ id: a.file, bytes, sha256 }, reference);
    io.out("text" in selection ? selection.text : selection.json);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof ReferenceFailureError) {
      io.err(`loom select: ${error.code}: ${forPeople(error.message)}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
}

/** `loom select`: exit 0, or 2 for bad usage or a failed selection. */
export const selectCommand: Command = commandOf(
  parseSelectArguments,
  selectPart,
);
