// SessionReader: a gateway's, an SDK adapter's and a slice's session read
// for the viewer — its kind, its results, each body verified when asked
// for — from a folder or a store, with nothing written.
import "../_session_key.ts";
import assert from "node:assert/strict";
import { McpSession } from "../../lib/persist/mcp_session.ts";
import { SessionReader } from "../../lib/persist/session_reader.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { tempDir } from "../_kit.ts";
import { makeRun } from "../view/_runs.ts";

const results = new ResultStore();

/** A result with the next id of this file's one store. */
async function stored(text: string, origin: string) {
  const store = results;
  const d = await store.put(text, { origin, capture: "complete" });
  return store.get(d.result!)!;
}

Deno.test("SessionReader reads a gateway's session in a SQLite store: kept bodies verified, recalled ones named, the database unchanged", async () => {
  await using dir = await tempDir();
  const url = `sqlite:${dir.path}/store.db`;
  await Deno.mkdir(`${dir.path}/root`);
  const gateway = await McpSession.open("team", {
    root: `${dir.path}/root`,
    store: url,
  });
  const file = await stored('{"rows": [1, 2, 3]}', "fs/read_file text");
  const page = await stored("fresh page", "web/fetch text");
  await gateway.save(file);
  await gateway.save(page, {
    recall: { server: "web", tool: "fetch", part: "content[0]" },
  });
  await gateway.close();
  const before = await Deno.readFile(`${dir.path}/store.db`);
  const reader = await SessionReader.open("team", { store: url });
  try {
    const reading = reader.reading;
    assert.equal(reading.kind, "gateway");
    assert.equal(reading.name, "team");
    assert.deepEqual(
      reading.results.map((r) => [r.id, r.tool, r.source]),
      [[file.id, "fs/read_file", "persisted"], [
        page.id,
        "web/fetch",
        "recall",
      ]],
    );
    const kept = await reader.body(file.id);
    assert.ok(kept.ok);
    assert.equal(
      new TextDecoder().decode(kept.result.bytes),
      '{"rows": [1, 2, 3]}',
    );
    const recalled = await reader.body(page.id);
    assert.ok(!recalled.ok);
    assert.match(recalled.reason, /was not kept/);
    assert.equal((await reader.body("result-9")).ok, false);
  } finally {
    await reader.close();
  }
  assert.deepEqual(await Deno.readFile(`${dir.path}/store.db`), before);
});

Deno.test("SessionReader tells an adapter's session by its missing root, and refuses a body changed on disk", async () => {
  await using dir = await tempDir();
  const session = `${dir.path}/adapter`;
  const adapter = await McpSession.open(session, {});
  const result = await stored("tool output\n".repeat(10), "search text");
  await adapter.save(result);
  await adapter.close();
  await Deno.writeTextFile(
    `${session}/tool-results/${result.sha256}.txt`,
    "forged output\n".repeat(10),
  );
  const reader = await SessionReader.open(session);
  try {
    assert.equal(reader.reading.kind, "adapter");
    const body = await reader.body(result.id);
    assert.ok(!body.ok);
    assert.match(body.reason, /does not match its SHA-256/);
  } finally {
    await reader.close();
  }
});

Deno.test("SessionReader folds a slice's session: its requests, tests and results as the report has them", async () => {
  await using dir = await tempDir();
  const run = await makeRun(dir.path, { steps: 10 });
  const reader = await SessionReader.open(run.sessionPath);
  try {
    const reading = reader.reading;
    assert.equal(reading.kind, "slice");
    assert.equal(reading.steps, 10);
    assert.deepEqual(
      reading.requests,
      run.report.requests.map((r) => ({
        ...r,
        elapsed_ms: reading.requests[run.report.requests.indexOf(r)]!
          .elapsed_ms,
      })),
    );
    assert.deepEqual(reading.tests, run.report.tests);
    assert.ok(reading.results.length > 0);
  } finally {
    await reader.close();
  }
});
