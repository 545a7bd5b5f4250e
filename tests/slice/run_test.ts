import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { RecordedProvider } from "../../lib/providers/recorded_provider.ts";
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import {
  runSlice,
  runWithOptions,
  type SliceRequest,
  SliceRequestError,
} from "../../lib/slice/run.ts";
import { revisionId } from "../../lib/slice/revision.ts";
import {
  checkCommand,
  INTENTS,
  prepareWorkspace,
  recordingPath,
} from "../e2e/_workspace.ts";

type Call = { phase: "selection" | "arguments"; arguments: unknown };

function recorded(calls: Call[]): RecordedProvider {
  return RecordedProvider.parse(
    JSON.stringify({
      format: "loom-recording/1",
      calls: calls.map((c) => ({
        phase: c.phase,
        tool: c.phase === "selection" ? "select_action" : "action_arguments",
        arguments: c.arguments,
      })),
    }),
    { source: "inline" },
  );
}

const sel = (action: string): Call => ({
  phase: "selection",
  arguments: { action },
});
const arg = (value: unknown): Call => ({
  phase: "arguments",
  arguments: value,
});
const sha256 = (text: string) =>
  createHash("sha256").update(text).digest("hex");

/** A tiny workspace whose check passes once answer.txt says 42. */
async function tinyWorkspace(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "loom-slice-" });
  await Deno.writeTextFile(`${dir}/answer.txt`, "41\n");
  await Deno.writeTextFile(
    `${dir}/check.ts`,
    [
      'const text = await Deno.readTextFile("answer.txt");',
      'console.log(text.trim() === "42" ? "pass" : "fail");',
      'Deno.exit(text.trim() === "42" ? 0 : 1);',
      "",
    ].join("\n"),
  );
  return dir;
}

function tinyRequest(
  workspace: string,
  provider: RecordedProvider,
  maxSteps = 10,
): SliceRequest {
  return {
    intent: "Make answer.txt say 42",
    workspace,
    maxSteps,
    provider,
    test: {
      command: [Deno.execPath(), "run", "--allow-read=answer.txt", "check.ts"],
      timeoutMs: 60_000,
    },
  };
}

async function readReport(path: string): Promise<ContextReport> {
  return JSON.parse(await Deno.readTextFile(path));
}

Deno.test("runSlice() replays the bug-fix recording to completion", async (t) => {
  for (const policy of ["legacy", "bounded"] as const) {
    await t.step(`under the ${policy} policy`, async () => {
      const prepared = await prepareWorkspace("bugfix");
      try {
        const recording = JSON.parse(
          await Deno.readTextFile(recordingPath("bugfix")),
        );
        const provider = RecordedProvider.load(recordingPath("bugfix"));
        const reportPath = `${prepared.root}/report.json`;
        const lines: string[] = [];
        const outcome = await runWithOptions({
          intent: INTENTS.bugfix,
          workspace: prepared.workspace,
          test: { command: checkCommand(), timeoutMs: 60_000 },
          maxSteps: 20,
          provider,
        }, {
          contextPolicy: policy,
          contextReport: reportPath,
          onProgress: (line) => lines.push(line),
        });
        assert.equal(outcome.stop, "completed", outcome.detail);
        assert.equal(outcome.completed, true);
        assert.equal(outcome.model_calls, recording.calls.length);
        assert.equal(provider.callsUsed, recording.calls.length);
        assert.equal(outcome.refusals, 0);
        assert.equal(outcome.tests_validate_latest_revision, true);
        assert.match(outcome.revision ?? "", /^rev-2-[0-9a-f]{12}$/);
        assert.equal(outcome.latest_test?.tested_revision, outcome.revision);
        assert.equal(lines.length, outcome.steps);
        const stats = await Deno.readTextFile(
          `${prepared.workspace}/src/stats.ts`,
        );
        assert.match(stats, /return total \/ values\.length;/);
        assert.match(stats, /\[\.\.\.values\]\.sort\(\(a, b\) => a - b\)/);
        const report = await readReport(reportPath);
        assert.equal(report.policy, policy);
        assert.equal(report.outcome.stop, "completed");
        assert.equal(report.model_calls, recording.calls.length);
        assert.equal(report.requests.length, recording.calls.length);
        assert.equal(report.requests[0]?.prefix_stable_bytes, 0);
        assert.ok(report.retrievals >= 1);
        if (policy === "bounded") {
          for (const r of report.requests) assert.ok(r.request_bytes <= 65_536);
        }
      } finally {
        await prepared.cleanup();
      }
    });
  }
});

Deno.test("runSlice() names each revision after the edited paths and contents", async () => {
  const dir = await tinyWorkspace();
  try {
    const outcome = await runSlice(tinyRequest(
      dir,
      recorded([
        sel("repository.edit"),
        arg({ files: [{ path: "answer.txt", contents: "42\n" }] }),
      ]),
      1,
    ));
    assert.equal(outcome.stop, "step_budget");
    assert.equal(
      outcome.revision,
      revisionId(1, [{ path: "answer.txt", contents: "42\n" }]),
    );
    assert.equal(await Deno.readTextFile(`${dir}/answer.txt`), "42\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runSlice() offers slice.complete only while tests validate the latest revision", async (t) => {
  await t.step(
    "completion before any test run is refused and the loop goes on",
    async () => {
      const dir = await tinyWorkspace();
      try {
        const lines: string[] = [];
        const outcome = await runWithOptions(
          tinyRequest(
            dir,
            recorded([
              sel("slice.complete"),
              sel("repository.edit"),
              arg({ files: [{ path: "answer.txt", contents: "42\n" }] }),
              sel("tests.run"),
              arg({}),
              sel("slice.complete"),
              arg({ summary: "answer.txt says 42" }),
            ]),
          ),
          { onProgress: (line) => lines.push(line) },
        );
        assert.equal(outcome.stop, "completed", outcome.detail);
        assert.equal(outcome.steps, 4);
        assert.equal(outcome.refusals, 1);
        assert.match(lines[0]!, /refused \(not_a_candidate\)/);
        assert.equal(outcome.summary, "answer.txt says 42");
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );

  await t.step(
    "a pass on one revision does not validate the next",
    async () => {
      const dir = await tinyWorkspace();
      try {
        const outcome = await runSlice(tinyRequest(
          dir,
          recorded([
            sel("repository.edit"),
            arg({ files: [{ path: "answer.txt", contents: "42\n" }] }),
            sel("tests.run"),
            arg({}),
            sel("repository.edit"),
            arg({ files: [{ path: "notes.txt", contents: "done\n" }] }),
            sel("slice.complete"),
          ]),
          4,
        ));
        assert.equal(outcome.stop, "step_budget");
        assert.equal(outcome.refusals, 1);
        assert.equal(outcome.latest_test?.exit_code, 0);
        assert.equal(outcome.tests_validate_latest_revision, false);
        assert.match(outcome.revision ?? "", /^rev-2-/);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );

  await t.step(
    "without a test command completion is admissible at once",
    async () => {
      const dir = await tinyWorkspace();
      try {
        const outcome = await runSlice({
          intent: "Nothing to do",
          workspace: dir,
          maxSteps: 2,
          provider: recorded([sel("slice.complete"), arg({ summary: "ok" })]),
        });
        assert.equal(outcome.stop, "completed");
        assert.equal(outcome.steps, 1);
        assert.equal(outcome.latest_test, null);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
});

Deno.test("runSlice() refuses edits whose segments do not resolve and leaves the file alone", async () => {
  const dir = await tinyWorkspace();
  try {
    const lines: string[] = [];
    const outcome = await runWithOptions(
      tinyRequest(
        dir,
        recorded([
          sel("repository.inspect"),
          arg({ paths: ["answer.txt"] }),
          sel("repository.edit"),
          arg({
            files: [{
              path: "answer.txt",
              contents: {
                segments: [{
                  ref: {
                    result: "result-1",
                    sha256: "0".repeat(64),
                    select: { kind: "whole" },
                  },
                }],
              },
            }],
          }),
          sel("repository.edit"),
          arg({
            files: [{
              path: "answer.txt",
              contents: {
                segments: [{
                  ref: {
                    result: "result-9",
                    sha256: sha256("41\n"),
                    select: { kind: "whole" },
                  },
                }],
              },
            }],
          }),
        ]),
        3,
      ),
      { contextPolicy: "bounded", onProgress: (line) => lines.push(line) },
    );
    assert.equal(outcome.stop, "step_budget");
    assert.equal(outcome.refusals, 2);
    assert.match(lines[1]!, /refused \(digest_mismatch\)/);
    assert.match(lines[2]!, /refused \(unknown_result\)/);
    assert.equal(outcome.revision, null);
    assert.equal(await Deno.readTextFile(`${dir}/answer.txt`), "41\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runSlice() composes edits from stored segments", async () => {
  const dir = await tinyWorkspace();
  try {
    const ref = {
      result: "result-1",
      sha256: sha256("41\n"),
      select: { kind: "bytes", start: 2, end: 3 },
    };
    const outcome = await runSlice(tinyRequest(
      dir,
      recorded([
        sel("repository.inspect"),
        arg({ paths: ["answer.txt"] }),
        sel("repository.edit"),
        arg({
          files: [{
            path: "answer.txt",
            contents: { segments: [{ literal: "42" }, { ref }] },
          }],
        }),
        sel("tests.run"),
        arg({}),
        sel("slice.complete"),
        arg({ summary: "done" }),
      ]),
    ));
    assert.equal(outcome.stop, "completed", outcome.detail);
    assert.equal(await Deno.readTextFile(`${dir}/answer.txt`), "42\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runSlice() applies the lookup budgets per stage", async (t) => {
  await t.step(
    "a ninth argument lookup refuses the step and the loop goes on",
    async () => {
      const dir = await tinyWorkspace();
      try {
        const lookups = Array.from(
          { length: 9 },
          () => arg({ $list_results: 0 }),
        );
        const outcome = await runSlice(tinyRequest(
          dir,
          recorded([
            sel("repository.inspect"),
            ...lookups,
            sel("repository.inspect"),
            arg({ paths: ["answer.txt"] }),
          ]),
          2,
        ));
        assert.equal(outcome.stop, "step_budget");
        assert.equal(outcome.steps, 2);
        assert.equal(outcome.refusals, 1);
        assert.equal(outcome.model_calls, 12);
        assert.equal(outcome.retrievals, 8);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );

  await t.step("a ninth selection lookup suspends the run", async () => {
    const dir = await tinyWorkspace();
    try {
      const lookups: Call[] = Array.from({ length: 9 }, () => ({
        phase: "selection",
        arguments: { $list_results: 0 },
      }));
      const outcome = await runSlice(tinyRequest(dir, recorded(lookups)));
      assert.equal(outcome.stop, "suspended");
      assert.match(outcome.detail, /ninth lookup/i);
      assert.equal(outcome.steps, 1);
      assert.equal(outcome.model_calls, 9);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  await t.step(
    "history lookups under legacy are answered as not available",
    async () => {
      const dir = await tinyWorkspace();
      try {
        const outcome = await runSlice(tinyRequest(
          dir,
          recorded([
            { phase: "selection", arguments: { $list_history: 0 } },
            sel("repository.inspect"),
            arg({ paths: ["answer.txt"] }),
          ]),
          1,
        ));
        assert.equal(outcome.stop, "step_budget");
        assert.equal(outcome.retrievals, 0);
        assert.equal(outcome.refusals, 0);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
});

Deno.test("runSlice() stops with refused after too many refusals in a row", async () => {
  const dir = await tinyWorkspace();
  try {
    const escape = [
      sel("repository.inspect"),
      arg({ paths: ["../x"] }),
    ];
    const outcome = await runWithOptions(
      tinyRequest(dir, recorded([...escape, ...escape, ...escape])),
      { maxConsecutiveRefusals: 3 },
    );
    assert.equal(outcome.stop, "refused");
    assert.equal(outcome.steps, 3);
    assert.equal(outcome.refusals, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runSlice() reports provider failures as provider_error with a report", async (t) => {
  await t.step("a recording that runs out", async () => {
    const dir = await tinyWorkspace();
    try {
      const reportPath = `${dir}/../${dir.split("/").at(-1)}-report.json`;
      const outcome = await runWithOptions(
        tinyRequest(dir, recorded([sel("repository.inspect")])),
        { contextReport: reportPath, contextPolicy: "bounded" },
      );
      assert.equal(outcome.stop, "provider_error");
      assert.match(outcome.detail, /^recording_exhausted: /);
      assert.equal(outcome.model_calls, 1);
      const report = await readReport(reportPath);
      assert.equal(report.outcome.stop, "provider_error");
      assert.equal(report.model_calls, 1);
      assert.equal(report.requests.length, 2);
      assert.equal(report.requests[1]?.final_usage, false);
      await Deno.remove(reportPath);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  await t.step("a bad model spec, before any work", async () => {
    const dir = await tinyWorkspace();
    try {
      const outcome = await runSlice({
        intent: "x",
        workspace: dir,
        maxSteps: 1,
        provider: "nonsense:model",
      });
      assert.equal(outcome.stop, "provider_error");
      assert.match(outcome.detail, /^bad_spec: /);
      assert.equal(outcome.steps, 0);
      assert.equal(outcome.model_calls, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  await t.step("a missing API key, before any work", async () => {
    const dir = await tinyWorkspace();
    try {
      const outcome = await runWithOptions({
        intent: "x",
        workspace: dir,
        maxSteps: 1,
        provider: "anthropic:claude-sonnet-4-5",
      }, { env: {} });
      assert.equal(outcome.stop, "provider_error");
      assert.match(outcome.detail, /^missing_api_key: /);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("runSlice() stops interrupted when the embedder aborts", async () => {
  const dir = await tinyWorkspace();
  try {
    const controller = new AbortController();
    const outcome = await runWithOptions(
      tinyRequest(
        dir,
        recorded([sel("repository.inspect"), arg({ paths: ["answer.txt"] })]),
      ),
      {
        signal: controller.signal,
        onProgress: () => controller.abort("enough"),
      },
    );
    assert.equal(outcome.stop, "interrupted");
    assert.match(outcome.detail, /^The run was interrupted: enough$/);
    assert.equal(outcome.steps, 1);
    assert.equal(outcome.model_calls, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runSlice() rejects malformed requests before starting", async (t) => {
  const provider = recorded([]);
  const cases: [string, Partial<SliceRequest>][] = [
    ["an empty intent", { intent: " " }],
    ["a zero step budget", { maxSteps: 0 }],
    ["a missing workspace", { workspace: "/nonexistent/loom-workspace" }],
    ["an empty test command", { test: { command: [], timeoutMs: 1 } }],
  ];
  for (const [name, change] of cases) {
    await t.step(name, async () => {
      await assert.rejects(
        runSlice({
          intent: "x",
          workspace: Deno.cwd(),
          maxSteps: 1,
          provider,
          ...change,
        }),
        SliceRequestError,
      );
    });
  }
});

Deno.test("runSlice() stops with capacity when mandatory content cannot fit the bounded ceiling", async () => {
  const dir = await tinyWorkspace();
  const reportPath = `${dir}-report.json`;
  try {
    const provider = recorded([sel("tests.run"), arg({})]);
    const outcome = await runWithOptions(
      { ...tinyRequest(dir, provider), intent: "x".repeat(70_000) },
      { contextReport: reportPath, contextPolicy: "bounded" },
    );
    assert.equal(outcome.stop, "capacity");
    assert.match(outcome.detail, /^request_too_large: /);
    assert.equal(outcome.model_calls, 0);
    assert.equal(provider.callsUsed, 0);
    const report = await readReport(reportPath);
    assert.equal(report.outcome.stop, "capacity");
    assert.equal(report.model_calls, 0);
    // The report never carries prompt text, not even the oversized intent.
    assert.ok(!JSON.stringify(report).includes("xxxxxxxx"));
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(reportPath).catch(() => {});
  }
});
