import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ResultStore } from "../../lib/store/result_store.ts";
import { SessionError } from "../../lib/persist/session_error.ts";
import { SessionStore } from "../../lib/persist/session_store.ts";
import {
  sampleRun,
  snapshotOf,
  snapshotTree,
  tempLayout,
  TEST_OUTPUT,
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

Deno.test("SessionStore.save() and load() restore results and events with the same ids and digests", async (t) => {
  const layout = await tempLayout();
  const { results, records, snapshot } = await sampleRun();
  const session = await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  });
  const info = await session.save(snapshot);

  await t.step(
    "externally bounded results are persisted, self-bounding ones catalogued",
    () => {
      assert.deepEqual(info, {
        written: 1,
        persisted: 1,
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

  await t.step("session.json holds no body and no preview", async () => {
    const text = await Deno.readTextFile(`${layout.root}/session.json`);
    for (const body of BODIES) assert.equal(text.includes(body), false, body);
    assert.equal(text.includes("preview"), false);
    const doc = JSON.parse(text);
    assert.equal(doc.format, "loom-session/1");
    assert.deepEqual(doc.results["result-1"].source, {
      reread: { path: "src/a.ts" },
    });
    assert.deepEqual(doc.results["result-3"].source, {
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

  await t.step("no temp file is left behind", async () => {
    const names = [...(await snapshotTree(layout.root)).keys()];
    assert.equal(
      names.some((n) => n.includes(".tmp-")),
      false,
      names.join(","),
    );
  });

  await t.step(
    "load() gives back the same results, records and state",
    async () => {
      const loaded = await (await SessionStore.open(layout.root)).load();
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
      assert.deepEqual(loaded.records, expected);
      assert.equal(loaded.intent, "Fix the mean");
      assert.equal(loaded.model, "recorded:fixtures/recordings/x.json");
      assert.deepEqual(loaded.test, {
        command: ["deno", "run", "check.ts"],
        timeoutMs: 30_000,
      });
      assert.equal(loaded.stepsUsed, 3);
      assert.equal(loaded.modelCallsUsed, 6);
      assert.deepEqual(loaded.counters, { refusals: 1, retrievals: 0 });
    },
  );

  await t.step("a restored store continues after the highest id", async () => {
    const loaded = await (await SessionStore.open(layout.root)).load();
    const store = new ResultStore();
    for (const r of loaded.results) store.restore(r);
    const next = await store.put("new", { origin: "x", capture: "complete" });
    assert.equal(next.result, "result-4");
  });

  await t.step("load() writes nothing", async () => {
    const before = await snapshotTree(layout.base);
    await (await SessionStore.open(layout.root)).load();
    assert.deepEqual(await snapshotTree(layout.base), before);
  });

  await t.step("a second save writes only new result files", async () => {
    const again = await session.save(snapshotOf(results, records));
    assert.equal(again.written, 0);
  });

  await layout.cleanup();
});

Deno.test("SessionStore.save() never persists a self-bounding result, whatever the overrides", async () => {
  const layout = await tempLayout();
  const { results, records } = await sampleRun();
  const session = await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  });
  const info = await session.save(
    snapshotOf(results, records, {
      overrides: { "repository.inspect": 1, "tests.run": 1, "$read_result": 1 },
    }),
  );
  assert.equal(info.reread, 2);
  assert.equal(info.persisted, 1);
  const doc = JSON.parse(
    await Deno.readTextFile(`${layout.root}/session.json`),
  );
  assert.deepEqual(doc.overrides, {
    "repository.inspect": 1,
    "tests.run": 1,
    "$read_result": 1,
  });
  assert.deepEqual(
    Object.keys(doc.results).filter((id) =>
      "persisted" in doc.results[id].source
    ),
    [
      "result-3",
    ],
  );
  await layout.cleanup();
});

Deno.test("SessionStore.save() leaves out results no acknowledged record produced", async () => {
  const layout = await tempLayout();
  const { results, records } = await sampleRun();
  await results.put("ORPHAN_BODY", {
    origin: "tests.run x",
    capture: "partial",
  });
  const session = await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  });
  const info = await session.save(snapshotOf(results, records));
  assert.deepEqual(info.skipped, ["result-4"]);
  assert.equal((await allText(layout.root)).includes("ORPHAN_BODY"), false);
  await layout.cleanup();
});

Deno.test("SessionStore.load() detects damaged sessions with a typed error naming the file", async (t) => {
  async function saved() {
    const layout = await tempLayout();
    const { snapshot } = await sampleRun();
    const session = await SessionStore.create(layout.root, {
      workspace: layout.workspace,
    });
    await session.save(snapshot);
    return {
      layout,
      file: `${layout.root}/tool-results/${sha(TEST_OUTPUT)}.txt`,
    };
  }

  await t.step("a tampered result file", async () => {
    const { layout, file } = await saved();
    await Deno.writeTextFile(file, TEST_OUTPUT.replace("got 4", "got 3"));
    const before = await snapshotTree(layout.base);
    await assert.rejects(
      (await SessionStore.open(layout.root)).load(),
      (e: unknown) =>
        isSessionError("result_corrupted", new RegExp(sha(TEST_OUTPUT)))(e) &&
        (e as SessionError).file === file,
    );
    assert.deepEqual(
      await snapshotTree(layout.base),
      before,
      "nothing was overwritten",
    );
    await layout.cleanup();
  });

  await t.step("a truncated result file", async () => {
    const { layout, file } = await saved();
    await Deno.writeTextFile(file, "");
    await assert.rejects(
      (await SessionStore.open(layout.root)).load(),
      isSessionError("result_corrupted", new RegExp(sha(TEST_OUTPUT))),
    );
    await layout.cleanup();
  });

  await t.step("a missing result file", async () => {
    const { layout, file } = await saved();
    await Deno.remove(file);
    const before = await snapshotTree(layout.base);
    await assert.rejects(
      (await SessionStore.open(layout.root)).load(),
      (e: unknown) =>
        isSessionError("result_missing", new RegExp(sha(TEST_OUTPUT)))(e) &&
        (e as SessionError).file === file,
    );
    assert.deepEqual(await snapshotTree(layout.base), before);
    await layout.cleanup();
  });

  await t.step("a result file replaced by a symlink", async () => {
    const { layout, file } = await saved();
    const elsewhere = `${layout.base}/elsewhere.txt`;
    await Deno.writeTextFile(elsewhere, TEST_OUTPUT);
    await Deno.remove(file);
    await Deno.symlink(elsewhere, file);
    await assert.rejects(
      (await SessionStore.open(layout.root)).load(),
      isSessionError("result_corrupted"),
    );
    await layout.cleanup();
  });

  async function editDoc(
    root: string,
    // deno-lint-ignore no-explicit-any -- free-form edits of parsed JSON
    edit: (doc: Record<string, any>) => void,
  ) {
    const path = `${root}/session.json`;
    const doc = JSON.parse(await Deno.readTextFile(path));
    edit(doc);
    await Deno.writeTextFile(path, JSON.stringify(doc));
  }

  await t.step(
    "a persisted path that does not come from the digest",
    async () => {
      const { layout } = await saved();
      await editDoc(layout.root, (doc) => {
        doc.results["result-3"].source.persisted = "../../ws/src/a.ts";
      });
      await assert.rejects(
        (await SessionStore.open(layout.root)).load(),
        isSessionError("session_invalid", /session\.json/),
      );
      await layout.cleanup();
    },
  );

  await t.step("a digest that is not 64 lowercase hex", async () => {
    const { layout } = await saved();
    await editDoc(layout.root, (doc) => {
      doc.results["result-3"].sha256 = "../x";
    });
    await assert.rejects(
      SessionStore.open(layout.root),
      isSessionError("session_invalid", /session\.json/),
    );
    await layout.cleanup();
  });

  await t.step("a re-read path that escapes the workspace", async () => {
    const { layout } = await saved();
    await editDoc(layout.root, (doc) => {
      doc.results["result-1"].source.reread.path =
        "../sessions/one/session.json";
    });
    await assert.rejects(
      (await SessionStore.open(layout.root)).load(),
      isSessionError("session_invalid"),
    );
    await layout.cleanup();
  });

  await t.step(
    "an event that no longer matches its archived digest",
    async () => {
      const { layout } = await saved();
      await editDoc(layout.root, (doc) => {
        doc.events[1].record.report.exit_code = 0;
      });
      await assert.rejects(
        (await SessionStore.open(layout.root)).load(),
        isSessionError("session_invalid", /event 2/),
      );
      await layout.cleanup();
    },
  );

  await t.step("a preview smuggled into a record", async () => {
    const { layout } = await saved();
    await editDoc(layout.root, (doc) => {
      doc.events[0].record.report.files[0].descriptor.preview = "body";
    });
    await assert.rejects(
      SessionStore.open(layout.root),
      isSessionError("session_invalid", /preview/),
    );
    await layout.cleanup();
  });

  await t.step("an unknown key", async () => {
    const { layout } = await saved();
    await editDoc(layout.root, (doc) => {
      doc.bodies = {};
    });
    await assert.rejects(
      SessionStore.open(layout.root),
      isSessionError("session_invalid", /bodies/),
    );
    await layout.cleanup();
  });
});

Deno.test("SessionStore.load() marks results whose source changed as digest_mismatch", async (t) => {
  const layout = await tempLayout();
  const { results, records, snapshot } = await sampleRun();
  const session = await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  });
  await session.save(snapshot);

  await t.step("a changed file", async () => {
    await Deno.writeTextFile(
      `${layout.workspace}/src/a.ts`,
      "export const CHANGED = 2;\n",
    );
    const loaded = await (await SessionStore.open(layout.root)).load();
    assert.deepEqual(loaded.results.map((r) => r.id), ["result-2", "result-3"]);
    assert.equal(loaded.unavailable.length, 1);
    const stale = loaded.unavailable[0]!;
    assert.equal(stale.id, "result-1");
    assert.equal(stale.reason, "digest_mismatch");
    assert.equal(stale.sha256, results.get("result-1")?.sha256);
    assert.match(stale.detail, /src\/a\.ts changed/);
    // The record keeps its reference; the preview cannot be rebuilt.
    const report = loaded.records[0]!.report;
    assert.equal(report.kind, "inspected");
    if (report.kind === "inspected") {
      assert.equal(report.files[0]?.descriptor?.sha256, stale.sha256);
      assert.equal(report.files[0]?.descriptor?.preview, "");
    }
  });

  await t.step(
    "the stale entry stays in the catalogue of later saves",
    async () => {
      const reopened = await SessionStore.open(layout.root);
      const loaded = await reopened.load();
      const store = new ResultStore();
      for (const r of loaded.results) store.restore(r);
      await reopened.save(snapshotOf(store, [...loaded.records]));
      const doc = JSON.parse(
        await Deno.readTextFile(`${layout.root}/session.json`),
      );
      assert.deepEqual(Object.keys(doc.results), [
        "result-1",
        "result-2",
        "result-3",
      ]);
      assert.equal(
        doc.results["result-1"].sha256,
        results.get("result-1")?.sha256,
      );
    },
  );

  await t.step("a deleted file", async () => {
    await Deno.remove(`${layout.workspace}/README.md`);
    const loaded = await (await SessionStore.open(layout.root)).load();
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
      const loaded = await (await SessionStore.open(layout.root)).load();
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
      const loaded = await (await SessionStore.open(layout.root)).load();
      assert.ok(
        loaded.unavailable.some((u) =>
          u.id === "result-1" && /outside/.test(u.detail)
        ),
      );
    },
  );

  void records;
  await layout.cleanup();
});

Deno.test("SessionStore refuses a session root that overlaps the workspace", async (t) => {
  const layout = await tempLayout();
  await t.step("inside the workspace", async () => {
    await assert.rejects(
      SessionStore.create(`${layout.workspace}/.loom/session`, {
        workspace: layout.workspace,
      }),
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
      SessionStore.create(layout.workspace, { workspace: layout.workspace }),
      isSessionError("session_inside_workspace"),
    );
  });
  await t.step("a directory containing the workspace", async () => {
    await assert.rejects(
      SessionStore.create(layout.base, { workspace: layout.workspace }),
      isSessionError("session_inside_workspace"),
    );
  });
  await t.step("a relative path into the workspace", async () => {
    const relative = `${layout.workspace}/src/../.sessions`;
    await assert.rejects(
      SessionStore.create(relative, { workspace: layout.workspace }),
      isSessionError("session_inside_workspace"),
    );
  });
  await t.step("a symlink that leads into the workspace", async () => {
    await Deno.symlink(layout.workspace, `${layout.base}/link`);
    await assert.rejects(
      SessionStore.create(`${layout.base}/link/sessions`, {
        workspace: layout.workspace,
      }),
      isSessionError("session_inside_workspace"),
    );
  });
  await t.step(
    "a session.json edited to point at a containing workspace",
    async () => {
      const { snapshot } = await sampleRun();
      const session = await SessionStore.create(layout.root, {
        workspace: layout.workspace,
      });
      await session.save(snapshot);
      const path = `${layout.root}/session.json`;
      const doc = JSON.parse(await Deno.readTextFile(path));
      doc.workspace = layout.base;
      await Deno.writeTextFile(path, JSON.stringify(doc));
      await assert.rejects(
        SessionStore.open(layout.root),
        isSessionError("session_inside_workspace"),
      );
    },
  );
  await t.step("forbiddenRoots names the root for commission", async () => {
    const other = `${layout.base}/sessions/two`;
    const session = await SessionStore.create(other, {
      workspace: layout.workspace,
    });
    assert.ok(session.forbiddenRoots.includes(await Deno.realPath(other)));
  });
  await layout.cleanup();
});

Deno.test("SessionStore.create() refuses a root that already holds a session", async () => {
  const layout = await tempLayout();
  const { snapshot } = await sampleRun();
  await (await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  })).save(snapshot);
  const before = await snapshotTree(layout.root);
  await assert.rejects(
    SessionStore.create(layout.root, { workspace: layout.workspace }),
    isSessionError("session_exists", /session\.json/),
  );
  assert.deepEqual(await snapshotTree(layout.root), before);
  await layout.cleanup();
});

Deno.test("SessionStore cannot be constructed without create() or open()", () => {
  const Ctor = SessionStore as unknown as new (...args: unknown[]) => unknown;
  assert.throws(() => new Ctor(Symbol("fake"), {}), TypeError);
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
