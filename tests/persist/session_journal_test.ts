/**
 * The journal's guarantees: a record changed by anyone without the key is
 * refused (`session_tampered`, naming the first bad record), so are
 * reordered, dropped and duplicated records; a torn last line is ignored;
 * a killed writer loses no acknowledged step; one writer at a time.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { SessionError } from "../../lib/persist/session_error.ts";
import { sealRecord } from "../../lib/persist/_journal.ts";
import { saveSnapshot, SessionStore } from "../../lib/persist/session_store.ts";
import { runStateOf, verifySession } from "../../lib/persist/session_verify.ts";
import { listSessions } from "../../lib/persist/session_summary.ts";
import {
  assertKeptSteps,
  CHANGED_RECORDS,
  createSession,
  exists,
  FORGED_OUTPUT,
  type JournalTamper,
  killWriterAfter,
  type Layout,
  openSession,
  pointAtForged,
  reload,
  REORDERED_RECORDS,
  rewriteJournal,
  savedSample,
  snapshotOf,
  snapshotTree,
  tempLayout,
} from "./_session.ts";

// deno-lint-ignore no-explicit-any -- free-form edits of parsed JSON
type Json = Record<string, any>;

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function isError(code: string, message?: RegExp, line?: number) {
  return (e: unknown) =>
    e instanceof SessionError && e.code === code &&
    (message === undefined || message.test(e.message)) &&
    (line === undefined || e.line === line);
}

/**
 * The sample run saved stepwise, its journal then rewritten by `edit`
 * (which may change the records in place), sealed again with the key when
 * `reseal` is set.
 */
async function rewritten(
  edit: (records: Json[]) => Json[] | void,
  reseal = false,
): Promise<Layout> {
  const layout = await savedSample({ stepwise: true });
  await rewriteJournal(
    layout.root,
    (records) => edit(records) ?? records,
    reseal ? layout.keyFile : undefined,
  );
  return layout;
}

/** Opening refuses the session and changes nothing. */
async function refused(layout: Layout, check: (e: unknown) => boolean) {
  const before = await snapshotTree(layout.base);
  await assert.rejects(openSession(layout), check);
  await assert.rejects(
    verifySession(layout.root, { keyFile: layout.keyFile }),
    check,
  );
  assert.deepEqual(await snapshotTree(layout.base), before, "nothing changed");
}

/** One step per edit: the edited journal is refused, naming the record. */
async function refusesEach(
  t: Deno.TestContext,
  edits: readonly JournalTamper[],
): Promise<void> {
  for (const [what, bad, edit] of edits) {
    await t.step(what, async () => {
      await using layout = await rewritten(edit);
      await refused(
        layout,
        isError(
          "session_tampered",
          new RegExp(`record ${bad} \\(line ${bad + 1}\\)`),
          bad + 1,
        ),
      );
    });
  }
}

// Known answers computed apart from Loom (`openssl dgst -sha256 -mac HMAC`):
// tests that forge journals seal with lib's own sealRecord(), so this pins
// the on-disk chain that sessions written by earlier versions rely on.
Deno.test("a journal record is sealed with the HMAC-SHA-256 of the previous MAC, a newline and the record, appended as its last key", () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => i);
  const header = sealRecord(key, "", { seq: 0, type: "header" });
  const headerMac =
    "4bf6d20d7a0c2ce048757b3ab916fc0f1c0a78d227644ee83c8af684ffb590ca";
  assert.deepEqual(header, {
    text: `{"seq":0,"type":"header","mac":"${headerMac}"}`,
    mac: headerMac,
  });
  const step = sealRecord(key, header.mac, { seq: 1, type: "step" });
  assert.equal(
    step.mac,
    "7f5e33eeeb64de1d64d5d9b539764acc57fb76f98bbdcdfdfbaf0ed6d5508216",
  );
});

Deno.test("a record changed without the key is refused as session_tampered, naming it", async (t) => {
  await refusesEach(t, CHANGED_RECORDS);

  await t.step(
    "a result body replaced together with its recomputed SHA-256 digest",
    async () => {
      await using layout = await savedSample({ stepwise: true });
      const digest = sha(FORGED_OUTPUT);
      await Deno.writeTextFile(
        `${layout.root}/tool-results/${digest}.txt`,
        FORGED_OUTPUT,
      );
      await rewriteJournal(
        layout.root,
        (records) => pointAtForged(records, digest),
      );
      await refused(layout, isError("session_tampered", /record 2/, 3));
    },
  );

  await t.step("a session sealed with another key", async () => {
    await using layout = await savedSample({ stepwise: true });
    const other = { ...layout, keyFile: `${layout.base}/other/session.key` };
    await assert.rejects(
      openSession(other),
      isError("session_tampered", /record 0/, 1),
    );
  });
});

Deno.test("reordered, dropped and duplicated records are refused", async (t) => {
  await refusesEach(t, REORDERED_RECORDS);
});

Deno.test("a malformed journal is a typed error naming file and line", async (t) => {
  await t.step("a line that is not JSON, before the last", async () => {
    await using layout = await savedSample({ stepwise: true });
    const file = `${layout.root}/journal.jsonl`;
    const lines = (await Deno.readTextFile(file)).split("\n");
    lines[2] = lines[2]!.slice(0, 40);
    await Deno.writeTextFile(file, lines.join("\n"));
    await refused(
      layout,
      (e) =>
        isError("session_invalid", /line 3: it is not valid JSON/, 3)(e) &&
        (e as SessionError).file === file,
    );
  });

  // Sealed again with the key: these reach the checks behind the chain.
  const sealed: [string, RegExp, (r: Json[]) => void][] = [
    ["a preview smuggled into a record", /line 2: .*preview/, (r) => {
      r[1]!.records[0].report.files[0].descriptor.preview = "body";
    }],
    [
      "an inspected body smuggled in as inline",
      /line 2: .*must be reread/,
      (r) => {
        r[1]!.results["result-1"].source = { inline: "INSPECTED_BODY" };
      },
    ],
    ["an unknown key", /line 3: unknown key bodies/, (r) => {
      r[2]!.bodies = {};
    }],
    ["a record number out of place", /line 4: record 5 stands/, (r) => {
      r[3]!.seq = 5;
    }],
    ["a result catalogued twice", /line 3: result-1 is catalogued twice/, (
      r,
    ) => {
      r[2]!.results["result-1"] = r[1]!.results["result-1"];
    }],
  ];
  for (const [what, message, edit] of sealed) {
    await t.step(what, async () => {
      await using layout = await rewritten(edit, true);
      await refused(layout, isError("session_invalid", message));
    });
  }

  await t.step(
    "a persisted path that does not come from the digest",
    async () => {
      await using layout = await rewritten((records) => {
        records[2]!.results["result-3"].source.persisted = "../../ws/src/a.ts";
      }, true);
      const store = await openSession(layout);
      await assert.rejects(
        store.load(),
        isError("session_invalid", /names come only from digests/),
      );
      await store.close();
    },
  );
});

Deno.test("a torn last line is ignored and cut off by the next writer", async () => {
  await using layout = await savedSample({ stepwise: true });
  const { records, results } = layout;
  const file = `${layout.root}/journal.jsonl`;
  const whole = await Deno.readTextFile(file);
  await Deno.writeTextFile(file, `${whole}{"seq":4,"type":"step","coun`);
  const verified = await verifySession(layout.root, {
    keyFile: layout.keyFile,
  });
  assert.equal(verified.state.steps, 3);
  assert.equal(verified.tornBytes, 28);
  const store = await openSession(layout);
  const loaded = await store.load();
  assert.equal(loaded.tornBytes, 28);
  assert.equal(await Deno.readTextFile(file), whole, "the torn bytes are cut");
  await saveSnapshot(
    store,
    snapshotOf(results, records, { steps: 4, notes: ["after the tear"] }),
  );
  await store.close();
  const again = await reload(layout);
  assert.equal(again.state.steps, 4);
  assert.deepEqual(runStateOf(again).notes, ["after the tear"]);
});

Deno.test("a writer killed with SIGKILL at any point loses no acknowledged step", async (t) => {
  for (const acks of [1, 7, 23]) {
    await t.step(`killed after ${acks} acknowledged steps`, async () => {
      await using layout = await tempLayout();
      // Somewhere inside a later step: a result write, the append or the flush.
      const acked = await killWriterAfter(acks, acks % 5, [
        layout.root,
        layout.workspace,
        layout.keyFile,
      ]);
      const store = await openSession(layout);
      assert.match(store.tookOverLock ?? "", /no longer exists/);
      const loaded = await store.load();
      await store.close();
      assertKeptSteps(loaded, acked);
    });
  }
});

Deno.test("one writer at a time: a second one is refused with session_locked", async (t) => {
  await t.step("while the first holds the session", async () => {
    await using layout = await savedSample({ stepwise: true });
    const first = await openSession(layout);
    await assert.rejects(
      openSession(layout),
      isError("session_locked", /locked by process \d+ .*still running/),
    );
    await first.close();
    const second = await openSession(layout);
    await second.close();
  });

  await t.step("a new session holds its lock from creation", async () => {
    await using layout = await tempLayout();
    const created = await createSession(layout);
    await assert.rejects(openSession(layout), isError("session_locked"));
    await created.close();
  });

  await t.step(
    "a stale lock of a process that is gone is taken over",
    async () => {
      await using layout = await savedSample({ stepwise: true });
      const gone = new Deno.Command("true").spawn();
      const pid = gone.pid;
      await gone.status;
      await Deno.writeTextFile(
        `${layout.root}/lock`,
        JSON.stringify({ pid, started: "2026-01-01T00:00:00.000Z" }),
      );
      const store = await openSession(layout);
      assert.match(
        store.tookOverLock ?? "",
        new RegExp(`stale lock of process ${pid} .*no longer exists`),
      );
      await store.close();
      assert.equal(await exists(`${layout.root}/lock`), false);
    },
  );

  await t.step(
    "a lock Loom did not write is explained, not removed",
    async () => {
      await using layout = await savedSample({ stepwise: true });
      await Deno.writeTextFile(`${layout.root}/lock`, "");
      await assert.rejects(
        openSession(layout),
        isError("session_locked", /not a lock Loom wrote; remove it/),
      );
      assert.equal(await exists(`${layout.root}/lock`), true);
    },
  );
});

Deno.test("a session of the old session.json format gets a clear error", async () => {
  await using layout = await tempLayout();
  await Deno.mkdir(layout.root, { recursive: true });
  await Deno.writeTextFile(
    `${layout.root}/session.json`,
    JSON.stringify({ format: "loom-session/1" }),
  );
  await assert.rejects(
    openSession(layout),
    isError("session_outdated", /older Loom .*start a new session/),
  );
  await assert.rejects(createSession(layout), isError("session_exists"));
  const listed = await listSessions(`${layout.base}/sessions`);
  assert.match(listed[0]?.error ?? "", /older Loom/);
});

Deno.test("the session key lives outside the session, owner-only", async (t) => {
  await t.step("it is created on first use with mode 0600", async () => {
    await using layout = await tempLayout();
    const store = await createSession(layout);
    await store.close();
    const info = await Deno.stat(layout.keyFile);
    assert.equal(info.mode! & 0o777, 0o600);
    assert.match(await Deno.readTextFile(layout.keyFile), /^[0-9a-f]{64}\n$/);
    assert.equal(
      (await Deno.readTextFile(`${layout.root}/journal.jsonl`)).includes(
        (await Deno.readTextFile(layout.keyFile)).trim(),
      ),
      false,
    );
  });

  await t.step("a key other users may read is refused", async () => {
    await using layout = await savedSample({ stepwise: true });
    await Deno.chmod(layout.keyFile, 0o644);
    await assert.rejects(
      openSession(layout),
      isError("session_key_invalid", /other users .*chmod 600/),
    );
  });

  await t.step("a key inside the session root is refused", async () => {
    await using layout = await tempLayout();
    await assert.rejects(
      SessionStore.create(layout.root, {
        workspace: layout.workspace,
        keyFile: `${layout.root}/session.key`,
        run: {
          intent: "x",
          policy: "bounded",
          model: "recorded:/r.json",
          test: null,
          maxSteps: 1,
        },
      }),
      isError("session_key_invalid", /lies inside/),
    );
  });
});

Deno.test("opening a directory without a session creates neither key nor lock", async () => {
  await using layout = await tempLayout();
  await Deno.mkdir(layout.root, { recursive: true });
  await assert.rejects(openSession(layout), isError("session_missing"));
  await assert.rejects(
    verifySession(layout.root, { keyFile: layout.keyFile }),
    isError("session_missing"),
  );
  assert.equal(await exists(layout.keyFile), false);
  assert.deepEqual([...(await snapshotTree(layout.root)).keys()], []);
});
