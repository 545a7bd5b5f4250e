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

/** Saves the sample run with these overrides; returns what landed on disk. */
async function savedWith(overrides: Record<string, unknown>) {
  const layout = await tempLayout();
  const { results, records } = await sampleRun();
  const session = await SessionStore.create(layout.root, {
    workspace: layout.workspace,
  });
  const info = await session.save(snapshotOf(results, records, { overrides }));
  const text = await Deno.readTextFile(`${layout.root}/session.json`);
  const files =
    (await Array.fromAsync(Deno.readDir(`${layout.root}/tool-results`)))
      .map((e) => e.name).sort();
  return {
    layout,
    results,
    records,
    info,
    text,
    doc: JSON.parse(text),
    files,
  };
}

Deno.test("SessionStore.save() persists an externally bounded result only above its threshold", async (t) => {
  await t.step(
    "above the threshold the body goes to tool-results/",
    async () => {
      const saved = await savedWith({ "tests.run": TEST_OUTPUT.length - 1 });
      assert.equal(saved.info.persisted, 1);
      assert.equal(saved.info.inline, 0);
      assert.deepEqual(saved.files, [`${sha(TEST_OUTPUT)}.txt`]);
      assert.equal(saved.text.includes("TEST_OUTPUT_BODY"), false);
      await saved.layout.cleanup();
    },
  );

  await t.step(
    "at the threshold the body stays inline in session.json",
    async () => {
      const saved = await savedWith({ "tests.run": TEST_OUTPUT.length });
      assert.equal(saved.info.persisted, 0);
      assert.equal(saved.info.inline, 1);
      assert.equal(saved.info.written, 0);
      assert.deepEqual(saved.files, []);
      assert.deepEqual(saved.doc.results["result-3"].source, {
        inline: TEST_OUTPUT,
      });
      assert.equal(saved.doc.results["result-3"].sha256, sha(TEST_OUTPUT));
      assert.equal(saved.text.includes("preview"), false);
      const loaded = await (await SessionStore.open(saved.layout.root)).load();
      assert.deepEqual(
        loaded.results.map((r) => [r.id, r.sha256]),
        [...saved.results.stored()].map((r) => [r.id, r.sha256]),
      );
      assert.deepEqual(
        loaded.results[2]?.bytes,
        saved.results.get("result-3")?.bytes,
      );
      // The preview is rebuilt from the inline body, as it was.
      assert.deepEqual(loaded.records[1], saved.records[1]);
      await saved.layout.cleanup();
    },
  );

  await t.step(
    "two overrides of the same run write different sets of files",
    async () => {
      const low = await savedWith({ "tests.run": 1 });
      const high = await savedWith({ "tests.run": 1_000_000 });
      assert.deepEqual(low.files, [`${sha(TEST_OUTPUT)}.txt`]);
      assert.deepEqual(high.files, []);
      assert.deepEqual(low.doc.events, high.doc.events);
      for (const saved of [low, high]) {
        const loaded = await (await SessionStore.open(saved.layout.root))
          .load();
        assert.deepEqual(
          loaded.results.map((r) => r.bytes),
          [...saved.results.stored()].map((r) => r.bytes),
        );
        await saved.layout.cleanup();
      }
    },
  );

  await t.step(
    "the default threshold keeps small test output inline",
    async () => {
      const layout = await tempLayout();
      const results = new ResultStore();
      const output = await results.put("1 failed\n", {
        origin: "tests.run deno test",
        capture: "partial",
      });
      const session = await SessionStore.create(layout.root, {
        workspace: layout.workspace,
      });
      const info = await session.save(snapshotOf(results, [{
        sequence: 1,
        action: "tests.run",
        arguments: {},
        report: {
          kind: "tests_run",
          exit_code: 1,
          timed_out: false,
          tested_revision: null,
          output,
          confinement: "none",
        },
      }]));
      assert.equal(info.inline, 1);
      assert.equal(info.persisted, 0);
      await layout.cleanup();
    },
  );

  await t.step("the threshold counts characters, not bytes", async () => {
    const layout = await tempLayout();
    const results = new ResultStore();
    const body = "é".repeat(10); // 10 characters, 20 UTF-8 bytes
    const output = await results.put(body, {
      origin: "tests.run x",
      capture: "complete",
    });
    const session = await SessionStore.create(layout.root, {
      workspace: layout.workspace,
    });
    const info = await session.save(snapshotOf(results, [{
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
    }], { overrides: { "tests.run": 10 } }));
    assert.equal(info.inline, 1);
    const loaded = await (await SessionStore.open(layout.root)).load();
    assert.equal(new TextDecoder().decode(loaded.results[0]?.bytes), body);
    await layout.cleanup();
  });
});

Deno.test("SessionStore.save() stores nothing of repository.inspect, whatever its override", async (t) => {
  for (const value of [1, 1_000_000_000, 0, -5, Infinity, "50"]) {
    await t.step(`repository.inspect=${String(value)}`, async () => {
      const saved = await savedWith({
        "repository.inspect": value,
        "tests.run": 1_000_000,
      });
      assert.equal(saved.info.reread, 2);
      assert.equal(saved.info.inline, 1, "only the test output is inline");
      assert.deepEqual(saved.files, []);
      assert.deepEqual(saved.doc.results["result-1"].source, {
        reread: { path: "src/a.ts" },
      });
      assert.deepEqual(saved.doc.results["result-2"].source, {
        reread: { path: "README.md" },
      });
      for (const body of ["INSPECTED_BODY", "Readme body text"]) {
        assert.equal(saved.text.includes(body), false, body);
      }
      await saved.layout.cleanup();
    });
  }
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

  async function savedInline() {
    const layout = await tempLayout();
    const { snapshot } = await sampleRun();
    const session = await SessionStore.create(layout.root, {
      workspace: layout.workspace,
    });
    await session.save({ ...snapshot, overrides: { "tests.run": 1_000_000 } });
    return layout;
  }

  for (
    const [what, tamper] of [
      [
        "an inline body edited in place",
        (b: string) => b.replace("got 4", "got 3"),
      ],
      ["a truncated inline body", (b: string) => b.slice(0, 100)],
      ["an emptied inline body", () => ""],
    ] as const
  ) {
    await t.step(what, async () => {
      const layout = await savedInline();
      await editDoc(layout.root, (doc) => {
        const source = doc.results["result-3"].source;
        source.inline = tamper(source.inline);
      });
      const before = await snapshotTree(layout.base);
      await assert.rejects(
        (await SessionStore.open(layout.root)).load(),
        (e: unknown) =>
          isSessionError(
            "result_corrupted",
            new RegExp(`result-3 .*${sha(TEST_OUTPUT)}`),
          )(e) &&
          (e as SessionError).file === `${layout.root}/session.json`,
      );
      assert.deepEqual(
        await snapshotTree(layout.base),
        before,
        "nothing was overwritten",
      );
      await layout.cleanup();
    });
  }

  await t.step("an inspected body smuggled in as inline", async () => {
    const { layout } = await saved();
    await editDoc(layout.root, (doc) => {
      doc.results["result-1"].source = {
        inline: "export const INSPECTED_BODY = 1;\n",
      };
    });
    await assert.rejects(
      SessionStore.open(layout.root),
      isSessionError(
        "session_invalid",
        /results\["result-1"\]\.source: must be reread/,
      ),
    );
    await layout.cleanup();
  });

  await t.step("an inspected body smuggled in as a file", async () => {
    const { layout } = await saved();
    await editDoc(layout.root, (doc) => {
      doc.results["result-1"].source = {
        persisted: `tool-results/${doc.results["result-1"].sha256}.txt`,
      };
    });
    await assert.rejects(
      SessionStore.open(layout.root),
      isSessionError("session_invalid", /must be reread/),
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
