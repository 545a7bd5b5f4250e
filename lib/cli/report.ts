/**
 * `loom report [--markdown] FILE`: renders a context report (written by
 * `loom run --context-report FILE`) for a reader — terminal text, or
 * GitHub-flavoured Markdown for a job summary or a pull-request comment.
 *
 * @module
 */
import { readContextReport } from "../briefing/context_report_schema.ts";
import { onlyPositional, parseFlags, readFlagFile } from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { type CliIo, ExitCode } from "./_io.ts";
import { reportMarkdown, reportText } from "./_report_render.ts";

const USAGE = `Usage: loom report [--markdown] FILE

Renders the context report FILE (loom run --context-report FILE) from the
report alone: outcome and stop reason, steps, the revision the tests
validated, each test run and its exit, request bytes, cache reads and
writes, the estimated cost and the lookups. No prompt or file text is in a
report, so none is in what this prints; the stop detail is escaped.

Options:
  --markdown  Print GitHub-flavoured Markdown (a job summary, a PR comment)
              instead of terminal text
  -h, --help  Show this help
`;

/** Parsed `loom report` arguments. */
export interface ReportArguments {
  /** The context report file. */
  readonly file: string;
  /** `--markdown`: GitHub-flavoured Markdown instead of terminal text. */
  readonly markdown: boolean;
}

/**
 * Parses `loom report` arguments; reads nothing.
 *
 * @param args Arguments after `report`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On an unknown option or not exactly one FILE.
 */
export function parseReportArguments(
  args: readonly string[],
): Parsed<ReportArguments> {
  const { values, positionals } = parseFlags(args, {
    markdown: { type: "boolean", default: false },
  }, true);
  if (values.help) return help(USAGE);
  return {
    file: onlyPositional(positionals, "FILE"),
    markdown: values.markdown,
  };
}

async function report(a: ReportArguments, io: CliIo): Promise<number> {
  const text = await readFlagFile(a.file, "FILE");
  const parsed = readContextReport(text, a.file);
  io.out(a.markdown ? reportMarkdown(parsed) : reportText(parsed));
  return ExitCode.ok;
}

/** `loom report`: exit 0, or 2 for bad usage or a file that is no report. */
export const reportCommand: Command = commandOf(parseReportArguments, report);
