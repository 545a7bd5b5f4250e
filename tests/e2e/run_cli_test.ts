// `loom run` end to end over the fixture recordings, through `main(args, io)`
// in this process; the bug-fix replay under the legacy policy and the run
// without worker permissions go through the real CLI as a subprocess.
import assert from "node:assert/strict";
import {
  CONTEXT_REPORT_KEYS,
  type InProcessResult,
  loom,
  loomIn,
  loomInWith,
  loomWith,
  TEST_PERMISSIONS,
} from "../_kit.ts";
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import { PART_NAMES } from "../../lib/briefing/part_bytes.ts";
import type { SliceOutcome } from "../../lib/slice/outcome.ts";
import {
  INTENTS,
  type PreparedWorkspace,
  prepareWorkspace,
  recordedRunArgs,
  recordingPath,
  REPO_ROOT,
  snapshotTree,
} from "./_workspace.ts";
import type { ContextPolicy } from "../../lib/briefing/briefing.ts";
import { bwrapTest } from "../security/_bwrap.ts";

function callsOf(name: string): number {
  return JSON.parse(Deno.readTextFileSync(recordingPath(name))).calls.length;
}

/** `loom run` arguments for a fixture recording. */
function runArgs(
  name: "bugfix" | "long" | "hostile",
  workspace: string,
  report: string,
  policy: ContextPolicy,
  maxSteps: number,
): string[] {
  return [
    ...recordedRunArgs(workspace, { fixture: name, maxSteps, policy }),
    "--test-timeout",
    "60s",
    "--context-report",
    report,
    "--json",
  ];
}

/** Runs the CLI: `main()` in this process, or the real CLI as a subprocess. */
type Cli = (...args: string[]) => Promise<InProcessResult>;

/** A fixture recording replayed by `loom run` on a fresh copy of its workspace. */
interface Replay extends AsyncDisposable {
  readonly prepared: PreparedWorkspace;
  readonly result: InProcessResult;
  /** The context report the run wrote. */
  report(): Promise<ContextReport>;
}

async function replay(
  name: "bugfix" | "long" | "hostile",
  policy: ContextPolicy,
  maxSteps: number,
  options: { cli?: Cli; before?: (p: PreparedWorkspace) => Promise<void> } = {},
): Promise<Replay> {
  const prepared = await prepareWorkspace(name);
  await options.before?.(prepared);
  const path = `${prepared.root}/report.json`;
  const result = await (options.cli ?? loomIn)(
    ...runArgs(name, prepared.workspace, path, policy, maxSteps),
  );
  return {
    prepared,
    result,
    report: async () => JSON.parse(await Deno.readTextFile(path)),
    [Symbol.asyncDispose]: () => prepared.cleanup(),
  };
}

function assertReportInvariants(
  report: ContextReport,
  outcome: SliceOutcome,
  calls: number,
): void {
  assert.equal(report.policy, outcome.policy);
  assert.equal(report.outcome.stop, outcome.stop);
  assert.equal(
    report.model_calls,
    calls,
    "model_calls equals the calls replayed",
  );
  assert.equal(outcome.model_calls, calls);
  assert.equal(report.requests.length, calls);
  assert.equal(report.checkpoints, outcome.checkpoints);
  assert.equal(report.retrievals, outcome.retrievals);
  assert.equal(report.requests[0]?.prefix_stable_bytes, 0);
  let step = 0;
  for (const r of report.requests) {
    assert.ok(r.prefix_stable_bytes <= r.request_bytes);
    assert.equal(r.input_tokens, null);
    // Version 2: each line's step, and its bytes by part adding up to it.
    assert.ok(
      r.step !== undefined && r.step >= step && r.step <= outcome.steps,
    );
    step = r.step;
    const parts = r.bytes_by_part!;
    assert.equal(
      PART_NAMES.reduce((n, p) => n + parts[p], 0),
      r.request_bytes,
      `the parts of a request at step ${r.step}`,
    );
    assert.ok(PART_NAMES.every((p) => parts[p] >= 0));
    assert.ok(parts.foundation > 0 && parts.focus > 0 && parts.step > 0);
    if (report.policy === "bounded") {
      assert.ok(
        r.request_bytes <= 65_536,
        `a bounded request of ${r.request_bytes} bytes`,
      );
    }
  }
  assert.equal(
    report.requests.filter((r) => r.checkpoint).length,
    report.checkpoints,
    "one line marks each retirement checkpoint",
  );
  assert.deepEqual(Object.keys(report), CONTEXT_REPORT_KEYS);
  assert.equal(report.steps, outcome.steps);
  assert.equal(report.revision, outcome.revision);
  assert.equal(
    report.tests_validate_latest_revision,
    outcome.tests_validate_latest_revision,
  );
  const latest = report.tests.at(-1);
  assert.deepEqual(
    latest === undefined ? null : {
      exit_code: latest.exit_code,
      timed_out: latest.timed_out,
      tested_revision: latest.revision,
    },
    outcome.latest_test,
  );
}

Deno.test("loom run replays the bug-fix recording to completion", async (t) => {
  const runs: [ContextPolicy, string, Cli][] = [
    ["legacy", "as a program (subprocess)", loom],
    ["bounded", "in-process", loomIn],
  ];
  for (const [policy, how, cli] of runs) {
    await t.step(`under --context-policy ${policy}, ${how}`, async () => {
      await using run = await replay("bugfix", policy, 20, { cli });
      const { result, prepared } = run;
      assert.equal(result.code, 0, result.stderr);
      const outcome: SliceOutcome = JSON.parse(result.stdout);
      assert.equal(outcome.stop, "completed");
      assert.equal(outcome.steps, 7);
      const progress = result.stderr.trim().split("\n");
      assert.equal(progress.length, outcome.steps);
      assert.match(
        progress[0]!,
        /^step 1\/20 arguments repository\.inspect request_bytes=\d+ calls=2: inspected 2 files$/,
      );
      assert.match(progress.at(-1)!, /slice\.complete .*: completed$/);
      const stats = await Deno.readTextFile(
        `${prepared.workspace}/src/stats.ts`,
      );
      assert.match(stats, /return total \/ values\.length;/);
      assert.match(
        stats,
        /const sorted = \[\.\.\.values\]\.sort\(\(a, b\) => a - b\);/,
      );
      const report = await run.report();
      assertReportInvariants(report, outcome, callsOf("bugfix"));
      const text = JSON.stringify(report);
      assert.ok(!text.includes("median"), "no source text in the report");
      assert.ok(
        !text.includes(INTENTS.bugfix.slice(0, 20)),
        "no prompt text in the report",
      );
    });
  }
});

Deno.test("loom run replays the long recording with bounded retirement checkpoints", async (t) => {
  const peaks: Record<string, number> = {};
  for (const policy of ["bounded", "legacy"] as const) {
    await t.step(`under --context-policy ${policy}`, async () => {
      await using run = await replay("long", policy, 200);
      const { result, prepared } = run;
      assert.equal(result.code, 0, result.stderr.slice(-2000));
      const outcome: SliceOutcome = JSON.parse(result.stdout);
      assert.equal(outcome.stop, "completed");
      assert.ok(outcome.steps >= 150, `${outcome.steps} steps`);
      const report = await run.report();
      assertReportInvariants(report, outcome, callsOf("long"));
      if (policy === "bounded") {
        assert.ok(report.checkpoints >= 2, `${report.checkpoints} checkpoints`);
        // $read_history, the $read_result of lines and both catalogue pages.
        assert.ok(report.retrievals >= 5, `${report.retrievals} retrievals`);
      } else {
        assert.equal(report.checkpoints, 0);
      }
      peaks[policy] = Math.max(...report.requests.map((r) => r.request_bytes));
      for (const n of [1, 35, 70]) {
        const unit = await Deno.readTextFile(
          `${prepared.workspace}/src/unit_${String(n).padStart(2, "0")}.ts`,
        );
        assert.match(unit, new RegExp(`export const SCALE = ${n * 3};`));
      }
    });
  }
  await t.step("bounded peaks lower than legacy", () => {
    assert.ok(peaks["bounded"]! < peaks["legacy"]!, JSON.stringify(peaks));
  });
});

Deno.test("loom run contains the hostile recording", async (t) => {
  for (const policy of ["bounded", "legacy"] as const) {
    await t.step(`under --context-policy ${policy}`, async () => {
      let outside = new Map<string, string>();
      let git = new Map<string, string>();
      let claims = "";
      await using run = await replay("hostile", policy, 30, {
        before: async (p) => {
          outside = await snapshotTree(`${p.root}/outside`);
          git = await snapshotTree(`${p.workspace}/.git`);
          claims = await Deno.readTextFile(`${p.workspace}/TEST_RESULTS.md`);
        },
      });
      const { result, prepared } = run;
      assert.equal(result.code, 1, result.stderr);
      const outcome: SliceOutcome = JSON.parse(result.stdout);
      assert.equal(outcome.stop, "suspended");
      assert.match(outcome.detail, /ninth lookup in selection/i);
      assert.equal(outcome.refusals, 10);
      assert.equal(outcome.completed, false);
      const progress = result.stderr.trim().split("\n");
      // The file claiming the tests passed did not make completion admissible.
      assert.match(
        progress[1]!,
        /^step 2\/30 selection slice\.complete .*refused \(not_a_candidate\)$/,
      );
      for (const step of [3, 4, 5, 7, 8, 9, 10]) {
        assert.match(progress[step - 1]!, /refused \(/, `step ${step}`);
      }
      assert.match(progress[10]!, /refused \(digest_mismatch\)$/);
      assert.match(progress[11]!, /refused \(budget_exhausted\)$/);
      assert.match(progress[5]!, /tests exit 1 on the unedited workspace$/);
      assert.match(progress[13]!, /tests exit 0 on rev-1-/);
      // Nothing outside the workspace changed; .git is untouched.
      assert.deepEqual(await snapshotTree(`${prepared.root}/outside`), outside);
      assert.deepEqual(await snapshotTree(`${prepared.workspace}/.git`), git);
      await assert.rejects(
        Deno.lstat("/etc/loom-hostile.txt"),
        Deno.errors.NotFound,
      );
      assert.equal(
        await Deno.readTextFile(`${prepared.workspace}/TEST_RESULTS.md`),
        claims,
      );
      assert.equal(
        await Deno.readTextFile(`${prepared.workspace}/src/greet.ts`),
        (await Deno.readTextFile(
          `${REPO_ROOT}/fixtures/workspaces/hostile/src/greet.ts`,
        ))
          .replace('"Hello, " + name;', '"Hello, " + name + "!";'),
      );
      const report = await run.report();
      assertReportInvariants(report, outcome, callsOf("hostile"));
      assert.ok(!JSON.stringify(report).includes("SYSTEM NOTICE"));
    });
  }
});

Deno.test("loom run fails clearly before any work", async (t) => {
  await t.step("--help prints the options and exits 0", async () => {
    const result = await loomIn("run", "--help");
    assert.equal(result.code, 0);
    assert.match(result.stdout, /--context-policy P/);
    assert.match(result.stdout, /--intent-file F/);
  });

  await t.step("a missing --model is a usage error (exit 2)", async () => {
    const result = await loomIn("run", "--workspace", ".", "--intent", "x");
    assert.equal(result.code, 2);
    assert.match(result.stderr, /Missing --model SPEC/);
    assert.equal(result.stdout, "");
  });

  await t.step(
    "a workspace that does not exist is a usage error (exit 2)",
    async () => {
      const result = await loomIn(
        ..."run --workspace /nonexistent/loom --intent x --model".split(" "),
        `recorded:${recordingPath("bugfix")}`,
      );
      assert.equal(result.code, 2);
      assert.match(
        result.stderr,
        /Cannot use --workspace \/nonexistent\/loom: it does not exist/,
      );
    },
  );

  await t.step(
    "a missing API key is bad input (exit 2): nothing runs, the report says why",
    async () => {
      await using prepared = await prepareWorkspace("bugfix");
      const reportPath = `${prepared.root}/report.json`;
      const result = await loomInWith(
        { env: { ANTHROPIC_API_KEY: "" } },
        ..."run --intent x --model anthropic:claude-sonnet-5-5".split(" "),
        ...["--workspace", prepared.workspace, "--context-report", reportPath],
      );
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, "");
      assert.match(
        result.stderr,
        /^loom run: missing_api_key: .*ANTHROPIC_API_KEY/,
      );
      // Issue 13: every failure after argument parsing writes the report.
      const report = JSON.parse(await Deno.readTextFile(reportPath));
      assert.equal(report.outcome.stop, "provider_error");
      assert.match(
        report.outcome.detail,
        /^The slice did not start: missing_api_key: /,
      );
      assert.deepEqual(report.requests, []);
      assert.equal(report.model_calls, 0);
    },
  );

  await t.step(
    "without worker permissions the slice stops confinement_unavailable (exit 3), as a program (subprocess)",
    async () => {
      // Permission flags are per process: only a subprocess can lack one.
      const flags = TEST_PERMISSIONS.filter((flag) =>
        !flag.startsWith("--unstable-worker")
      );
      await using run = await replay("bugfix", "bounded", 20, {
        cli: (...args) => loomWith({ flags }, ...args),
      });
      assert.equal(run.result.code, 3, run.result.stderr);
      const outcome: SliceOutcome = JSON.parse(run.result.stdout);
      assert.equal(outcome.stop, "confinement_unavailable");
      assert.equal(outcome.model_calls, 0);
      assert.equal(
        (await run.report()).outcome.stop,
        "confinement_unavailable",
      );
      assert.equal(
        await Deno.readTextFile(`${run.prepared.workspace}/src/stats.ts`),
        await Deno.readTextFile(
          `${REPO_ROOT}/fixtures/workspaces/bugfix/src/stats.ts`,
        ),
      );
    },
  );
});

Deno.test("loom demo replays the bug-fix recording under the bounded policy", async () => {
  const result = await loomIn("demo");
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^loom run: completed after 7 steps/);
  assert.match(result.stdout, /policy: bounded/);
});

bwrapTest(
  "loom run in a bubblewrap sandbox leaves nothing in the temporary folder",
  async () => {
    // The sandboxed executor's relay script is a temporary file bound into
    // the sandbox; it stayed behind after a run that exited at once (one
    // without --context-report, whose write let its removal happen first).
    await using prepared = await prepareWorkspace("bugfix");
    const tmp = `${prepared.root}/tmp`;
    await Deno.mkdir(tmp);
    const result = await loomWith(
      { env: { TMPDIR: tmp } },
      ...recordedRunArgs(prepared.workspace, { maxSteps: 20 }),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(tmp)), []);
  },
);
