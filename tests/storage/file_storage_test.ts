// The storage conformance suite on the folder back-end (`file:DIR`), plus
// what only folders have: today's layout, kept byte for byte.
import assert from "node:assert/strict";
import { conformance } from "./_conformance.ts";
import { folderSession } from "../../lib/storage/file_storage.ts";

conformance({
  kind: "file",
  url: (base) => Promise.resolve(`file:${base}/store`),
  readRaw: async (url, name) =>
    (await Deno.readTextFile(`${url.slice(5)}/${name}/journal.jsonl`))
      .split("\n").filter((line) => line !== ""),
  writeRaw: (url, name, records) =>
    Deno.writeTextFile(
      `${url.slice(5)}/${name}/journal.jsonl`,
      records.map((r) => `${r}\n`).join(""),
    ),
  deleteBodyRaw: (url, name, sha256) =>
    Deno.remove(`${url.slice(5)}/${name}/tool-results/${sha256}.txt`),
  tearRaw: (url, name) =>
    Deno.writeTextFile(
      `${url.slice(5)}/${name}/journal.jsonl`,
      '{"seq":999,"type":"results","resu',
      { append: true },
    ),
  test: (name, fn) => Deno.test(name, fn),
});

Deno.test("folderSession() keeps today's layout: journal.jsonl, tool-results/<sha256>.txt and lock", async () => {
  const dir = `${await Deno.makeTempDir()}/s`;
  const slot = folderSession(dir);
  await slot.prepare();
  await slot.journal.append(0, ['{"seq":0}']);
  await slot.bodies.put("a".repeat(64), new TextEncoder().encode("body"));
  const lease = await slot.acquireLease();
  assert.equal(await Deno.readTextFile(`${dir}/journal.jsonl`), '{"seq":0}\n');
  assert.equal(
    await Deno.readTextFile(`${dir}/tool-results/${"a".repeat(64)}.txt`),
    "body",
  );
  assert.match(await Deno.readTextFile(`${dir}/lock`), /"pid":\d+/);
  await lease.release();
  await Deno.writeTextFile(`${dir}/journal.jsonl`, '{"seq":0}\n{"torn');
  assert.deepEqual(await slot.journal.read(), {
    records: ['{"seq":0}'],
    end: 1,
    torn: 6,
  });
  assert.equal(await slot.journal.cutTorn(), 6);
  assert.equal(await Deno.readTextFile(`${dir}/journal.jsonl`), '{"seq":0}\n');
  await Deno.remove(dir, { recursive: true });
});

Deno.test("two folder writers beginning one journal at the same moment both append, neither told of a conflict", async () => {
  // The writer that created the file could find the other's records in it
  // before it took the lock; it once answered journal_conflict to an extend,
  // which appends after whatever is there. The window is narrow: many rounds.
  const dir = await Deno.makeTempDir({ prefix: "loom-journal-race-" });
  try {
    for (let round = 0; round < 300; round += 1) {
      const slots = [
        folderSession(`${dir}/${round}`),
        folderSession(`${dir}/${round}`),
      ];
      await slots[0]!.prepare();
      const appended = await Promise.all(
        slots.map((slot, w) => slot.journal.extend(0, () => [`{"w":${w}}`])),
      );
      assert.deepEqual(appended.map((a) => a.appended.length), [1, 1]);
      const kept = await folderSession(`${dir}/${round}`).journal.read();
      assert.deepEqual(new Set(kept.records), new Set(['{"w":0}', '{"w":1}']));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
