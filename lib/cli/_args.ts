/**
 * Argument and input helpers shared by the CLI commands.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { fsReason } from "../fs_reason.ts";
import { firstInvalidUtf8 } from "../store/utf8.ts";
import { type CliIo, UsageError } from "./_io.ts";

export { fsReason };

/** What `parseArgs` returns for a given configuration. */
export type ParsedArguments<T extends ParseArgsConfig> = ReturnType<
  typeof parseArgs<T>
>;

/**
 * Parses command arguments with `node:util` `parseArgs`, turning its errors
 * (unknown option, missing value, unexpected positional) into a
 * {@linkcode UsageError} worded with the command's own flags.
 *
 * @param config The `parseArgs` configuration, `args` included.
 * @returns The parsed values and positionals.
 * @throws {UsageError} When the arguments do not fit the configuration.
 */
export function parseArguments<T extends ParseArgsConfig>(
  config: T,
): ParsedArguments<T> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(
      "usage",
      parserMessage(
        error instanceof Error ? error.message : String(error),
        config.args ?? [],
      ),
    );
  }
}

/**
 * Rewords a `node:util` `parseArgs` message for a person: no quotes around
 * flags, no multi-line hints, the next argument shown when a value looks
 * like an option.
 *
 * @param message The parser's message.
 * @param args The arguments that were parsed.
 * @returns One sentence-case line.
 */
export function parserMessage(
  message: string,
  args: readonly string[],
): string {
  let m = /^Unknown option '(.+?)'/.exec(message);
  if (m !== null) return `Unknown option ${m[1]}`;
  m = /^Option '(?:-\w, )?(\S+) <value>' argument missing/.exec(message);
  if (m !== null) return `Missing the value of ${m[1]}`;
  m = /^Option '(?:-\w, )?(\S+)' argument is ambiguous/.exec(message);
  if (m !== null) {
    const flag = m[1]!;
    const next = args[args.indexOf(flag) + 1];
    return `Missing the value of ${flag}${
      next === undefined ? "" : ` (${next} looks like an option)`
    }; to give a value that starts with a dash write ${flag}=VALUE`;
  }
  m = /^Option '(?:-\w, )?(\S+)' does not take an argument/.exec(message);
  if (m !== null) return `${m[1]} takes no value`;
  m = /^Unexpected argument '(.*?)'/.exec(message);
  if (m !== null) {
    return `Unexpected argument ${
      m[1]
    }: this command takes no positional arguments`;
  }
  const line = message.split("\n")[0]!.replace(/\.$/, "");
  return line.charAt(0).toUpperCase() + line.slice(1);
}

/**
 * Parses the value of a flag that takes a positive integer (digits only).
 *
 * @param text The value given.
 * @param flag The flag, e.g. `--max-steps`, for the error message.
 * @returns The integer.
 * @throws {UsageError} When the value is not a positive safe integer.
 */
export function positiveInteger(text: string, flag: string): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(
      "usage",
      `Invalid ${flag} ${text}: expected a positive integer`,
    );
  }
  return n;
}

/**
 * Parses a duration: `500ms`, `120s`, `2m`, or a bare number of seconds.
 *
 * @param text The duration.
 * @param flag The option it came from, for the message.
 * @returns Milliseconds.
 * @throws {UsageError} When the text is not a positive duration.
 */
export function parseDuration(
  text: string,
  flag = "--test-timeout",
): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)?$/.exec(text.trim());
  const value = match === null ? NaN : Number(match[1]);
  const unit = match?.[2] ?? "s";
  const ms = value * (unit === "ms" ? 1 : unit === "s" ? 1000 : 60_000);
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new UsageError(
      "usage",
      `Invalid ${flag} ${text}: expected a duration such as 120s, 2m or 500ms`,
    );
  }
  return Math.round(ms);
}

/** Options of {@linkcode readInputFile}. */
export interface ReadInputOptions {
  /** The command name the report starts with, e.g. `inspect`. */
  readonly command: string;
  /** Where to report. */
  readonly io: CliIo;
}

/**
 * Reads an input file of a command, or reports on standard error why it
 * cannot (`loom <command>: Cannot read FILE: <reason>`).
 *
 * @param file The path given on the command line.
 * @param options The command name and where to report.
 * @returns The file's bytes, or `null` when it could not be read.
 */
export async function readInputFile(
  file: string,
  options: ReadInputOptions,
): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(file);
  } catch (error) {
    options.io.err(
      `loom ${options.command}: Cannot read ${file}: ${fsReason(error)}\n`,
    );
    return null;
  }
}

/**
 * Reports on standard error when an input file is not UTF-8 text
 * (`loom <command>: invalid_utf8: Cannot <command> FILE: byte N …`).
 *
 * @param bytes The file's bytes.
 * @param file The path given on the command line.
 * @param options The command name and where to report.
 * @returns `true` when the bytes are valid UTF-8.
 */
export function reportInvalidUtf8(
  bytes: Uint8Array,
  file: string,
  options: ReadInputOptions,
): boolean {
  const bad = firstInvalidUtf8(bytes);
  if (bad === -1) return true;
  options.io.err(
    `loom ${options.command}: invalid_utf8: Cannot ${options.command} ${file}: byte ${bad} starts an invalid UTF-8 sequence\n`,
  );
  return false;
}
