/**
 * `loom report --html`: one run as the page of `loom view`, in a single
 * self-contained file — the page's script, style and the run's data
 * inline, nothing fetched, so it opens offline, as a CI artifact or
 * attached to an issue. The data is the run's detail in columns (a few
 * dozen bytes a request); request bodies only when a request log is given,
 * and only those whose bytes match the report.
 *
 * @module
 */
import type { ViewSource } from "./inputs.ts";
import { viewPage } from "./page.ts";
import { ViewApi } from "./view_api.ts";

/**
 * The page of one run, as one HTML document.
 *
 * @param run The run (a report, with its request log when given).
 * @returns The HTML document.
 *
 * @example
 * ```ts
 * import { htmlReport } from "./html_report.ts";
 * import { ContextReportBuilder } from "../briefing/context_report.ts";
 * import assert from "node:assert/strict";
 * const report = new ContextReportBuilder("bounded").build({ stop: "completed", detail: "<b>done</b>" });
 * const html = await htmlReport({ id: "r1", name: "report.json", where: "report.json", report: { kind: "context", report } });
 * assert.ok(!html.includes("<b>done"));
 * assert.match(html, /Content-Security-Policy/);
 * ```
 */
export async function htmlReport(run: ViewSource): Promise<string> {
  const api = new ViewApi([run]);
  const detail = api.detail(run.id).body as {
    summary: unknown;
    timeline: { bytes: readonly number[] } | null;
  };
  let bodies: Record<string, string> | undefined;
  if (run.requests !== undefined && detail.timeline !== null) {
    bodies = {};
    for (let i = 0; i < detail.timeline.bytes.length; i++) {
      const answer = await api.request(run.id, i);
      if (answer.status === 200) {
        bodies[String(i)] = (answer.body as { request: string }).request;
      }
    }
  }
  const data = {
    runs: [detail.summary],
    details: { [run.id]: detail },
    ...(bodies === undefined ? {} : { bodies: { [run.id]: bodies } }),
  };
  return viewPage(data).html;
}
