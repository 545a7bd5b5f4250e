import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { ActionRecord } from "../../lib/briefing/report.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { SessionError } from "../../lib/persist/session_error.ts";
import { saveSnapshot, SessionStore } from "../../lib/persist/session_store.ts";
import { runStateOf } from "../../lib/persist/session_verify.ts";
import {
  catalogueOf,
  createSession,
  exists,
  journalOf,
  type Layout,
  openSession,
  reload,
  sampleRun,
  savedSample,
  snapshotOf,
  snapshotTree,
  tempLayout,
  TEST_OUTPUT,
  testsRecord,
} from "./_session.ts";

const BODIES = [
  "INSPECTED_BODY",
  "Readme body text",
  "TEST_OUTPUT_BODY",
  "EDIT_BODY",
  "expected 3, got 4",
];

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

async function allText(
  dir: string,
  skip: (name: string) => boolean = () => false,
): Promise<string> {
  let out = "";
  for (const [name, value] of await snapshotTree(dir)) {
    if (!skip(name)) out += `${name}\n${value}\n`;
  }
  return out;
}

/** A SessionError with this code whose message matches and that names a file. */
function isSessionError(code: string, message?: RegExp) {
  return (e: unknown) =>
    e instanceof SessionError && e.code === code &&
    typeof e.file === "string" &&
    (message === undefined || message.test(e.message));
}

Deno.test("saveSnapshot() and load() restore results and events with the same ids and digests", async (t) => {
  await using layout = await savedSample();
  const { results, records, info } = layout;

  await t.step(
    "externally bounded results are persisted, self-bounding ones catalogued",
    () => {
      assert.deepEqual(info, {
        written: 1,
        persisted: 1,
        inline: 0,
        reread: 2,
        skipped: [],
      });
    },
  );

  await t.step("file names come only from digests", async () => {
    const names =
      (await Array.fromAsync(Deno.readDir(`${layout.root}/tool-results`)))
        .map((e) => e.name);
    assert.deepEqual(names, [`${sha(TEST_OUTPUT)}.txt`]);
    assert.equal(
      await Deno.readTextFile(
        `${layout.root}/tool-results/${sha(TEST_OUTPUT)}.txt`,
      ),
      TEST_OUTPUT,
    );
  });

  await t.step("the journal holds no body and no preview", async () => {
    const text = await Deno.readTextFile(`${layout.root}/journal.jsonl`);
    for (const body of BODIES) assert.equal(text.includes(body), false, body);
    assert.equal(text.includes("preview"), false);
    const journal = await journalOf(layout.root);
    assert.deepEqual(journal.map((r) => [r.seq, r.type]), [
      [0, "header"],
      [1, "step"],
    ]);
    assert.equal(journal[0]?.format, "loom-journal/1");
    assert.match(journal[1]?.mac, /^[0-9a-f]{64}$/);
    const catalogue = await catalogueOf(layout.root);
    assert.deepEqual(catalogue["result-1"].source, {
      reread: { path: "src/a.ts" },
    });
    assert.deepEqual(catalogue["result-3"].source, {
      persisted: `tool-results/${sha(TEST_OUTPUT)}.txt`,
    });
  });

  await t.step(
    "inspected bodies are written nowhere under the root",
    async () => {
      const text = await allText(
        layout.root,
        (name) => name.startsWith("tool-results/"),
      );
      for (const body of ["INSPECTED_BODY", "Readme body text"]) {
        assert.equal(text.includes(body), false, body);
      }
      const results = await allText(`${layout.root}/tool-results`);
      assert.equal(results.includes("INSPECTED_BODY"), false);
    },
  );

  await t.step("no temp file and no lock is left behind", async () => {
    const names = [...(await snapshotTree(layout.root)).keys()];
    assert.deepEqual(names.sort(), [
      "journal.jsonl",
      "tool-results/",
      `tool-results/${sha(TEST_OUTPUT)}.txt`,
    ]);
  });

  await t.step(
    "load() gives back the same results, records and state",
    async () => {
      const loaded = await reload(layout);
      assert.deepEqual(
        loaded.results.map((r) => [r.id, r.sha256, r.origin, r.capture]),
        [...results.stored()].map((r) => [r.id, r.sha256, r.origin, r.capture]),
      );
      for (const r of loaded.results) {
        assert.deepEqual(r.bytes, results.get(r.id)?.bytes);
      }
      assert.deepEqual(loaded.unavailable, []);
      // Previews are rebuilt from the restored bytes, arguments come back compact.
      const expected = structuredClone(records);
      (expected[2]!.arguments as { files: unknown[] }).files = [{
        path: "/etc/passwd",
        utf8_bytes: 9,
        sha256: sha("EDIT_BODY"),
        omitted_from_context: true,
      }];
      assert.deepEqual(runStateOf(loaded).records, expected);
      assert.equal(loaded.intent, "Fix the mean");
      assert.equal(loaded.model, "recorded:fixtures/recordings/x.json");
      assert.deepEqual(loaded.test, {
        command: ["deno", "run", "check.ts"],
        timeoutMs: 30_000,
      });
      assert.equal(loaded.state.steps, 3);
      assert.equal(loaded.state.modelCalls, 6);
      assert.equal(loaded.state.refusals, 1);
      assert.equal(loaded.state.modelMs, 1.5);
      assert.equal(loaded.stop, null);
    },
  );

  await t.step("a restored store continues after the highest id", async () => {
    const loaded = await reload(layout);
    const store = new ResultStore();
    for (const r of loaded.results) store.restore(r);
    const next = await store.put("new", { origin: "x", capture: "complete" });
    assert.equal(next.result, "result-4");
  });

  await t.step(
    "the run state goes with a loaded session's state object, not a rebuilt one",
    async () => {
      const loaded = await reload(layout);
      assert.equal(runStateOf({ ...loaded }).records.length, 3);
      assert.throws(
        () => runStateOf({ ...loaded, state: { ...loaded.state } }),
        TypeError,
      );
    },
  );

  await t.step("load() writes nothing", async () => {
    const before = await snapshotTree(layout.base);
    await reload(layout);
    assert.deepEqual(await snapshotTree(layout.base), before);
  });

  await t.step(
    "a later save appends one record with only what is new",
    async () => {
      const store = await openSession(layout);
      const loaded = await store.load();
      const again = new ResultStore();
      for (const r of loaded.results) again.restore(r);
      const before = await Deno.readTextFile(`${layout.root}/journal.jsonl`);
      const info = await saveSnapshot(
        store,
        snapshotOf(again, [...runStateOf(loaded).records], { notes: ["n"] }),
      );
      await store.close();
      assert.deepEqual(info, {
        written: 0,
        persisted: 0,
        inline: 0,
        reread: 0,
        skipped: [],
      });
      const after = await Deno.readTextFile(`${layout.root}/journal.jsonl`);
      assert.ok(after.startsWith(before), "earlier records are untouched");
      const added = (await journalOf(layout.root)).at(-1)!;
      assert.deepEqual(
        [added.seq, added.records, added.results, added.notes],
        [2, [], {}, ["n"]],
      );
    },
  );
});

Deno.test("saveSnapshot() costs the same at every length: one appended line of new items", async () => {
  await using layout = await tempLayout();
  const session = await createSession(layout);
  const results = new ResultStore();
  const records: ActionRecord[] = [];
  const sizes: number[] = [];
  for (let step = 1; step <= 60; step += 1) {
    const output = await results.put(`run ${step} ok\n`, {
      origin: "tests.run x",
      capture: "complete",
    });
    records.push(testsRecord(step, output, 0));
    const before = (await Deno.stat(`${layout.root}/journal.jsonl`)).size;
    await saveSnapshot(session, snapshotOf(results, records));
    sizes.push((await Deno.stat(`${layout.root}/journal.jsonl`)).size - before);
  }
  await session.close();
  // Each record carries one step's items, so its size does not grow.
  const spread = Math.max(...sizes) - Math.min(...sizes);
  assert.ok(spread < 16, `record sizes ${sizes.join(",")}`);
  const loaded = await reload(layout);
  assert.equal(runStateOf(loaded).records.length, 60);
  assert.equal(loaded.results.length, 60);
});

Deno.test("saveSnapshot() never persists a self-bounding result, whatever the overrides", async () => {
  await using layout = await savedSample({
    overrides: {
      "repository.inspect": 1,
      "tests.run": 1,
      "$read_result": 1,
    },
  });
  const { info } = layout;
  assert.equal(info.reread, 2);
  assert.equal(info.persisted, 1);
  const [header] = await journalOf(layout.root);
  assert.deepEqual(header?.overrides, {
    "repository.inspect": 1,
    "tests.run": 1,
    "$read_result": 1,
  });
  const catalogue = await catalogueOf(layout.root);
  assert.deepEqual(
    Object.keys(catalogue).filter((id) => "persisted" in catalogue[id].source),
    ["result-3"],
  );
});

/** Saves the sample run with these overrides; returns what landed on disk. */
async function savedWith(overrides: Record<string, unknown>) {
  const saved = await savedSample({ overrides });
  const text = await Deno.readTextFile(`${saved.root}/journal.jsonl`);
  const files =
    (await Array.fromAsync(Deno.readDir(`${saved.root}/tool-results`)))
      .map((e) => e.name).sort();
  return {
    ...saved,
    text,
    catalogue: await catalogueOf(saved.root),
    files,
  };
}

Deno.test("saveSnapshot() persists an externally bounded result only above its threshold", async (t) => {
  await t.step(
    "above the threshold the body goes to tool-results/",
    async () => {
      await using saved = await savedWith({
        "tests.run": TEST_OUTPUT.length - 1,
      });
      assert.equal(saved.info.persisted, 1);
      assert.equal(saved.info.inline, 0);
      assert.deepEqual(saved.files, [`${sha(TEST_OUTPUT)}.txt`]);
      assert.equal(saved.text.includes("TEST_OUTPUT_BODY"), false);
    },
  );

  await t.step(
    "at the threshold the body stays inline in the journal",
    async () => {
      await using saved = await savedWith({ "tests.run": TEST_OUTPUT.length });
      assert.equal(saved.info.persisted, 0);
      assert.equal(saved.info.inline, 1);
      assert.equal(saved.info.written, 0);
      assert.deepEqual(saved.files, []);
      assert.deepEqual(saved.catalogue["result-3"].source, {
        inline: TEST_OUTPUT,
      });
      assert.equal(saved.catalogue["result-3"].sha256, sha(TEST_OUTPUT));
      assert.equal(saved.text.includes("preview"), false);
      const loaded = await reload(saved);
      assert.deepEqual(
        loaded.results.map((r) => [r.id, r.sha256]),
        [...saved.results.stored()].map((r) => [r.id, r.sha256]),
      );
      assert.deepEqual(
        loaded.results[2]?.bytes,
        saved.results.get("result-3")?.bytes,
      );
      // The preview is rebuilt from the inline body, as it was.
      assert.deepEqual(runStateOf(loaded).records[1], saved.records[1]);
    },
  );

  await t.step(
    "two overrides of the same run write different sets of files",
    async () => {
      await using low = await savedWith({ "tests.run": 1 });
      await using high = await savedWith({ "tests.run": 1_000_000 });
      assert.deepEqual(low.files, [`${sha(TEST_OUTPUT)}.txt`]);
      assert.deepEqual(high.files, []);
      const events = async (l: Layout) =>
        (await journalOf(l.root)).flatMap((r) => r.records ?? []);
      assert.deepEqual(await events(low), await events(high));
      for (const saved of [low, high]) {
        const loaded = await reload(saved);
        assert.deepEqual(
          loaded.results.map((r) => r.bytes),
          [...saved.results.stored()].map((r) => r.bytes),
        );
      }
    },
  );

  await t.step("the threshold counts characters, not bytes", async () => {
    await using layout = await tempLayout();
    const results = new ResultStore();
    const body = "é".repeat(10); // 10 characters, 20 UTF-8 bytes
    const output = await results.put(body, {
      origin: "tests.run x",
      capture: "complete",
    });
    const session = await createSession(layout, { "tests.run": 10 });
    const info = await saveSnapshot(
      session,
      snapshotOf(results, [{
        sequence: 1,
        action: "tests.run",
        arguments: {},
        report: {
          kind: "tests_run",
          exit_code: 0,
          timed_out: false,
          tested_revision: null,
          output,
          confinement: "none",
        },
      }]),
    );
    await session.close();
    assert.equal(info.inline, 1);
    const loaded = await reload(layout);
    assert.equal(new TextDecoder().decode(loaded.results[0]?.bytes), body);
  });
});

Deno.test("saveSnapshot() stores nothing of repository.inspect, whatever its override", async (t) => {
  for (const value of [1, 1_000_000_000, 0, -5, Infinity, "50"]) {
    await t.step(`repository.inspect=${String(value)}`, async () => {
      await using saved = await savedWith({
        "repository.inspect": value,
        "tests.run": 1_000_000,
      });
      assert.equal(saved.info.reread, 2);
      assert.equal(saved.info.inline, 1, "only the test output is inline");
      assert.deepEqual(saved.files, []);
      assert.deepEqual(saved.catalogue["result-1"].source, {
        reread: { path: "src/a.ts" },
      });
      for (const body of ["INSPECTED_BODY", "Readme body text"]) {
        assert.equal(saved.text.includes(body), false, body);
      }
    });
  }
});

Deno.test("saveSnapshot() leaves out results no acknowledged record produced", async () => {
  await using layout = await tempLayout();
  const { results, records } = await sampleRun();
  await results.put("ORPHAN_BODY", {
    origin: "tests.run x",
    capture: "partial",
  });
  const session = await createSession(layout);
  const info = await saveSnapshot(session, snapshotOf(results, records));
  await session.close();
  assert.deepEqual(info.skipped, ["result-4"]);
  assert.equal((await allText(layout.root)).includes("ORPHAN_BODY"), false);
});

Deno.test("SessionStore.load() detects damaged result files with a typed error naming the file", async (t) => {
  /** The saved sample and the file its test output was persisted to. */
  async function saved() {
    const layout = await savedSample();
    return Object.assign(layout, {
      file: `${layout.root}/tool-results/${sha(TEST_OUTPUT)}.txt`,
    });
  }
  async function loadFails(layout: Layout, check: (e: unknown) => boolean) {
    const store = await openSession(layout);
    await assert.rejects(store.load(), check);
    await store.close();
  }

  await t.step("a tampered result file", async () => {
    await using layout = await saved();
    const { file } = layout;
    await Deno.writeTextFile(file, TEST_OUTPUT.replace("got 4", "got 3"));
    const before = await snapshotTree(layout.base);
    await loadFails(
      layout,
      (e: unknown) =>
        isSessionError("result_corrupted", new RegExp(sha(TEST_OUTPUT)))(e) &&
        (e as SessionError).file === file,
    );
    assert.deepEqual(
      await snapshotTree(layout.base),
      before,
      "nothing was overwritten",
    );
  });

  await t.step("a truncated result file", async () => {
    await using layout = await saved();
    const { file } = layout;
    await Deno.writeTextFile(file, "");
    await loadFails(layout, isSessionError("result_corrupted"));
  });

  await t.step("a missing result file", async () => {
    await using layout = await saved();
    const { file } = layout;
    await Deno.remove(file);
    await loadFails(
      layout,
      (e: unknown) =>
        isSessionError("result_missing", new RegExp(sha(TEST_OUTPUT)))(e) &&
        (e as SessionError).file === file,
    );
  });

  await t.step("a result file replaced by a symlink", async () => {
    await using layout = await saved();
    const { file } = layout;
    const elsewhere = `${layout.base}/elsewhere.txt`;
    await Deno.writeTextFile(elsewhere, TEST_OUTPUT);
    await Deno.remove(file);
    await Deno.symlink(elsewhere, file);
    await loadFails(layout, isSessionError("result_corrupted"));
  });
});

Deno.test("SessionStore.load() marks results whose source changed as digest_mismatch", async (t) => {
  await using layout = await savedSample();
  const { results } = layout;

  await t.step("a changed file", async () => {
    await Deno.writeTextFile(
      `${layout.workspace}/src/a.ts`,
      "export const CHANGED = 2;\n",
    );
    const loaded = await reload(layout);
    assert.deepEqual(loaded.results.map((r) => r.id), ["result-2", "result-3"]);
    assert.equal(loaded.unavailable.length, 1);
    const stale = loaded.unavailable[0]!;
    assert.equal(stale.id, "result-1");
    assert.equal(stale.reason, "digest_mismatch");
    assert.equal(stale.sha256, results.get("result-1")?.sha256);
    assert.match(stale.detail, /src\/a\.ts changed/);
    // The record keeps its reference; the preview cannot be rebuilt.
    const report = runStateOf(loaded).records[0]!.report;
    assert.equal(report.kind, "inspected");
    if (report.kind === "inspected") {
      assert.equal(report.files[0]?.descriptor?.sha256, stale.sha256);
      assert.equal(report.files[0]?.descriptor?.preview, "");
    }
  });

  await t.step("a deleted file", async () => {
    await Deno.remove(`${layout.workspace}/README.md`);
    const loaded = await reload(layout);
    assert.deepEqual(loaded.unavailable.map((u) => u.id), [
      "result-1",
      "result-2",
    ]);
    assert.match(loaded.unavailable[1]!.detail, /no longer exists/);
  });

  await t.step(
    "a file restored to its old content is available again",
    async () => {
      await Deno.writeTextFile(
        `${layout.workspace}/src/a.ts`,
        "export const INSPECTED_BODY = 1;\n",
      );
      const loaded = await reload(layout);
      assert.deepEqual(loaded.unavailable.map((u) => u.id), ["result-2"]);
    },
  );

  await t.step(
    "a source replaced by a symlink out of the workspace",
    async () => {
      await Deno.writeTextFile(
        `${layout.base}/outside.txt`,
        "export const INSPECTED_BODY = 1;\n",
      );
      await Deno.remove(`${layout.workspace}/src/a.ts`);
      await Deno.symlink(
        `${layout.base}/outside.txt`,
        `${layout.workspace}/src/a.ts`,
      );
      const loaded = await reload(layout);
      assert.ok(
        loaded.unavailable.some((u) =>
          u.id === "result-1" && /outside/.test(u.detail)
        ),
      );
    },
  );
});

Deno.test("SessionStore refuses a session root that overlaps the workspace", async (t) => {
  await using layout = await tempLayout();
  const create = (root: string) => createSession({ ...layout, root } as Layout);
  await t.step("inside the workspace", async () => {
    await assert.rejects(
      create(`${layout.workspace}/.loom/session`),
      isSessionError("session_inside_workspace"),
    );
    assert.equal(
      await exists(`${layout.workspace}/.loom`),
      false,
      "nothing was created",
    );
  });
  await t.step("the workspace itself", async () => {
    await assert.rejects(
      create(layout.workspace),
      isSessionError("session_inside_workspace"),
    );
  });
  await t.step("a directory containing the workspace", async () => {
    await assert.rejects(
      create(layout.base),
      isSessionError("session_inside_workspace"),
    );
  });
  await t.step("a relative path into the workspace", async () => {
    await assert.rejects(
      create(`${layout.workspace}/src/../.sessions`),
      isSessionError("session_inside_workspace"),
    );
  });
  await t.step("a symlink that leads into the workspace", async () => {
    await Deno.symlink(layout.workspace, `${layout.base}/link`);
    await assert.rejects(
      create(`${layout.base}/link/sessions`),
      isSessionError("session_inside_workspace"),
    );
  });
  await t.step("forbiddenRoots names the root for commission", async () => {
    const other = `${layout.base}/sessions/two`;
    const session = await create(other);
    await session.close();
    assert.ok(session.forbiddenRoots.includes(await Deno.realPath(other)));
  });
});

Deno.test("SessionStore.create() refuses a root that already holds a session", async () => {
  await using layout = await savedSample();
  const before = await snapshotTree(layout.root);
  await assert.rejects(
    createSession(layout),
    isSessionError("session_exists", /journal\.jsonl/),
  );
  assert.deepEqual(await snapshotTree(layout.root), before);
});

Deno.test("SessionStore cannot be constructed without create() or open()", () => {
  const Ctor = SessionStore as unknown as new (...args: unknown[]) => unknown;
  assert.throws(() => new Ctor(Symbol("fake"), {}), TypeError);
});
