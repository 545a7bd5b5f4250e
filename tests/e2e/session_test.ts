/**
 * End-to-end sessions through the real CLI: the long recording run in two
 * halves (`--session`, then `--resume`) against an uninterrupted run, and a
 * resume after the process was killed in the middle of a step.
 */
import assert from "node:assert/strict";
import { loom } from "../cli/_run.ts";
import {
  checkCommand,
  intentPath,
  type PreparedWorkspace,
  prepareWorkspace,
  recordingPath,
  snapshotTree,
} from "./_workspace.ts";

const CLI_FLAGS = [
  "run",
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-net=127.0.0.1",
  "--allow-env",
  "cli.ts",
];

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
  policy: "legacy" | "bounded",
  test: string,
  maxSteps: number,
): string[] {
  return [
    "run",
    "--workspace",
    prepared.workspace,
    "--intent-file",
    intentPath("long"),
    "--model",
    `recorded:${recordingPath("long")}`,
    "--test",
    test,
    "--context-policy",
    policy,
    "--max-steps",
    String(maxSteps),
    "--json",
  ];
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

async function uninterrupted(policy: "legacy" | "bounded", test: string) {
  const prepared = await prepareWorkspace("long");
  const report = `${prepared.root}/report.json`;
  const result = await loom(
    ...runArgs(prepared, policy, test, 200),
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
    const prepared = await prepareWorkspace("long");
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
        const doc = JSON.parse(
          await Deno.readTextFile(`${session}/session.json`),
        );
        assert.equal(doc.steps_used, half);
        assert.equal(doc.events.length, half);
        assert.equal(doc.progress.stop, "step_budget");
      },
    );

    await t.step("the session never holds an inspected body", async () => {
      const text = await Deno.readTextFile(`${session}/session.json`);
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
      const second = await loom(
        "run",
        "--resume",
        session,
        "--max-steps",
        "200",
        "--context-report",
        report,
        "--json",
      );
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stderr, new RegExp(`resuming .* after step ${half}`));
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
      const again = await loom("run", "--resume", session);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /already completed/);
    });

    await prepared.cleanup();
    await whole.prepared.cleanup();
  });
}

Deno.test("loom run --resume after a kill in the middle of a step loses no acknowledged event", async (t) => {
  const whole = await uninterrupted("bounded", "true");
  const prepared = await prepareWorkspace("long");
  const session = `${prepared.root}/session`;
  const report = `${prepared.root}/report.json`;
  const target = 40;

  let acknowledged: { sha256: string; record: unknown }[] = [];
  await t.step("the run is killed after step 40 was saved", async () => {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...CLI_FLAGS,
        ...runArgs(prepared, "bounded", "true", 200),
        "--session",
        session,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    while (!buffered.includes(`session: saved step ${target} `)) {
      const { value, done } = await lines.read();
      if (done) break;
      buffered += value;
    }
    child.kill("SIGKILL");
    await lines.cancel();
    const status = await child.status;
    assert.equal(
      status.success,
      false,
      "the process was killed before completing",
    );
    const doc = JSON.parse(await Deno.readTextFile(`${session}/session.json`));
    assert.ok(doc.steps_used >= target, `saved ${doc.steps_used} steps`);
    assert.equal(doc.progress.stop, null);
    acknowledged = doc.events;
  });

  await t.step(
    "the session verifies and can be garbage-collected safely",
    async () => {
      const shown = await loom("session", "show", session, "--verify");
      assert.equal(shown.code, 0, shown.stderr);
      const gc = await loom("session", "gc", session);
      assert.equal(gc.code, 0, gc.stderr);
    },
  );

  let resumed: Outcome;
  await t.step("the resume completes the slice", async () => {
    const second = await loom(
      "run",
      "--resume",
      session,
      "--context-report",
      report,
      "--json",
    );
    assert.equal(second.code, 0, second.stderr);
    resumed = JSON.parse(second.stdout);
  });

  await t.step(
    "every acknowledged event is kept, with the same digest",
    async () => {
      const doc = JSON.parse(
        await Deno.readTextFile(`${session}/session.json`),
      );
      assert.deepEqual(doc.events.slice(0, acknowledged.length), acknowledged);
      assert.equal(doc.progress.stop, "completed");
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

  await prepared.cleanup();
  await whole.prepared.cleanup();
});
