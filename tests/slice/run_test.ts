import assert from "node:assert/strict";
import { WorkspaceExecutor } from "../../lib/executor/workspace_executor.ts";
import { createHash } from "node:crypto";
import { RecordedProvider } from "../../lib/providers/recorded_provider.ts";
import type { ModelProvider } from "../../lib/providers/model_provider.ts";
import { ProviderError } from "../../lib/providers/provider_error.ts";
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import { runSlice } from "../../lib/slice/run.ts";
import {
  type SliceRequest,
  SliceRequestError,
} from "../../lib/slice/request.ts";
import { revisionId } from "../../lib/slice/revision.ts";
import {
  sessionHooks,
  type SliceResume,
  type SliceSnapshot,
} from "../../lib/slice/run_state.ts";
import {
  checkCommand,
  INTENTS,
  prepareWorkspace,
  recordingPath,
} from "../e2e/_workspace.ts";
import type { StepPhase } from "../../lib/reference/lookup_session.ts";

type Call = { phase: StepPhase; arguments: unknown };

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
/** Inspects answer.txt, then writes `contents` to it. */
const inspectAndEdit = (contents: unknown): Call[] => [
  sel("repository.inspect"),
  arg({ paths: ["answer.txt"] }),
  sel("repository.edit"),
  arg({ files: [{ path: "answer.txt", contents }] }),
];
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
  provider: ModelProvider,
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

/** Runs `body` in a fresh tiny workspace with a report path beside it; removes both. */
async function inTinyWorkspace(
  body: (dir: string, reportPath: string) => Promise<void>,
): Promise<void> {
  const dir = await tinyWorkspace();
  const reportPath = `${dir}-report.json`;
  try {
    await body(dir, reportPath);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(reportPath).catch(() => {});
  }
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
        const outcome = await runSlice({
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
    // The revision names the whole tree the edit left.
    const executor = await WorkspaceExecutor.start({ workspace: dir });
    try {
      assert.equal(
        outcome.revision,
        revisionId(1, (await executor.survey()).digest),
      );
    } finally {
      executor.close();
    }
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
        const outcome = await runSlice(
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
    const outcome = await runSlice(
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
        ...inspectAndEdit({ segments: [{ literal: "42" }, { ref }] }),
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
    const outcome = await runSlice(
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
      const outcome = await runSlice(
        tinyRequest(dir, recorded([sel("repository.inspect")])),
        { contextReport: reportPath, contextPolicy: "bounded" },
      );
      assert.equal(outcome.stop, "provider_error");
      assert.match(outcome.detail, /^recording_exhausted: /);
      // The failed second call counts too.
      assert.equal(outcome.model_calls, 2);
      const report = await readReport(reportPath);
      assert.equal(report.outcome.stop, "provider_error");
      assert.equal(report.model_calls, 2);
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
      const outcome = await runSlice({
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
    const outcome = await runSlice(
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
    const outcome = await runSlice(
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

Deno.test("runSlice() writes an edit composed from a whole selection of a BOM file back byte-identical", async () => {
  const dir = await tinyWorkspace();
  try {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, 0x34, 0x31, 0x0a]);
    await Deno.writeFile(`${dir}/answer.txt`, bytes);
    const whole = {
      result: "result-1",
      sha256: createHash("sha256").update(bytes).digest("hex"),
      select: { kind: "whole" },
    };
    const outcome = await runSlice(tinyRequest(
      dir,
      recorded(inspectAndEdit({ segments: [{ ref: whole }] })),
      2,
    ));
    assert.equal(outcome.stop, "step_budget", outcome.detail);
    assert.notEqual(outcome.revision, null);
    assert.deepEqual(await Deno.readFile(`${dir}/answer.txt`), bytes);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runSlice() clips model-controlled paths in refusals, so a 40 KB path does not end a bounded run", async (t) => {
  const long = "a".repeat(40_000);
  const cases: [string, unknown][] = [
    ["unknown_result", {
      files: [{
        path: long,
        contents: {
          segments: [{
            ref: {
              result: "result-9",
              sha256: "0".repeat(64),
              select: { kind: "whole" },
            },
          }],
        },
      }],
    }],
    ["edit_failed", { files: [{ path: long, contents: "42\n" }] }],
    ["duplicate_path", {
      files: [{ path: long, contents: "1" }, {
        path: `./${long}`,
        contents: "2",
      }],
    }],
  ];
  for (const [code, edit] of cases) {
    await t.step(code, async () => {
      await inTinyWorkspace(async (dir) => {
        const lines: string[] = [];
        const outcome = await runSlice(
          tinyRequest(
            dir,
            recorded([
              sel("repository.edit"),
              arg(edit),
              sel("tests.run"),
              arg({}),
            ]),
            2,
          ),
          { contextPolicy: "bounded", onProgress: (line) => lines.push(line) },
        );
        assert.equal(outcome.stop, "step_budget", outcome.detail);
        assert.equal(outcome.refusals, 1);
        assert.match(lines[0]!, new RegExp(`refused \\(${code}\\)`));
        assert.match(lines[1]!, /tests exit 1/);
        assert.ok(outcome.request_bytes.peak <= 65_536);
      });
    });
  }
});

/** A resumed bounded run whose event archive already holds 4,096 events. */
function fullArchive(): SliceResume {
  const records = Array.from({ length: 4096 }, (_, i) => ({
    sequence: i + 1,
    action: "tests.run",
    arguments: {},
    report: { kind: "refused" as const, code: "x", reason: "Filler" },
  }));
  return {
    steps: 4096,
    modelCalls: 0,
    records,
    edits: 0,
    revision: null,
    refusals: 4096,
    consecutiveRefusals: 0,
    retrievals: 0,
    bytesTotal: 0,
    bytesPeak: 0,
    modelMs: 0,
    notes: [],
    archived: 4090,
    checkpoints: 1,
    lastTurn: null,
    requests: [],
    results: [],
  };
}

Deno.test("runSlice() keeps the overflowing step's effect visible when the archive is full", async (t) => {
  const cases: [string, Call, RegExp][] = [
    ["tests.run", arg({}), /tests exit 1 on the unedited workspace/],
    [
      "repository.edit",
      arg({ files: [{ path: "answer.txt", contents: "42\n" }] }),
      /edited 1 file → rev-1-/,
    ],
  ];
  for (const [action, call, effect] of cases) {
    await t.step(action, async () => {
      await inTinyWorkspace(async (dir, reportPath) => {
        const lines: string[] = [];
        const snapshots: SliceSnapshot[] = [];
        const outcome = await runSlice(
          tinyRequest(dir, recorded([sel(action), call]), 5000),
          {
            contextPolicy: "bounded",
            contextReport: reportPath,
            onProgress: (line) => lines.push(line),
            session: sessionHooks({
              resume: fullArchive(),
              onSnapshot: (c) => {
                snapshots.push(c);
                return Promise.resolve();
              },
            }),
          },
        );
        assert.equal(outcome.stop, "capacity");
        assert.match(outcome.detail, /^capacity: /);
        assert.match(
          outcome.detail,
          new RegExp(`step 4097 \\(${action}\\) took effect: `),
        );
        assert.match(outcome.detail, effect);
        // The progress output shows the step.
        assert.equal(lines.length, 1);
        assert.match(lines[0]!, /^step 4097\/5000 arguments /);
        assert.match(lines[0]!, effect);
        // The outcome and the final snapshot hold its effect.
        const last = snapshots.at(-1)!;
        assert.equal(last.stop, "capacity");
        assert.equal(last.records.at(-1)?.sequence, 4097);
        if (action === "tests.run") {
          assert.deepEqual(outcome.latest_test, {
            exit_code: 1,
            timed_out: false,
            tested_revision: null,
          });
        } else {
          assert.match(outcome.revision ?? "", /^rev-1-/);
          assert.equal(await Deno.readTextFile(`${dir}/answer.txt`), "42\n");
        }
        // So does the context report.
        const report = await readReport(reportPath);
        assert.equal(report.outcome.stop, "capacity");
        assert.match(report.outcome.detail, effect);
      });
    });
  }
});

/** Sixteen small files and a recording of `steps` inspections of all of them. */
async function inspectAll(
  dir: string,
  steps: number,
): Promise<RecordedProvider> {
  const paths = Array.from({ length: 16 }, (_, i) => `f${i}.txt`);
  for (const path of paths) await Deno.writeTextFile(`${dir}/${path}`, path);
  const calls: Call[] = [];
  for (let i = 0; i < steps; i++) {
    calls.push(sel("repository.inspect"), arg({ paths }));
  }
  return recorded(calls);
}

Deno.test("runSlice() stops a bounded run with capacity when the result store fills", async () => {
  await inTinyWorkspace(async (dir, reportPath) => {
    const lines: string[] = [];
    // 64 inspections of 16 files fill the store's 1,024 results.
    const outcome = await runSlice(
      tinyRequest(dir, await inspectAll(dir, 66), 66),
      {
        contextPolicy: "bounded",
        contextReport: reportPath,
        onProgress: (line) => lines.push(line),
      },
    );
    assert.equal(outcome.stop, "capacity");
    assert.equal(outcome.steps, 65);
    assert.match(
      outcome.detail,
      /^store_full: Cannot keep the result of repository\.inspect f0\.txt: the result store is full \(1024 results, /,
    );
    assert.match(
      outcome.detail,
      /step 65 \(repository\.inspect\) took effect: inspected 16 files$/,
    );
    assert.equal(lines.length, 65);
    assert.match(lines[64]!, /inspected 16 files/);
    const report = await readReport(reportPath);
    assert.equal(report.outcome.stop, "capacity");
    assert.equal(report.model_calls, 130);
  });
});

Deno.test("runSlice() goes on under legacy when the result store fills, with previews and no references", async () => {
  await inTinyWorkspace(async (dir) => {
    let last: SliceSnapshot | undefined;
    const outcome = await runSlice(
      tinyRequest(dir, await inspectAll(dir, 66), 66),
      {
        session: sessionHooks({
          onSnapshot: (c) => {
            last = c;
            return Promise.resolve();
          },
        }),
      },
    );
    assert.equal(outcome.stop, "step_budget", outcome.detail);
    assert.equal(outcome.steps, 66);
    const report = last!.records.at(-1)!.report;
    assert.equal(report.kind, "inspected");
    const descriptor = report.kind === "inspected"
      ? report.files[0]!.descriptor!
      : undefined;
    assert.deepEqual(descriptor, {
      origin: "repository.inspect f0.txt",
      capture: "complete",
      utf8_bytes: 6,
      preview: "f0.txt",
      preview_truncated: false,
      preview_start_byte: 0,
      preview_end_byte: 6,
      result_unavailable: "store_full",
    });
    assert.equal(last!.results.count, 1024);
  });
});

Deno.test("runSlice() counts a failed provider call in model_calls and keeps its usage partial", async () => {
  await inTinyWorkspace(async (dir, reportPath) => {
    let calls = 0;
    const provider: ModelProvider = {
      spec: "fake:model",
      call() {
        calls += 1;
        if (calls === 1) {
          return Promise.resolve({
            arguments: { action: "tests.run" },
            usage: {
              input_tokens: 10,
              output_tokens: 2,
              cache_read_tokens: null,
              cache_write_tokens: null,
            },
            final_usage: true,
          });
        }
        return Promise.reject(
          new ProviderError("provider_http", "The provider answered 500", {
            status: 500,
            usage: {
              input_tokens: 7,
              output_tokens: null,
              cache_read_tokens: null,
              cache_write_tokens: null,
            },
          }),
        );
      },
    };
    const outcome = await runSlice(tinyRequest(dir, provider), {
      contextReport: reportPath,
    });
    assert.equal(outcome.stop, "provider_error");
    assert.equal(calls, 2);
    assert.equal(outcome.model_calls, 2);
    const report = await readReport(reportPath);
    assert.equal(report.model_calls, 2);
    assert.deepEqual(
      report.requests.map((r) => [r.final_usage, r.input_tokens]),
      [[true, 10], [false, 7]],
    );
  });
});

/** A provider that answers with `replies` in order and keeps every request it got. */
function scripted(replies: unknown[]): ModelProvider & { requests: string[] } {
  const requests: string[] = [];
  return {
    spec: "scripted:test",
    requests,
    call({ request }) {
      requests.push(JSON.stringify(request));
      const reply = replies[requests.length - 1];
      if (reply === undefined) {
        return Promise.reject(
          new ProviderError("recording_exhausted", "The script ran out"),
        );
      }
      return Promise.resolve({
        arguments: reply,
        usage: {
          input_tokens: null,
          output_tokens: null,
          cache_read_tokens: null,
          cache_write_tokens: null,
        },
        final_usage: true,
      });
    },
  };
}

Deno.test("runSlice() shows refusal notes to the model in the next selection", async (t) => {
  for (const policy of ["legacy", "bounded"] as const) {
    await t.step(policy, async () => {
      await inTinyWorkspace(async (dir) => {
        const provider = scripted([
          { action: "repository.inspect" },
          { paths: ["../outside.txt"] },
          { action: "tests.run" },
        ]);
        const outcome = await runSlice(tinyRequest(dir, provider, 2), {
          contextPolicy: policy,
        });
        // The script runs out at the arguments of step 2.
        assert.equal(outcome.stop, "provider_error");
        assert.equal(provider.requests.length, 4);
        const note =
          'Step 1 (repository.inspect) was refused (path_escape): The path \\"../outside.txt\\" leaves the workspace';
        assert.ok(!provider.requests[1]!.includes(note));
        assert.ok(provider.requests[2]!.includes(note), provider.requests[2]);
      });
    });
  }
});

Deno.test("runSlice() answers a lookup of a result whose descriptor rolled out of the transcript", async () => {
  await inTinyWorkspace(async (dir) => {
    const check = await Deno.readTextFile(`${dir}/check.ts`);
    const replies: unknown[] = [
      { action: "repository.inspect" },
      { paths: ["check.ts"] },
    ];
    // 64 more entries push step 1 out of the 64-entry legacy transcript.
    for (let i = 0; i < 64; i++) {
      replies.push({ action: "repository.inspect" }, { paths: ["answer.txt"] });
    }
    replies.push(
      { $list_results: 0 },
      {
        $read_result: {
          result: "result-1",
          sha256: sha256(check),
          select: { kind: "whole" },
        },
      },
    );
    const provider = scripted(replies);
    const outcome = await runSlice(tinyRequest(dir, provider, 66), {});
    assert.equal(outcome.stop, "provider_error");
    assert.equal(outcome.retrievals, 2);
    const [before, listed, read] = provider.requests.slice(-3) as [
      string,
      string,
      string,
    ];
    assert.ok(!before.includes("repository.inspect check.ts"));
    // The 65th entry rolls a batch of 32 out at once.
    assert.ok(before.includes("(32 earlier entries are not shown)"), before);
    assert.ok(listed.includes("repository.inspect check.ts"));
    assert.ok(
      read.includes(
        JSON.stringify(JSON.stringify({ selected_text: check })).slice(1, -1),
      ),
    );
  });
});

Deno.test("runSlice() writes the context report when the run fails internally", async () => {
  await inTinyWorkspace(async (dir, reportPath) => {
    let snapshots = 0;
    const failure = new Error("The disk is full");
    await assert.rejects(
      runSlice(
        tinyRequest(dir, recorded([sel("tests.run"), arg({})])),
        {
          contextReport: reportPath,
          session: sessionHooks({
            onSnapshot: () =>
              ++snapshots === 2 ? Promise.reject(failure) : Promise.resolve(),
          }),
        },
      ),
      (error: unknown) => error === failure,
    );
    const report = await readReport(reportPath);
    assert.equal(report.outcome.stop, "suspended");
    assert.equal(report.outcome.detail, "Internal failure: The disk is full");
    assert.equal(report.model_calls, 2);
    assert.equal(report.requests.length, 2);
  });
});

Deno.test("runSlice() answers eight plain 8,192-byte lookups in one stage", async () => {
  await inTinyWorkspace(async (dir) => {
    // Plain text: 8,192 bytes that JSON escaping leaves as they are.
    const body = "k".repeat(8192);
    await Deno.writeTextFile(`${dir}/big.txt`, body);
    const whole = {
      $read_result: {
        result: "result-1",
        sha256: sha256(body),
        select: { kind: "whole" },
      },
    };
    const provider = scripted([
      { action: "repository.inspect" },
      { paths: ["big.txt"] },
      { action: "repository.inspect" },
      ...Array.from({ length: 8 }, () => whole),
      { paths: ["answer.txt"] },
    ]);
    const outcome = await runSlice(tinyRequest(dir, provider, 2), {});
    assert.equal(outcome.stop, "step_budget", outcome.detail);
    assert.equal(outcome.retrievals, 8);
    const last = provider.requests.at(-1)!;
    assert.ok(!last.includes("budget_exhausted"));
  });
});
