/**
 * `loom render FILE [--format text|messages|anthropic|openai]
 * [--breakpoints a,b] [--ttl 5m|1h]`: compiles a declarative context file
 * and prints it as text or as provider messages (JSON).
 *
 * @module
 */
import { ContextFileError, loadContextFile } from "../context/context_file.ts";
import { CompileOptionsError } from "../context/errors.ts";
import type { CacheTtl, MessageOptions } from "../context/message.ts";
import { SECTION_NAMES, type SectionNameInput } from "../context/section.ts";
import { onlyPositional, parseFlags } from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { type CliIo, ExitCode, exitCodeOfError, UsageError } from "./_io.ts";

const FORMATS = ["text", "messages", "anthropic", "openai"] as const;
/** What `loom render --format` prints. */
export type RenderFormat = typeof FORMATS[number];

const USAGE =
  `Usage: loom render FILE [--format text|messages|anthropic|openai] [--breakpoints a,b] [--ttl 5m|1h]

Compiles the context file FILE (YAML or JSON: sections of string, file and
image entries with names and roles, includes of other context files) and
prints it. text is the plain rendering; messages, anthropic and openai print
JSON: provider-neutral messages, the system and messages fields of an
Anthropic Messages request, or Chat Completions messages.

A bad file prints an error naming the file and the offending key and exits 2,
as does a flag the chosen format does not use.

Options:
  --format F         text (default), messages, anthropic or openai
  --breakpoints A,B  Sections whose last block gets a cache marker (at most
                     4); messages and anthropic only
  --ttl T            Cache marker lifetime: 5m or 1h; needs --breakpoints
  -h, --help         Show this help
`;

/** Parsed `loom render` arguments. */
export interface RenderArguments {
  /** The context file. */
  readonly file: string;
  /** `--format`. */
  readonly format: RenderFormat;
  /** The cache markers of `--breakpoints` and `--ttl`. */
  readonly options: MessageOptions;
}

/**
 * Parses `loom render` arguments; reads nothing.
 *
 * @param args Arguments after `render`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On an unknown option or format, not exactly one
 *   FILE, or cache flags the format does not use or that are malformed.
 */
export function parseRenderArguments(
  args: readonly string[],
): Parsed<RenderArguments> {
  const { values, positionals } = parseFlags(args, {
    format: { type: "string", default: "text" },
    breakpoints: { type: "string" },
    ttl: { type: "string" },
  }, true);
  if (values.help) return help(USAGE);
  const file = onlyPositional(positionals, "context FILE");
  const format = values.format as RenderFormat;
  if (!FORMATS.includes(format)) {
    throw new UsageError(
      "usage",
      `Invalid --format ${values.format}: expected one of ${
        FORMATS.join(", ")
      }`,
    );
  }
  const options = messageOptions(format, values.breakpoints, values.ttl);
  return { file, format, options };
}

function render(a: RenderArguments, io: CliIo): number {
  try {
    const ctx = loadContextFile(a.file);
    let output: string;
    switch (a.format) {
      case "text": {
        const text = ctx.render();
        output = text === "" ? "" : `${text}\n`;
        break;
      }
      case "messages":
        output = json(ctx.toMessages(a.options));
        break;
      case "anthropic":
        output = json(ctx.toAnthropic(a.options));
        break;
      case "openai":
        output = json(ctx.toOpenAI(a.options));
        break;
    }
    io.out(output);
    return ExitCode.ok;
  } catch (error) {
    if (
      error instanceof ContextFileError || error instanceof CompileOptionsError
    ) {
      io.err(`loom render: ${error.code}: ${error.message}\n`);
      return exitCodeOfError(error);
    }
    throw error;
  }
}

/** Only `messages` and `anthropic` carry cache markers. */
const MAX_CACHE_BREAKPOINTS = 4;
const CACHING_FORMATS: readonly RenderFormat[] = ["messages", "anthropic"];

function messageOptions(
  format: RenderFormat,
  breakpoints: string | undefined,
  ttl: string | undefined,
): MessageOptions {
  for (
    const [flag, value] of [["--breakpoints", breakpoints], ["--ttl", ttl]]
  ) {
    if (value !== undefined && !CACHING_FORMATS.includes(format)) {
      throw new UsageError(
        "usage",
        `${flag} has no effect with --format ${format}: only messages and anthropic carry cache markers`,
      );
    }
  }
  if (ttl !== undefined && ttl !== "5m" && ttl !== "1h") {
    throw new UsageError("usage", `Invalid --ttl ${ttl}: expected 5m or 1h`);
  }
  if (ttl !== undefined && breakpoints === undefined) {
    throw new UsageError(
      "usage",
      "--ttl needs --breakpoints: it sets the lifetime of their cache markers",
    );
  }
  const sections = breakpoints?.split(",").map((s) => s.trim())
    .filter((s) => s !== "");
  if (sections !== undefined) checkBreakpoints(sections);
  return {
    ...(sections === undefined
      ? {}
      : { cacheBreakpoints: sections as SectionNameInput[] }),
    ...(ttl === undefined ? {} : { cacheTtl: ttl as CacheTtl }),
  };
}

function checkBreakpoints(sections: readonly string[]): void {
  if (sections.length === 0) {
    throw new UsageError(
      "usage",
      "Invalid --breakpoints: expected section names such as foundation,topic",
    );
  }
  for (const name of sections) {
    if (!(SECTION_NAMES as readonly string[]).includes(name.toLowerCase())) {
      throw new UsageError(
        "usage",
        `Unknown section ${name} in --breakpoints: sections are ${
          SECTION_NAMES.join(", ")
        }`,
      );
    }
  }
  const distinct = new Set(sections.map((name) => name.toLowerCase())).size;
  if (distinct > MAX_CACHE_BREAKPOINTS) {
    throw new UsageError(
      "usage",
      `--breakpoints names ${distinct} sections: a request takes at most ${MAX_CACHE_BREAKPOINTS} cache markers`,
    );
  }
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** `loom render`: exit 0, or 2 for bad usage or a bad context file. */
export const renderCommand: Command = commandOf(parseRenderArguments, render);
