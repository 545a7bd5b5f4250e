/**
 * `loom report [--markdown] FILE`: renders a context report (written by
 * `loom run --context-report FILE`) for a reader — terminal text, or
 * GitHub-flavoured Markdown for a job summary or a pull-request comment;
 * `loom report --html FILE OUT.html [--requests LOG]`: the page of
 * `loom view` for that run, as one self-contained file.
 *
 * @module
 */
import { resolve } from "node:path";
import { htmlReport } from "../view/html_report.ts";
import { readReportFile } from "../view/inputs.ts";
import { RequestLogReader } from "../view/request_log_reader.ts";
import { readContextReport } from "../briefing/context_report_schema.ts";
import { onlyPositional, parseFlags, readFlagFile } from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { type CliIo, ExitCode, UsageError } from "./_io.ts";
import { reportMarkdown, reportText } from "./_report_render.ts";

const USAGE = `Usage: loom report [--markdown] FILE
       loom report --html FILE OUT.html [--requests LOG]

Renders the context report FILE (loom run --context-report FILE) from the
report alone: outcome and stop reason, steps, the revision the tests
validated, each test run and its exit, request bytes, cache reads and
writes, the estimated cost and the lookups. No prompt or file text is in a
report, so none is in what this prints; the stop detail is escaped.

With --html it writes OUT.html: the page of loom view for this run (its
timeline by part, cache and cost per request, each request's parts) in one
file that needs no network — a CI artifact, an attachment to an issue.
With --requests LOG (loom run --record-requests) the file also holds each
request as sent. FILE may also be a gateway report (loom mcp --report).

Options:
  --markdown       Print GitHub-flavoured Markdown (a job summary, a PR
                   comment) instead of terminal text
  --html           Write FILE's page to OUT.html
  --requests LOG   With --html: the run's request log
  -h, --help       Show this help
`;

/** Parsed `loom report` arguments. */
export interface ReportArguments {
  /** The context report file. */
  readonly file: string;
  /** `--markdown`: GitHub-flavoured Markdown instead of terminal text. */
  readonly markdown: boolean;
  /** `--html`: the HTML file to write. */
  readonly html?: string;
  /** `--requests LOG`, with `--html`. */
  readonly requests?: string;
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
    html: { type: "boolean", default: false },
    requests: { type: "string" },
  }, true);
  if (values.help) return help(USAGE);
  if (values.html) {
    if (values.markdown) {
      throw new UsageError("usage", "Give --markdown or --html, not both");
    }
    const [file, out, ...extra] = positionals;
    if (file === undefined || out === undefined || extra.length > 0) {
      throw new UsageError(
        "usage",
        "--html takes FILE and OUT.html: the report and the page to write",
      );
    }
    return {
      file,
      markdown: false,
      html: out,
      ...(values.requests === undefined ? {} : { requests: values.requests }),
    };
  }
  if (values.requests !== undefined) {
    throw new UsageError("usage", "--requests LOG needs --html");
  }
  return {
    file: onlyPositional(positionals, "FILE"),
    markdown: values.markdown,
  };
}

async function report(a: ReportArguments, io: CliIo): Promise<number> {
  if (a.html !== undefined) return await writeHtml(a, a.html, io);
  const text = await readFlagFile(a.file, "FILE");
  const parsed = readContextReport(text, a.file);
  io.out(a.markdown ? reportMarkdown(parsed) : reportText(parsed));
  return ExitCode.ok;
}

async function writeHtml(
  a: ReportArguments,
  out: string,
  io: CliIo,
): Promise<number> {
  const file = await readReportFile(a.file);
  const requests = a.requests === undefined
    ? undefined
    : await RequestLogReader.open(a.requests);
  const html = await htmlReport({
    id: "r1",
    name: a.file.split("/").pop() ?? a.file,
    where: a.file,
    report: file,
    ...(requests === undefined ? {} : { requests }),
  });
  const path = resolve(out);
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temp, html);
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw new UsageError(
      "usage",
      `Cannot write ${path}: ${error instanceof Error ? error.message : error}`,
    );
  }
  io.err(
    `loom report: wrote ${path} (${
      new TextEncoder().encode(html).byteLength.toLocaleString("en-US")
    } bytes)\n`,
  );
  return ExitCode.ok;
}

/** `loom report`: exit 0, or 2 for bad usage or a file that is no report. */
export const reportCommand: Command = commandOf(parseReportArguments, report);
