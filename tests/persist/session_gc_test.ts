import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { collectGarbage } from "../../lib/persist/session_gc.ts";
import { SessionError } from "../../lib/persist/session_error.ts";
import {
  createSession,
  type Layout,
  reload,
  rewriteJournal,
  savedSample,
  snapshotTree,
  tempLayout,
  TEST_OUTPUT,
} from "./_session.ts";

const ORPHAN = `${"b".repeat(64)}.txt`;

/** The sample run saved, plus an orphan, two temp files and a foreign file. */
async function withGarbage(): Promise<Layout> {
  const layout = await savedSample();
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
  await using layout = await withGarbage();
  const before = await snapshotTree(layout.base);
  const report = await collectGarbage(layout.root, {
    dryRun: true,
    keyFile: layout.keyFile,
  });
  assert.equal(report.dryRun, true);
  assert.deepEqual(report.deleted, [
    ".tmp-5678",
    "tool-results/.tmp-1234",
    `tool-results/${ORPHAN}`,
  ]);
  assert.equal(report.kept, 1);
  assert.deepEqual(report.ignored, ["tool-results/notes.md"]);
  assert.deepEqual(await snapshotTree(layout.base), before);
});

Deno.test("collectGarbage() deletes only unreferenced files", async () => {
  await using layout = await withGarbage();
  const report = await gc(layout);
  assert.equal(report.deleted.length, 3);
  assert.ok(report.freedBytes > 0);
  const left = [...(await snapshotTree(layout.root)).keys()].sort();
  assert.equal(left.length, 4, left.join(","));
  assert.ok(left.includes("journal.jsonl"));
  assert.ok(left.includes("tool-results/notes.md"));
  assert.ok(left.some((n) => /^tool-results\/[0-9a-f]{64}\.txt$/.test(n)));
  // The session still loads: every referenced file is there.
  const loaded = await reload(layout);
  assert.equal(loaded.results.length, 3);
});

Deno.test("collectGarbage() deletes nothing when the journal does not verify", async (t) => {
  for (
    const [code, damage] of [
      [
        "session_invalid",
        (l: Layout) => Deno.writeTextFile(`${l.root}/journal.jsonl`, "{\n"),
      ],
      // A catalogue entry dropped by hand would make its file look orphaned.
      ["session_tampered", (l: Layout) =>
        rewriteJournal(l.root, (records) => {
          records[1]!.results = {};
          return records;
        })],
    ] as const
  ) {
    await t.step(code, async () => {
      await using layout = await withGarbage();
      await damage(layout);
      const before = await snapshotTree(layout.base);
      await assert.rejects(
        gc(layout),
        (e: unknown) => e instanceof SessionError && e.code === code,
      );
      assert.deepEqual(await snapshotTree(layout.base), before);
    });
  }
});

Deno.test("collectGarbage() refuses a session a run holds", async () => {
  await using layout = await tempLayout();
  const session = await createSession(layout);
  await assert.rejects(
    gc(layout),
    (e: unknown) => e instanceof SessionError && e.code === "session_locked",
  );
  await session.close();
});

Deno.test("collectGarbage() leaves a symlink alone", async () => {
  await using layout = await withGarbage();
  await Deno.writeTextFile(`${layout.base}/target.txt`, "keep me");
  await Deno.symlink(
    `${layout.base}/target.txt`,
    `${layout.root}/tool-results/${"c".repeat(64)}.txt`,
  );
  const report = await gc(layout);
  assert.ok(report.ignored.includes(`tool-results/${"c".repeat(64)}.txt`));
  assert.equal(await Deno.readTextFile(`${layout.base}/target.txt`), "keep me");
});

Deno.test("collectGarbage() treats inline results as referencing no file", async () => {
  await using layout = await savedSample({
    overrides: { "tests.run": 1_000_000 },
  });
  const { results, info } = layout;
  assert.equal(info.inline, 1);
  // A file of the same digest, e.g. from a crashed writer, is not referenced.
  await Deno.writeTextFile(
    `${layout.root}/tool-results/${sha(TEST_OUTPUT)}.txt`,
    TEST_OUTPUT,
  );
  const report = await gc(layout);
  assert.deepEqual(report.deleted, [`tool-results/${sha(TEST_OUTPUT)}.txt`]);
  assert.equal(report.kept, 0);
  const loaded = await reload(layout);
  assert.deepEqual(
    loaded.results.map((r) => r.bytes),
    [...results.stored()].map((r) => r.bytes),
  );
  assert.equal((await gc(layout)).deleted.length, 0);
});

function gc(layout: Layout) {
  return collectGarbage(layout.root, { keyFile: layout.keyFile });
}

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
