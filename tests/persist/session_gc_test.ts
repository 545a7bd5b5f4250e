import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { collectGarbage } from "../../lib/persist/session_gc.ts";
import { SessionError } from "../../lib/persist/session_error.ts";
import { SessionStore } from "../../lib/persist/session_store.ts";
import {
  sampleRun,
  snapshotOf,
  snapshotTree,
  tempLayout,
  TEST_OUTPUT,
} from "./_session.ts";

const ORPHAN = `${"b".repeat(64)}.txt`;

async function withGarbage() {
  const layout = await tempLayout();
  const { snapshot } = await sampleRun();
  const session = await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  });
  await session.save(snapshot);
  await Deno.writeTextFile(
    `${layout.root}/tool-results/${ORPHAN}`,
    "orphaned output",
  );
  await Deno.writeTextFile(
    `${layout.root}/tool-results/.tmp-1234`,
    "half written",
  );
  await Deno.writeTextFile(`${layout.root}/.tmp-5678`, "half written session");
  await Deno.writeTextFile(`${layout.root}/tool-results/notes.md`, "not ours");
  return layout;
}

Deno.test("collectGarbage() with dryRun deletes nothing", async () => {
  const layout = await withGarbage();
  const before = await snapshotTree(layout.base);
  const report = await collectGarbage(layout.root, { dryRun: true });
  assert.equal(report.dryRun, true);
  assert.deepEqual(report.deleted, [
    ".tmp-5678",
    "tool-results/.tmp-1234",
    `tool-results/${ORPHAN}`,
  ]);
  assert.equal(report.kept, 1);
  assert.deepEqual(report.ignored, ["tool-results/notes.md"]);
  assert.deepEqual(await snapshotTree(layout.base), before);
  await layout.cleanup();
});

Deno.test("collectGarbage() deletes only unreferenced files", async () => {
  const layout = await withGarbage();
  const report = await collectGarbage(layout.root);
  assert.equal(report.deleted.length, 3);
  assert.ok(report.freedBytes > 0);
  const left = [...(await snapshotTree(layout.root)).keys()].sort();
  assert.equal(left.length, 4, left.join(","));
  assert.ok(left.includes("session.json"));
  assert.ok(left.includes("tool-results/notes.md"));
  assert.ok(left.some((n) => /^tool-results\/[0-9a-f]{64}\.txt$/.test(n)));
  // The session still loads: every referenced file is there.
  const loaded = await (await SessionStore.open(layout.root)).load();
  assert.equal(loaded.results.length, 3);
  await layout.cleanup();
});

Deno.test("collectGarbage() deletes nothing when session.json is unreadable", async () => {
  const layout = await withGarbage();
  await Deno.writeTextFile(`${layout.root}/session.json`, "{");
  const before = await snapshotTree(layout.base);
  await assert.rejects(
    collectGarbage(layout.root),
    (e: unknown) => e instanceof SessionError && e.code === "session_invalid",
  );
  assert.deepEqual(await snapshotTree(layout.base), before);
  await layout.cleanup();
});

Deno.test("collectGarbage() leaves a symlink alone", async () => {
  const layout = await withGarbage();
  await Deno.writeTextFile(`${layout.base}/target.txt`, "keep me");
  await Deno.symlink(
    `${layout.base}/target.txt`,
    `${layout.root}/tool-results/${"c".repeat(64)}.txt`,
  );
  const report = await collectGarbage(layout.root);
  assert.ok(report.ignored.includes(`tool-results/${"c".repeat(64)}.txt`));
  assert.equal(await Deno.readTextFile(`${layout.base}/target.txt`), "keep me");
  await layout.cleanup();
});

Deno.test("collectGarbage() treats inline results as referencing no file", async () => {
  const layout = await tempLayout();
  const { results, records } = await sampleRun();
  const session = await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  });
  await session.save(snapshotOf(results, records));
  // A raised threshold keeps the test output inline: its file is unreferenced.
  const info = await session.save(
    snapshotOf(results, records, { overrides: { "tests.run": 1_000_000 } }),
  );
  assert.equal(info.inline, 1);
  assert.equal(info.persisted, 0);
  const report = await collectGarbage(layout.root);
  assert.deepEqual(report.deleted, [`tool-results/${sha(TEST_OUTPUT)}.txt`]);
  assert.equal(report.kept, 0);
  assert.deepEqual(report.ignored, []);
  const loaded = await (await SessionStore.open(layout.root)).load();
  assert.deepEqual(
    loaded.results.map((r) => r.bytes),
    [...results.stored()].map((r) => r.bytes),
  );
  assert.equal((await collectGarbage(layout.root)).deleted.length, 0);
  await layout.cleanup();
});

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
