/**
 * Argument and input helpers shared by the CLI commands: one flag parser
 * (strict, `--help` added, parser messages worded with the command's flags),
 * the value checks the commands share, and reading their input files.
 *
 * @module
 */
import {
  parseArgs,
  type ParseArgsConfig,
  type ParseArgsOptionsConfig,
} from "node:util";
import { fsReason, readingFile } from "../fs_reason.ts";
import { firstInvalidUtf8 } from "../store/utf8.ts";
import { type CliIo, UsageError } from "./_io.ts";
import { messageOf } from "../errors.ts";

export { fsReason };

/** The `--help` / `-h` flag every command takes. */
const HELP_OPTION = {
  help: { type: "boolean", short: "h", default: false },
} as const;

/** The options of {@linkcode parseFlags}: the command's own and `--help`. */
export type FlagsConfig<O extends ParseArgsOptionsConfig> = {
  args: string[];
  options: O & typeof HELP_OPTION;
  strict: true;
  allowPositionals: boolean;
};

/** What `parseArgs` returns for a given configuration. */
export type ParsedArguments<T extends ParseArgsConfig> = ReturnType<
  typeof parseArgs<T>
>;

/**
 * Parses a command's flags strictly (an unknown option, a missing value or,
 * unless `positionals` is set, a positional argument is a
 * {@linkcode UsageError} worded with the command's own flags); `--help` and
 * `-h` are added to the options.
 *
 * @param args The command's arguments.
 * @param options The `parseArgs` options of the command's flags.
 * @param positionals Whether the command takes positional arguments.
 * @returns The parsed values (`help` included) and positionals.
 * @throws {UsageError} When the arguments do not fit the options.
 */
export function parseFlags<const O extends ParseArgsOptionsConfig>(
  args: readonly string[],
  options: O,
  positionals = false,
): ParsedArguments<FlagsConfig<O>> {
  const config: FlagsConfig<O> = {
    args: [...args],
    options: { ...options, ...HELP_OPTION },
    strict: true,
    allowPositionals: positionals,
  };
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(
      "usage",
      parserMessage(messageOf(error), args),
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
 * A required flag's value.
 *
 * @param value The value given.
 * @param what The flag as the message names it, e.g. `--workspace DIR`.
 * @returns The value.
 * @throws {UsageError} When it is missing or empty.
 */
export function required(value: string | undefined, what: string): string {
  if (value === undefined || value === "") {
    throw new UsageError("usage", `Missing ${what}`);
  }
  return value;
}

/**
 * The one positional argument of a command that takes a file.
 *
 * @param positionals The positional arguments.
 * @param what How the message names it, e.g. `FILE`.
 * @returns The file.
 * @throws {UsageError} When there is not exactly one.
 */
export function onlyPositional(
  positionals: readonly string[],
  what: string,
): string {
  if (positionals.length !== 1) {
    throw new UsageError("usage", `Expected exactly one ${what}`);
  }
  return positionals[0]!;
}

/**
 * Parses the value of a flag that takes a positive integer (digits only);
 * a flag not given stays `undefined`.
 *
 * @param text The value given.
 * @param flag The flag, e.g. `--max-steps`, for the error message.
 * @returns The integer.
 * @throws {UsageError} When the value is not a positive safe integer.
 */
export function positiveInteger(text: string, flag: string): number;
export function positiveInteger(
  text: string | undefined,
  flag: string,
): number | undefined;
export function positiveInteger(
  text: string | undefined,
  flag: string,
): number | undefined {
  if (text === undefined) return undefined;
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
 * Parses a duration: `500ms`, `120s`, `2m`, or a bare number of seconds; a
 * flag not given stays `undefined`.
 *
 * @param text The duration.
 * @param flag The option it came from, for the message.
 * @returns Milliseconds.
 * @throws {UsageError} When the text is not a positive duration.
 */
export function parseDuration(text: string, flag: string): number;
export function parseDuration(
  text: string | undefined,
  flag: string,
): number | undefined;
export function parseDuration(
  text: string | undefined,
  flag: string,
): number | undefined {
  if (text === undefined) return undefined;
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

/** The keys of `T` whose values may be `undefined`. */
type OptionalKeys<T> = {
  [K in keyof T]-?: undefined extends T[K] ? K : never;
}[keyof T];

/** `T` with its possibly-`undefined` properties made optional instead. */
export type Defined<T> =
  & { readonly [K in Exclude<keyof T, OptionalKeys<T>>]: T[K] }
  & { readonly [K in OptionalKeys<T>]?: Exclude<T[K], undefined> };

/**
 * The object without its `undefined` properties, so flags that were not
 * given are absent rather than present and `undefined`.
 *
 * @param fields The fields, some `undefined`.
 * @returns A copy holding only the defined fields.
 */
export function defined<const T extends object>(fields: T): Defined<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as Defined<T>;
}

/** Options of {@linkcode readTextInput}. */
export interface ReadInputOptions {
  /** The command name the report starts with, e.g. `inspect`. */
  readonly command: string;
  /** Where to report. */
  readonly io: CliIo;
}

/**
 * Reads an input file of a command that must be UTF-8 text, or reports on
 * standard error why it cannot (`loom <command>: Cannot read FILE: <reason>`,
 * or `loom <command>: invalid_utf8: Cannot <command> FILE: byte N …`).
 *
 * @param file The path given on the command line.
 * @param options The command name and where to report.
 * @returns The file's bytes, or `null` when it could not be read or is not
 *   UTF-8 (the report is written).
 */
export async function readTextInput(
  file: string,
  options: ReadInputOptions,
): Promise<Uint8Array | null> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(file);
  } catch (error) {
    options.io.err(
      `loom ${options.command}: Cannot read ${file}: ${fsReason(error)}\n`,
    );
    return null;
  }
  const bad = firstInvalidUtf8(bytes);
  if (bad === -1) return bytes;
  options.io.err(
    `loom ${options.command}: invalid_utf8: Cannot ${options.command} ${file}: byte ${bad} starts an invalid UTF-8 sequence\n`,
  );
  return null;
}

/**
 * Reads the text file a flag names (`--intent-file`, `--prices`).
 *
 * @param file The path given.
 * @param flag The flag, for the message.
 * @returns The file's text.
 * @throws {UsageError} `Cannot read FLAG FILE: <reason>` when it cannot be read.
 */
export async function readFlagFile(
  file: string,
  flag: string,
): Promise<string> {
  return await readingFile(
    `${flag} ${file}`,
    () => Deno.readTextFile(file),
    (message) => new UsageError("usage", message),
  );
}
