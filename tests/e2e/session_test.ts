/**
 * End-to-end sessions through `main(args, io)`: the long recording run in
 * two halves (`--session`, then `--resume`) against an uninterrupted run,
 * the bugfix recording saved with two persistence thresholds, and a resume
 * after the real CLI, run as a subprocess, was killed in the middle of a
 * step.
 */
import "../_session_key.ts";
import assert from "node:assert/strict";
import { exists, loomIn as loom, spawnLoom } from "../_kit.ts";
import {
  checkCommand,
  type FixtureName,
  type PreparedWorkspace,
  prepareWorkspace,
  recordedRunArgs,
  recordingPath,
  snapshotTree,
} from "./_workspace.ts";
import type { ContextPolicy } from "../../lib/briefing/briefing.ts";

interface Report {
  outcome: { stop: string };
  requests: {
    phase: string;
    request_bytes: number;
    prefix_stable_bytes: number;
  }[];
  checkpoints: number;
  retrievals: number;
  model_calls: number;
}

interface Outcome {
  stop: string;
  steps: number;
  model_calls: number;
  revision: string | null;
  refusals: number;
  retrievals: number;
  checkpoints: number;
  tests_validate_latest_revision: boolean;
  request_bytes: { total: number; peak: number };
}

function runArgs(
  prepared: PreparedWorkspace,
  policy: ContextPolicy,
  test: string,
  maxSteps: number,
  fixture: FixtureName = "long",
): string[] {
  return [
    ...recordedRunArgs(prepared.workspace, { fixture, test, policy, maxSteps }),
    "--json",
    // The gate lives outside the workspace on purpose: no sandbox shows it.
    ...(test === GATE_COMMAND ? ["--unconfined-tests"] : []),
  ];
}

/** `loom run --resume SESSION` with the given flags. */
function resume(
  session: string,
  flags: {
    readonly maxSteps?: number;
    readonly report?: string;
    readonly json?: boolean;
    readonly unconfined?: boolean;
  } = {},
) {
  return loom(
    "run",
    "--resume",
    session,
    ...(flags.maxSteps === undefined
      ? []
      : ["--max-steps", `${flags.maxSteps}`]),
    ...(flags.report === undefined ? [] : ["--context-report", flags.report]),
    ...(flags.json ? ["--json"] : []),
    ...(flags.unconfined ? ["--unconfined-tests"] : []),
  );
}

async function readReport(path: string): Promise<Report> {
  return JSON.parse(await Deno.readTextFile(path));
}

/** The figures a resumed run must share with an uninterrupted one. */
function totals(o: Outcome) {
  return {
    stop: o.stop,
    steps: o.steps,
    model_calls: o.model_calls,
    revision: o.revision,
    refusals: o.refusals,
    retrievals: o.retrievals,
    checkpoints: o.checkpoints,
    tests_validate_latest_revision: o.tests_validate_latest_revision,
  };
}

async function uninterrupted(
  policy: ContextPolicy,
  test: string,
  options: {
    fixture?: FixtureName;
    prepare?: (prepared: PreparedWorkspace) => Promise<void>;
  } = {},
) {
  const fixture = options.fixture ?? "long";
  const prepared = await prepareWorkspace(fixture);
  await options.prepare?.(prepared);
  const report = `${prepared.root}/report.json`;
  const result = await loom(
    ...runArgs(prepared, policy, test, 200, fixture),
    "--context-report",
    report,
  );
  assert.equal(result.code, 0, result.stderr);
  return {
    prepared,
    outcome: JSON.parse(result.stdout) as Outcome,
    report: await readReport(report),
    tree: await snapshotTree(prepared.workspace),
  };
}

for (const policy of ["bounded", "legacy"] as const) {
  Deno.test(`loom run --session then --resume matches an uninterrupted run of the long recording (${policy})`, async (t) => {
    const test = checkCommand().join(" ");
    const whole = await uninterrupted(policy, test);
    const half = Math.floor(whole.outcome.steps / 2);
    await using prepared = await prepareWorkspace("long");
    await using _whole = whole.prepared;
    const session = `${prepared.root}/session`;
    const report = `${prepared.root}/report.json`;

    await t.step(
      "the first half stops at its step budget with a saved session",
      async () => {
        const first = await loom(
          ...runArgs(prepared, policy, test, half),
          "--session",
          session,
        );
        assert.equal(first.code, 1, first.stderr);
        assert.equal(JSON.parse(first.stdout).stop, "step_budget");
        assert.match(
          first.stderr,
          new RegExp(`session: saved step ${half} to `),
        );
        const doc = await readSession(session);
        assert.equal(doc.steps_used, half);
        assert.equal(doc.events.length, half);
        assert.equal(doc.stop, "step_budget");
      },
    );

    await t.step("the session never holds an inspected body", async () => {
      const text = await Deno.readTextFile(`${session}/journal.jsonl`);
      assert.equal(text.includes("preview"), false);
      const unit = await Deno.readTextFile(
        `${prepared.workspace}/src/unit_01.ts`,
      );
      const line = unit.split("\n").find((l) => l.length > 30) ?? unit;
      for await (const entry of Deno.readDir(`${session}/tool-results`)) {
        const body = await Deno.readTextFile(
          `${session}/tool-results/${entry.name}`,
        );
        assert.equal(body.includes(line), false, entry.name);
      }
      assert.equal(text.includes(line), false);
    });

    let resumed: Outcome;
    await t.step("the resume completes the slice", async () => {
      const second = await resume(session, {
        maxSteps: 200,
        report,
        json: true,
      });
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, new RegExp(`resuming .* after step ${half}`));
      // Where and how it runs, before the first model call's progress line.
      const notice = second.stderr.split("\nstep ")[0] ?? "";
      assert.match(notice, new RegExp(`workspace ${prepared.workspace}\n`));
      assert.match(notice, new RegExp(`test command ${test} \\(timeout`));
      resumed = JSON.parse(second.stdout);
    });

    await t.step("the final workspace is identical", async () => {
      assert.deepEqual(await snapshotTree(prepared.workspace), whole.tree);
    });

    await t.step("the outcome totals are identical", () => {
      assert.deepEqual(totals(resumed), totals(whole.outcome));
    });

    await t.step(
      "the report covers the whole run with the same totals",
      async () => {
        const split = await readReport(report);
        assert.equal(split.requests.length, whole.report.requests.length);
        assert.equal(split.model_calls, whole.report.model_calls);
        assert.equal(split.retrievals, whole.report.retrievals);
        assert.equal(split.checkpoints, whole.report.checkpoints);
        if (policy === "bounded") {
          // Compact descriptors only: every request is byte-identical in size
          // and in its stable prefix, across the resume boundary too.
          assert.deepEqual(
            split.requests.map((
              r,
            ) => [r.phase, r.request_bytes, r.prefix_stable_bytes]),
            whole.report.requests.map((
              r,
            ) => [r.phase, r.request_bytes, r.prefix_stable_bytes]),
          );
          assert.deepEqual(resumed.request_bytes, whole.outcome.request_bytes);
        } else {
          // Legacy transcripts show previews; a preview of a file the slice
          // edited since it was inspected is never stored, so it comes back
          // empty after a resume. Requests before the resume are identical.
          assert.deepEqual(
            split.requests.slice(0, 2 * half).map((r) => r.request_bytes),
            whole.report.requests.slice(0, 2 * half).map((r) =>
              r.request_bytes
            ),
          );
        }
      },
    );

    await t.step("a completed session cannot be resumed again", async () => {
      const again = await resume(session);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /already completed/);
    });
  });
}

Deno.test("loom run --session writes a result to tool-results/ only above its threshold", async (t) => {
  const test = checkCommand().join(" ");
  const whole = await uninterrupted("bounded", test, { fixture: "bugfix" });
  await using _whole = whole.prepared;
  const runs = new Map<number, { files: string[]; doc: SessionDoc }>();

  for (const threshold of [1, 1_000_000]) {
    await t.step(
      `tests.run=${threshold}: the run stops, resumes and ends like an uninterrupted one`,
      async () => {
        await using prepared = await prepareWorkspace("bugfix");
        const session = `${prepared.root}/session`;
        const first = await loom(
          ...runArgs(prepared, "bounded", test, 4, "bugfix"),
          "--session",
          session,
          "--persist-threshold",
          `tests.run=${threshold}`,
          // Never applies: repository.inspect results are never stored.
          "--persist-threshold",
          "repository.inspect=1",
        );
        assert.match(first.stderr, /Ignoring .*repository\.inspect/);
        assert.equal(first.code, 1, first.stderr);
        assert.equal(JSON.parse(first.stdout).stop, "step_budget");
        // The overrides are stored in the session and apply after the resume.
        const second = await resume(session, { maxSteps: 20, json: true });
        assert.equal(second.code, 0, second.stderr);
        assert.deepEqual(
          totals(JSON.parse(second.stdout)),
          totals(whole.outcome),
        );
        assert.deepEqual(await snapshotTree(prepared.workspace), whole.tree);
        const shown = await loom("session", "show", session);
        assert.equal(shown.code, 0, shown.stderr);
        assert.match(
          shown.stdout,
          threshold === 1
            ? /result-3\s+persisted .*tool-results\//
            : /result-3\s+inline .*journal\.jsonl/,
        );
        runs.set(threshold, {
          files: await resultFiles(session),
          doc: await readSession(session),
        });
      },
    );
  }

  await t.step(
    "the two thresholds write different sets of files for the same events",
    () => {
      const low = runs.get(1)!;
      const high = runs.get(1_000_000)!;
      assert.deepEqual(low.doc.events, high.doc.events);
      const outputs = Object.values(high.doc.results)
        .filter((entry) => entry.tool === "tests.run");
      assert.equal(outputs.length, 2, "two test runs");
      for (const entry of outputs) {
        assert.deepEqual(Object.keys(entry.source), ["inline"]);
      }
      assert.deepEqual(
        low.files,
        [...new Set(outputs.map((entry) => `${entry.sha256}.txt`))].sort(),
      );
      assert.deepEqual(high.files, []);
      for (const run of [low, high]) {
        for (const entry of Object.values(run.doc.results)) {
          if (entry.tool === "repository.inspect") {
            assert.deepEqual(Object.keys(entry.source), ["reread"]);
          }
        }
      }
    },
  );
});

interface SessionDoc {
  steps_used: number;
  stop: string | null;
  events: { sequence: number; action: string }[];
  results: Record<
    string,
    { sha256: string; tool: string; source: Record<string, unknown> }
  >;
}

/** The journal of a session folded into its last state (no verification). */
async function readSession(session: string): Promise<SessionDoc> {
  const lines = (await Deno.readTextFile(`${session}/journal.jsonl`))
    .split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  const doc: SessionDoc = {
    steps_used: 0,
    stop: null,
    events: [],
    results: {},
  };
  for (const line of lines) {
    if (line.type !== "step") continue;
    doc.steps_used = line.counters.steps;
    doc.stop = line.stop;
    doc.events.push(...line.records);
    Object.assign(doc.results, line.results);
  }
  return doc;
}

async function resultFiles(session: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(`${session}/tool-results`)))
    .map((entry) => entry.name).sort();
}

/**
 * The test command of the kill test, run from the workspace: it succeeds
 * silently like `true`. When `../gate/` exists it counts its runs, and the
 * run numbered in `../gate/block-at` creates `../gate/started` and waits
 * (at most 20 s) for `../gate/release`, so the slice is known to be inside
 * that step's `tests.run` when it is killed.
 */
const GATE_SCRIPT = `gate=../gate
[ -d "$gate" ] || exit 0
[ -e "$gate/release" ] && exit 0
n=$(( $(cat "$gate/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$gate/count"
[ "$n" = "$(cat "$gate/block-at")" ] || exit 0
: > "$gate/started"
i=0
while [ ! -e "$gate/release" ] && [ "$i" -lt 400 ]; do
  sleep 0.05
  i=$((i + 1))
done
: > "$gate/done"
`;
const GATE_COMMAND = "sh ../gate.sh";

/** The step of the first `tests.run` after `after`, and which run it is. */
async function testsRunAfter(
  after: number,
): Promise<{ step: number; run: number }> {
  const recording = JSON.parse(
    await Deno.readTextFile(recordingPath("long")),
  ) as { calls: { phase: string; arguments: { action?: string } }[] };
  const actions = recording.calls
    .filter((call) => call.phase === "selection")
    .map((call) => call.arguments.action);
  let run = 0;
  for (const [index, action] of actions.entries()) {
    if (action !== "tests.run") continue;
    run += 1;
    if (index + 1 > after) return { step: index + 1, run };
  }
  throw new Error(`The long recording runs no tests after step ${after}`);
}

/** Polls for a file until it appears (`true`) or `gone` settles (`false`). */
async function waitFor(path: string, gone: Promise<unknown>): Promise<boolean> {
  let ended = false;
  gone.then(() => ended = true, () => ended = true);
  while (!(await exists(path))) {
    if (ended) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

for (const after of [12, 40]) {
  Deno.test(`loom run --resume after a kill inside the first tests.run after step ${after} loses no acknowledged event`, async (t) => {
    const writeGate = (p: PreparedWorkspace) =>
      Deno.writeTextFile(`${p.root}/gate.sh`, GATE_SCRIPT);
    const whole = await uninterrupted("bounded", GATE_COMMAND, {
      prepare: writeGate,
    });
    const blocked = await testsRunAfter(after);
    await using prepared = await prepareWorkspace("long");
    await using _whole = whole.prepared;
    await writeGate(prepared);
    const gate = `${prepared.root}/gate`;
    await Deno.mkdir(gate);
    await Deno.writeTextFile(`${gate}/block-at`, `${blocked.run}\n`);
    const session = `${prepared.root}/session`;
    const report = `${prepared.root}/report.json`;

    let acknowledged: SessionDoc["events"] = [];
    await t.step(
      `the run is killed inside tests.run of step ${blocked.step}`,
      async () => {
        const child = spawnLoom(
          [
            ...runArgs(prepared, "bounded", GATE_COMMAND, 200),
            "--session",
            session,
          ],
          { stdout: "null" },
        );
        const stderr = new Response(child.stderr).text();
        assert.ok(
          await waitFor(`${gate}/started`, child.status),
          "the run ended before the gated tests.run started",
        );
        child.kill("SIGKILL");
        const status = await child.status;
        assert.equal(status.signal, "SIGKILL", "killed before completing");
        // Let the orphaned test process finish; later runs pass the gate.
        await Deno.writeTextFile(`${gate}/release`, "");
        let timer: ReturnType<typeof setTimeout> | undefined;
        await waitFor(
          `${gate}/done`,
          new Promise((resolve) => timer = setTimeout(resolve, 5_000)),
        );
        clearTimeout(timer);
        const log = await stderr;
        assert.match(
          log,
          new RegExp(`session: saved step ${blocked.step - 1} `),
        );
        assert.doesNotMatch(log, new RegExp(`saved step ${blocked.step} `));
        const doc = await readSession(session);
        assert.equal(doc.steps_used, blocked.step - 1);
        assert.equal(doc.events.length, blocked.step - 1);
        assert.equal(doc.events.at(-1)?.sequence, blocked.step - 1);
        assert.equal(doc.stop, null);
        acknowledged = doc.events;
        // The killed run still holds the lock; the resume takes it over.
        assert.ok(await exists(`${session}/lock`));
      },
    );

    await t.step(
      "the session verifies and can be garbage-collected safely",
      async () => {
        const shown = await loom("session", "show", session, "--verify");
        assert.equal(shown.code, 0, shown.stderr);
        const gc = await loom("session", "gc", session);
        assert.equal(gc.code, 0, gc.stderr);
        // The killed run's lock is stale: gc takes it over and releases it.
        assert.match(
          gc.stdout,
          /took over the stale lock of process \d+ .*no longer exists/,
        );
        assert.equal(await exists(`${session}/lock`), false);
      },
    );

    let resumed: Outcome;
    await t.step("the resume completes the slice", async () => {
      const second = await resume(session, {
        report,
        json: true,
        unconfined: true,
      });
      assert.equal(second.code, 0, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(`resuming .* after step ${blocked.step - 1} `),
      );
      resumed = JSON.parse(second.stdout);
    });

    await t.step(
      "every acknowledged event is kept, with the same digest",
      async () => {
        const doc = await readSession(session);
        assert.deepEqual(
          doc.events.slice(0, acknowledged.length),
          acknowledged,
        );
        // The interrupted step was taken again, from its start.
        const retaken = doc.events[acknowledged.length];
        assert.equal(retaken?.sequence, blocked.step);
        assert.equal(retaken?.action, "tests.run");
        assert.equal(doc.stop, "completed");
        assert.equal(await exists(`${session}/lock`), false, "lock released");
      },
    );

    await t.step(
      "workspace, totals and prefix-stable bytes match the uninterrupted run",
      async () => {
        assert.deepEqual(await snapshotTree(prepared.workspace), whole.tree);
        assert.deepEqual(totals(resumed), totals(whole.outcome));
        const split = await readReport(report);
        assert.deepEqual(
          split.requests.map((r) => [r.request_bytes, r.prefix_stable_bytes]),
          whole.report.requests.map((
            r,
          ) => [r.request_bytes, r.prefix_stable_bytes]),
        );
      },
    );
  });
}

/** The first 4 steps of the bugfix recording, saved in a session. */
async function halfBugfix() {
  const prepared = await prepareWorkspace("bugfix");
  const session = `${prepared.root}/session`;
  const first = await loom(
    ...runArgs(prepared, "bounded", checkCommand().join(" "), 4, "bugfix"),
    "--session",
    session,
  );
  assert.equal(first.code, 1, first.stderr);
  return { prepared, session };
}

/** Rewrites journal records by hand, keeping the MACs (no key). */
async function editJournal(
  session: string,
  // deno-lint-ignore no-explicit-any -- free-form edits of parsed JSON
  edit: (records: any[]) => void,
): Promise<void> {
  const file = `${session}/journal.jsonl`;
  const records = (await Deno.readTextFile(file)).split("\n")
    .filter((line) => line !== "").map((line) => JSON.parse(line));
  edit(records);
  await Deno.writeTextFile(
    file,
    records.map((r) => `${JSON.stringify(r)}\n`).join(""),
  );
}

// deno-lint-ignore no-explicit-any -- free-form edits of parsed JSON
type Json = any;

Deno.test("loom run --resume refuses a session edited without the key", async (t) => {
  const cases: [string, number, (records: Json[], marker: string) => void][] = [
    ["a failed test record rewritten to exit_code 0", -1, (records) => {
      const step = records.findLast((r) =>
        r.records?.some((a: { report: { kind: string } }) =>
          a.report.kind === "tests_run"
        )
      );
      const run = step.records.find((a: { report: { kind: string } }) =>
        a.report.kind === "tests_run"
      );
      run.report.exit_code = 0;
    }],
    ["a changed test command", 0, (records, marker) => {
      records[0].test.command = ["touch", marker];
    }],
    ["a widened workspace", 0, (records) => {
      records[0].workspace = "/";
    }],
  ];
  for (const [what, record, edit] of cases) {
    await t.step(what, async () => {
      const { prepared, session } = await halfBugfix();
      await using _prepared = prepared;
      const marker = `${prepared.root}/ran`;
      let bad = record;
      await editJournal(session, (records) => {
        edit(records, marker);
        if (bad < 0) {
          bad = records.findIndex((r) =>
            r.records?.some((a: Json) =>
              a.report.kind === "tests_run" && a.report.exit_code === 0
            )
          );
        }
      });
      const tree = await snapshotTree(prepared.workspace);
      const resumed = await resume(session, { json: true });
      assert.equal(resumed.code, 2, resumed.stderr);
      assert.match(
        resumed.stderr,
        new RegExp(`session_tampered: .*record ${bad} \\(line ${bad + 1}\\)`),
      );
      assert.doesNotMatch(resumed.stderr, /^step /m, "no step was taken");
      assert.equal(await exists(marker), false, "the test command never ran");
      assert.deepEqual(await snapshotTree(prepared.workspace), tree);
    });
  }
});

Deno.test("loom run --resume prints one line about stale inspected results", async () => {
  const { prepared, session } = await halfBugfix();
  await using _prepared = prepared;
  const inspected = Object.values(
    (await readSession(session)).results,
  ).filter((entry) => entry.tool === "repository.inspect");
  assert.ok(inspected.length > 0, "the first half inspected files");
  for (const entry of inspected) {
    const path = (entry.source as { reread: { path: string } }).reread.path;
    await Deno.writeTextFile(`${prepared.workspace}/${path}`, "// changed\n");
  }
  const resumed = await resume(session, { maxSteps: 20, json: true });
  const notice = resumed.stderr.split("\nstep ")[0] ?? "";
  const lines = notice.split("\n").filter((l) => /stale/.test(l));
  assert.equal(lines.length, 1, notice);
  assert.match(
    lines[0]!,
    new RegExp(
      `${inspected.length} inspected results? (is|are) stale \\(file changed after inspection\\): result-`,
    ),
  );
  assert.doesNotMatch(resumed.stderr, /is unavailable \(digest_mismatch\)/);
});
