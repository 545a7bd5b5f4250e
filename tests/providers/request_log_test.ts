/** `--record-requests PATH`: every request as sent, one line per report line. */
import assert from "node:assert/strict";
import { readContextReport } from "../../lib/briefing/context_report_schema.ts";
import { runSlice } from "../../lib/slice/run.ts";
import { INTENTS, recordingPath } from "../e2e/_workspace.ts";
import { fixtureCopy } from "../_kit.ts";

const encoder = new TextEncoder();

Deno.test("a run with recordRequests logs each request with the report's bytes, line and phase", async () => {
  await using copy = await fixtureCopy("bugfix");
  const log = `${copy.root}/requests.jsonl`;
  const reportPath = `${copy.root}/report.json`;
  const outcome = await runSlice(
    copy.request(`recorded:${recordingPath("bugfix")}`, 30),
    {
      contextPolicy: "bounded",
      recordRequests: log,
      contextReport: reportPath,
    },
  );
  assert.equal(outcome.stop, "completed");
  const report = readContextReport(
    await Deno.readTextFile(reportPath),
    reportPath,
  );
  const [header, ...lines] = (await Deno.readTextFile(log)).split("\n")
    .filter((l) => l !== "");
  assert.deepEqual(JSON.parse(header!), { format: "loom-requests/1" });
  assert.equal(lines.length, report.requests.length);
  for (const [i, line] of lines.entries()) {
    const prefix = `{"line":${i + 1},"phase":"${report.requests[i]!.phase}",` +
      `"request":`;
    assert.ok(line.startsWith(prefix), line.slice(0, 60));
    // The request's bytes, as written, are the report's request bytes.
    const body = line.slice(prefix.length, -1);
    assert.equal(
      encoder.encode(body).byteLength,
      report.requests[i]!.request_bytes,
    );
    const request = JSON.parse(body);
    assert.deepEqual(Object.keys(request), [
      "system",
      "messages",
      "tool",
      "tool_choice",
    ]);
  }
  // Prompt text is what this file holds, on purpose.
  assert.ok(lines[0]!.includes(JSON.stringify(INTENTS.bugfix).slice(1, 30)));
});

Deno.test("an unwritable request log stops the run with a provider error", async () => {
  await using copy = await fixtureCopy("bugfix");
  const outcome = await runSlice(
    copy.request(`recorded:${recordingPath("bugfix")}`, 3),
    {
      contextPolicy: "bounded",
      recordRequests: `${copy.root}/missing/requests.jsonl`,
    },
  );
  assert.equal(outcome.stop, "provider_error");
  assert.match(outcome.detail, /^request_log_unwritable: Cannot write/);
});
