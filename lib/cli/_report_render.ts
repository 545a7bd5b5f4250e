/**
 * A context report for a reader, as GitHub-flavoured Markdown (the job
 * summary of the GitHub Action, a pull-request comment) or as terminal text:
 * outcome and stop reason, steps, the revision the tests validated, each
 * test run and its exit, request bytes, cache reads and writes, estimated
 * cost and lookups. Everything comes from the report alone; the one string
 * a model can shape (the stop detail quotes refusal reasons and provider
 * errors) is escaped so it can neither format nor link anything.
 *
 * @module
 */
import type { ContextReport } from "../briefing/context_report.ts";
import { PART_NAMES } from "../briefing/part_bytes.ts";
import { usageCost } from "../cost/usage_cost.ts";
import { displayText, formatDuration } from "../display.ts";
import { ExitCode, exitCodeOf } from "./_io.ts";

/** One labelled figure of the report. */
interface Row {
  readonly label: string;
  /** Markdown form (code spans and escaping applied). */
  readonly markdown: string;
  /** Terminal form. */
  readonly text: string;
}

/**
 * A value shown as a code span in Markdown (`rev-2-…`), plain on a
 * terminal. Nothing inside a code span is formatting; only a backtick could
 * end it (the fence is longer than any run inside) and a pipe a table cell
 * (GFM splits cells even there, unless it is escaped).
 */
function code(value: string): { markdown: string; text: string } {
  const shown = displayText(value, 1000);
  const longest = Math.max(
    0,
    ...(shown.match(/`+/g) ?? []).map((r) => r.length),
  );
  const fence = "`".repeat(longest + 1);
  const pad = longest > 0 ? " " : "";
  return {
    markdown: `${fence}${pad}${shown.replace(/\|/g, "\\|")}${pad}${fence}`,
    text: shown,
  };
}

function plain(value: string): { markdown: string; text: string } {
  return { markdown: markdownText(value), text: displayText(value, 1000) };
}

/**
 * Untrusted text as inert Markdown: one line, control characters escaped,
 * HTML special characters as entities, and backslash escapes for the
 * punctuation that starts an emphasis, a link or image (`[`, `!`), a table
 * cell, a heading reference, strikethrough, math (`$`), a mention (`@`) or
 * an autolink or emoji code (`:`), so nothing but text comes out of it.
 */
function markdownText(text: string): string {
  return displayText(text, 1000)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_\[\]#!|~:@$]/g, (c) => `\\${c}`)
    // GFM links a bare www. name too.
    .replace(/\b(www)\./gi, "$1\\.");
}

/** `176,029`. */
function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function plural(n: number, one: string): string {
  return `${thousands(n)} ${one}${n === 1 ? "" : "s"}`;
}

/** What became of the run: completed, stopped or failed (by its exit code). */
function verdict(report: ContextReport): "completed" | "stopped" | "failed" {
  const exit = exitCodeOf(report.outcome.stop);
  return exit === ExitCode.ok
    ? "completed"
    : exit === ExitCode.stopped
    ? "stopped"
    : "failed";
}

const MARK = { completed: "✅", stopped: "⏸️", failed: "❌" } as const;

function title(report: ContextReport): string {
  const v = verdict(report);
  return v === "completed" ? "completed" : `${v} (${report.outcome.stop})`;
}

function validatedRow(report: ContextReport): Row {
  const label = "Tests validated";
  if (report.tests_validate_latest_revision) {
    if (report.revision === null) {
      return { label, ...plain("the unedited workspace (no edit)") };
    }
    const rev = code(report.revision);
    return {
      label,
      markdown: `${rev.markdown} (the latest revision)`,
      text: `${rev.text} (the latest revision)`,
    };
  }
  const last = report.tests.at(-1);
  if (last === undefined) return { label, ...plain("nothing: no test run") };
  const on = last.revision ?? "the unedited workspace";
  const why = last.exit_code !== 0 || last.timed_out
    ? "the last test run failed"
    : `the last passing run tested ${on}`;
  const latest = report.revision ?? "the unedited workspace";
  return { label, ...plain(`not the latest revision ${latest}: ${why}`) };
}

/**
 * Version 2 reports: where the request bytes went, the largest parts
 * first (a version 1 report has no such row).
 */
function partsRow(report: ContextReport): Row[] {
  const lines = report.requests.filter((r) => r.bytes_by_part !== undefined);
  if (lines.length === 0) return [];
  const sums = PART_NAMES.map((name) => ({
    name,
    bytes: lines.reduce((n, r) => n + (r.bytes_by_part?.[name] ?? 0), 0),
  }));
  const total = sums.reduce((n, p) => n + p.bytes, 0);
  const shown = sums.filter((p) => p.bytes > 0).sort((a, b) =>
    b.bytes - a.bytes
  ).slice(0, 4).map((p) =>
    `${p.name.replace(/_/g, " ")} ${
      total === 0 ? 0 : Math.round((p.bytes / total) * 100)
    }%`
  );
  return [{ label: "Bytes by part", ...plain(shown.join(", ")) }];
}

function usageRow(report: ContextReport): Row {
  const lines = report.requests;
  const reported = lines.filter((r) =>
    r.cache_read_tokens !== null || r.cache_write_tokens !== null
  );
  if (reported.length === 0) {
    return {
      label: "Cache reads / writes",
      ...plain(
        lines.length === 0 ? "no model call" : "not reported by the provider",
      ),
    };
  }
  const sum = (key: "cache_read_tokens" | "cache_write_tokens") =>
    lines.reduce((n, r) => n + (r[key] ?? 0), 0);
  return {
    label: "Cache reads / writes",
    ...plain(
      `${thousands(sum("cache_read_tokens"))} tokens read, ${
        thousands(sum("cache_write_tokens"))
      } written`,
    ),
  };
}

function costRow(report: ContextReport): Row {
  const cost = usageCost(report.model, report.requests);
  if (cost.kind === "unpriced") {
    return { label: "Estimated cost", ...plain(`not priced: ${cost.reason}`) };
  }
  const partial = cost.calls_reported < cost.calls
    ? `; ${cost.calls_reported} of ${cost.calls} calls reported usage`
    : "";
  return {
    label: "Estimated cost",
    ...plain(
      `$${
        cost.dollars.toFixed(4)
      } (${cost.priced_as} at ${cost.prices}${partial})`,
    ),
  };
}

function rows(report: ContextReport): Row[] {
  const bytes = report.requests.map((r) => r.request_bytes);
  const total = bytes.reduce((n, b) => n + b, 0);
  const peak = bytes.reduce((n, b) => Math.max(n, b), 0);
  const stop = code(report.outcome.stop);
  return [
    {
      label: "Outcome",
      markdown: `${MARK[verdict(report)]} ${stop.markdown}`,
      text: stop.text,
    },
    { label: "Steps", ...plain(thousands(report.steps)) },
    {
      label: "Revision",
      ...(report.revision === null
        ? plain("none (no edit)")
        : code(report.revision)),
    },
    validatedRow(report),
    {
      label: "Model",
      ...plain(
        `${report.model ?? "not named"}, ${report.policy} context policy`,
      ),
    },
    { label: "Model calls", ...plain(thousands(report.model_calls)) },
    {
      label: "Request bytes",
      ...plain(`${thousands(total)} in all, ${thousands(peak)} at most`),
    },
    ...partsRow(report),
    usageRow(report),
    costRow(report),
    {
      label: "Lookups",
      ...plain(
        `${thousands(report.retrievals)}; ${
          plural(report.checkpoints, "checkpoint")
        }`,
      ),
    },
    { label: "Time", ...plain(formatDuration(report.elapsed_ms)) },
  ];
}

function testResult(t: ContextReport["tests"][number]): string {
  if (t.timed_out) return "timed out";
  return t.exit_code === 0 ? "passed" : "failed";
}

/**
 * The report as GitHub-flavoured Markdown: a heading with the outcome, the
 * stop detail (escaped), a table of figures and a table of test runs.
 *
 * @param report The context report.
 * @returns Markdown ending in a newline.
 */
export function reportMarkdown(report: ContextReport): string {
  const out = [
    `### Loom slice ${title(report)}`,
    "",
    `> ${markdownText(report.outcome.detail)}`,
    "",
    "| | |",
    "| --- | --- |",
    ...rows(report).map((r) => `| ${r.label} | ${r.markdown} |`),
    "",
  ];
  if (report.tests.length === 0) {
    out.push("No test run.", "");
  } else {
    out.push(
      "| Step | Tested revision | Exit | Result |",
      "| ---: | --- | ---: | --- |",
      ...report.tests.map((t) =>
        `| ${t.step} | ${
          t.revision === null ? "the unedited workspace" : code(t.revision)
            .markdown
        } | ${t.exit_code} | ${testResult(t)} |`
      ),
      "",
    );
  }
  return out.join("\n");
}

/**
 * The report as terminal text: the outcome line, the detail, one line per
 * figure and per test run.
 *
 * @param report The context report.
 * @returns Text ending in a newline.
 */
export function reportText(report: ContextReport): string {
  const figures = rows(report);
  const width = Math.max(...figures.map((r) => r.label.length));
  const out = [
    `loom slice ${title(report)}`,
    `  ${displayText(report.outcome.detail, 1000)}`,
    ...figures.map((r) => `  ${r.label.padEnd(width)}  ${r.text}`),
  ];
  if (report.tests.length === 0) out.push("  No test run.");
  for (const t of report.tests) {
    out.push(
      `  test at step ${t.step}: exit ${t.exit_code} on ${
        t.revision ?? "the unedited workspace"
      } (${testResult(t)})`,
    );
  }
  return out.join("\n") + "\n";
}
