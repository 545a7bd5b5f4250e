// What `loom view` is given, turned into runs: the grouping of its
// arguments, every session of a store, a folder of sessions, and the
// refusal of inputs that are none of them.
import "../_session_key.ts";
import assert from "node:assert/strict";
import { parseViewArguments } from "../../lib/cli/view.ts";
import { UsageError } from "../../lib/cli/_io.ts";
import { McpSession } from "../../lib/persist/mcp_session.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { loadRuns } from "../../lib/view/load_runs.ts";
import { tempDir } from "../_kit.ts";

Deno.test("parseViewArguments() gives each --record and --requests to the run before it", () => {
  assert.deepEqual(
    parseViewArguments([
      "a-session",
      "--requests",
      "a.jsonl",
      "--report=r.json",
      "--record",
      "r-rec.json",
      "--requests",
      "r.jsonl",
      "--record",
      "alone.json",
      "--port",
      "8123",
    ]),
    {
      runs: [
        { session: "a-session", requests: "a.jsonl" },
        { report: "r.json", record: "r-rec.json", requests: "r.jsonl" },
        { record: "alone.json" },
      ],
      hostname: "127.0.0.1",
      port: 8123,
    },
  );
  for (
    const bad of [
      ["--requests", "x.jsonl"],
      ["--host", "0.0.0.0"],
      ["--port", "70000"],
      ["--nope"],
    ]
  ) {
    assert.throws(() => parseViewArguments(bad), UsageError, bad.join(" "));
  }
});

Deno.test("loadRuns() takes every session of a store, or each session of a folder, and refuses what is none", async () => {
  await using dir = await tempDir();
  const url = `sqlite:${dir.path}/store.db`;
  const results = new ResultStore();
  const d = await results.put("x", {
    origin: "fs/read x",
    capture: "complete",
  });
  for (const name of ["alpha", "beta"]) {
    const session = await McpSession.open(name, { store: url });
    await session.save(results.get(d.result!)!);
    await session.close();
    const folder = await McpSession.open(`${dir.path}/folders/${name}`, {});
    await folder.save(results.get(d.result!)!);
    await folder.close();
  }
  {
    await using stored = await loadRuns([], url);
    assert.deepEqual(stored.runs.map((r) => [r.id, r.name]), [
      ["r1", "alpha"],
      ["r2", "beta"],
    ]);
  }
  {
    await using folders = await loadRuns([{ session: `${dir.path}/folders` }]);
    assert.deepEqual(folders.runs.map((r) => r.name), ["alpha", "beta"]);
  }
  await assert.rejects(
    loadRuns([{ session: `${dir.path}/folders`, requests: "x.jsonl" }]),
    /holds 2 sessions/,
  );
  await Deno.writeTextFile(`${dir.path}/no.json`, '{"format": "other"}');
  await assert.rejects(
    loadRuns([{ report: `${dir.path}/no.json` }]),
    (e: unknown) => (e as { code?: string }).code === "report_invalid",
  );
  await assert.rejects(
    loadRuns([{
      report: `${dir.path}/store.db`,
      requests: `${dir.path}/no.json`,
    }]),
  );
});
