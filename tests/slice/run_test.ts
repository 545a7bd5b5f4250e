import assert from "node:assert/strict";
import { join } from "node:path";
import { WorkspaceExecutor } from "../../lib/executor/workspace_executor.ts";
import { createHash } from "node:crypto";
import { RecordedProvider } from "../../lib/providers/recorded_provider.ts";
import type { ModelProvider } from "../../lib/providers/model_provider.ts";
import { ProviderError } from "../../lib/providers/provider_error.ts";
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import { runSlice } from "../../lib/slice/run.ts";
import {
  type RunOptions,
  type SliceRequest,
  SliceRequestError,
} from "../../lib/slice/request.ts";
import type { SliceOutcome } from "../../lib/slice/outcome.ts";
import { revisionId } from "../../lib/slice/revision.ts";
import {
  sessionHooks,
  type SliceResume,
  type SliceSnapshot,
} from "../../lib/slice/run_state.ts";
import { recordingPath } from "../e2e/_workspace.ts";
import type { StepPhase } from "../../lib/reference/lookup_session.ts";
import { ScriptedProvider } from "../../lib/testing/scripted_provider.ts";
import { fixtureCopy, tempDir } from "../_kit.ts";

type Call = { phase: StepPhase; arguments: unknown };
/** The environment a run reads provider keys from; the process's when undefined. */
type RunEnv = Record<string, string> | undefined;

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
/** One step: the selection of `action`, then its arguments. */
const step = (
  action: string,
  args: unknown,
): Call[] => [sel(action), arg(args)];
/** The edit that makes the tiny workspace's check pass. */
const EDIT_42 = { files: [{ path: "answer.txt", contents: "42\n" }] };
/** Inspects answer.txt, then writes `contents` to it. */
const inspectAndEdit = (contents: unknown): Call[] => [
  ...step("repository.inspect", { paths: ["answer.txt"] }),
  ...step("repository.edit", { files: [{ path: "answer.txt", contents }] }),
];
/** A reference to the whole of `result`. */
const wholeRef = (result: string, sha256: string) => ({
  result,
  sha256,
  select: { kind: "whole" },
});
/** An edit of `path` composed from one whole-result reference. */
const wholeRefEdit = (path: string, result: string, sha256: string) => ({
  files: [{
    path,
    contents: { segments: [{ ref: wholeRef(result, sha256) }] },
  }],
});
const sha256 = (body: string | Uint8Array) =>
  createHash("sha256").update(body).digest("hex");

/** A tiny workspace with a report path beside it, removed when disposed. */
interface TinyWorkspace extends AsyncDisposable {
  readonly dir: string;
  readonly reportPath: string;
}

/** The tiny workspace's check: it passes once answer.txt says 42. */
const CHECK_TS = [
  'const text = await Deno.readTextFile("answer.txt");',
  'console.log(text.trim() === "42" ? "pass" : "fail");',
  'Deno.exit(text.trim() === "42" ? 0 : 1);',
  "",
].join("\n");

/** Extra files of a tiny workspace: path → text or bytes. */
type Files = Readonly<Record<string, string | Uint8Array>>;

/** A tiny workspace whose check passes once answer.txt says 42, plus `files`. */
async function tinyWorkspace(files: Files = {}): Promise<TinyWorkspace> {
  const root = await tempDir();
  const dir = join(root.path, "workspace");
  await Deno.mkdir(dir);
  const all: Files = { "answer.txt": "41\n", "check.ts": CHECK_TS, ...files };
  for (const [path, body] of Object.entries(all)) {
    await Deno.writeFile(
      join(dir, path),
      typeof body === "string" ? new TextEncoder().encode(body) : body,
    );
  }
  return {
    dir,
    reportPath: join(root.path, "report.json"),
    [Symbol.asyncDispose]: () => root[Symbol.asyncDispose](),
  };
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

/** A slice run on a tiny workspace, which stays until disposed. */
interface TinyRun extends TinyWorkspace {
  readonly outcome: SliceOutcome;
  /** The progress lines (unless the options bring their own `onProgress`). */
  readonly lines: string[];
}

/** Options of {@linkcode tinyRun}: the run's own, and the request's. */
interface TinyRunOptions extends RunOptions {
  readonly maxSteps?: number;
  /** Extra files of the workspace. */
  readonly files?: Files;
  /** Write the context report to the workspace's `reportPath`. */
  readonly report?: boolean;
}

/** Runs `script` (recorded calls, or a provider) on a fresh tiny workspace. */
async function tinyRun(
  script: Call[] | ModelProvider,
  options: TinyRunOptions = {},
): Promise<TinyRun> {
  const { maxSteps, files, report, ...runOptions } = options;
  const ws = await tinyWorkspace(files);
  const lines: string[] = [];
  const provider = Array.isArray(script) ? recorded(script) : script;
  try {
    const outcome = await runSlice(tinyRequest(ws.dir, provider, maxSteps), {
      onProgress: (line) => lines.push(line),
      ...(report === true ? { contextReport: ws.reportPath } : {}),
      ...runOptions,
    });
    return { ...ws, outcome, lines };
  } catch (error) {
    await ws[Symbol.asyncDispose]();
    throw error;
  }
}

/** A session hook that keeps every snapshot. */
function keepSnapshots(): {
  readonly snapshots: SliceSnapshot[];
  onSnapshot(snapshot: SliceSnapshot): Promise<void>;
} {
  const snapshots: SliceSnapshot[] = [];
  return {
    snapshots,
    onSnapshot: (snapshot) => {
      snapshots.push(snapshot);
      return Promise.resolve();
    },
  };
}

Deno.test("runSlice() replays the bug-fix recording to completion", async (t) => {
  for (const policy of ["legacy", "bounded"] as const) {
    await t.step(`under the ${policy} policy`, async () => {
      await using copy = await fixtureCopy("bugfix");
      const recording = JSON.parse(
        await Deno.readTextFile(recordingPath("bugfix")),
      );
      const provider = RecordedProvider.load(recordingPath("bugfix"));
      const reportPath = `${copy.root}/report.json`;
      const lines: string[] = [];
      const outcome = await runSlice(copy.request(provider, 20), {
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
        `${copy.workspace}/src/stats.ts`,
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
    });
  }
});

Deno.test("runSlice() names each revision after the edited paths and contents", async () => {
  await using run = await tinyRun(step("repository.edit", EDIT_42), {
    maxSteps: 1,
  });
  assert.equal(run.outcome.stop, "step_budget");
  // The revision names the whole tree the edit left.
  const executor = await WorkspaceExecutor.start({ workspace: run.dir });
  try {
    assert.equal(
      run.outcome.revision,
      revisionId(1, (await executor.survey()).digest),
    );
  } finally {
    executor.close();
  }
  assert.equal(await Deno.readTextFile(`${run.dir}/answer.txt`), "42\n");
});

Deno.test("runSlice() offers slice.complete only while tests validate the latest revision", async (t) => {
  await t.step(
    "completion before any test run is refused and the loop goes on",
    async () => {
      await using run = await tinyRun([
        sel("slice.complete"),
        ...step("repository.edit", EDIT_42),
        ...step("tests.run", {}),
        ...step("slice.complete", { summary: "answer.txt says 42" }),
      ]);
      const { outcome } = run;
      assert.equal(outcome.stop, "completed", outcome.detail);
      assert.equal(outcome.steps, 4);
      assert.equal(outcome.refusals, 1);
      assert.match(run.lines[0]!, /refused \(not_a_candidate\)/);
      assert.equal(outcome.summary, "answer.txt says 42");
    },
  );

  await t.step(
    "a pass on one revision does not validate the next",
    async () => {
      const notes = { files: [{ path: "notes.txt", contents: "done\n" }] };
      await using run = await tinyRun([
        ...step("repository.edit", EDIT_42),
        ...step("tests.run", {}),
        ...step("repository.edit", notes),
        sel("slice.complete"),
      ], { maxSteps: 4 });
      const { outcome } = run;
      assert.equal(outcome.stop, "step_budget");
      assert.equal(outcome.refusals, 1);
      assert.equal(outcome.latest_test?.exit_code, 0);
      assert.equal(outcome.tests_validate_latest_revision, false);
      assert.match(outcome.revision ?? "", /^rev-2-/);
    },
  );

  await t.step(
    "without a test command completion is admissible at once",
    async () => {
      await using ws = await tinyWorkspace();
      const outcome = await runSlice({
        intent: "Nothing to do",
        workspace: ws.dir,
        maxSteps: 2,
        provider: recorded(step("slice.complete", { summary: "ok" })),
      });
      assert.equal(outcome.stop, "completed");
      assert.equal(outcome.steps, 1);
      assert.equal(outcome.latest_test, null);
    },
  );
});

Deno.test("runSlice() refuses edits whose segments do not resolve and leaves the file alone", async () => {
  await using run = await tinyRun([
    ...step("repository.inspect", { paths: ["answer.txt"] }),
    ...step(
      "repository.edit",
      wholeRefEdit("answer.txt", "result-1", "0".repeat(64)),
    ),
    ...step(
      "repository.edit",
      wholeRefEdit("answer.txt", "result-9", sha256("41\n")),
    ),
  ], { maxSteps: 3, contextPolicy: "bounded" });
  assert.equal(run.outcome.stop, "step_budget");
  assert.equal(run.outcome.refusals, 2);
  assert.match(run.lines[1]!, /refused \(digest_mismatch\)/);
  assert.match(run.lines[2]!, /refused \(unknown_result\)/);
  assert.equal(run.outcome.revision, null);
  assert.equal(await Deno.readTextFile(`${run.dir}/answer.txt`), "41\n");
});

Deno.test("runSlice() composes edits from stored segments", async () => {
  const ref = {
    result: "result-1",
    sha256: sha256("41\n"),
    select: { kind: "bytes", start: 2, end: 3 },
  };
  await using run = await tinyRun([
    ...inspectAndEdit({ segments: [{ literal: "42" }, { ref }] }),
    ...step("tests.run", {}),
    ...step("slice.complete", { summary: "done" }),
  ]);
  assert.equal(run.outcome.stop, "completed", run.outcome.detail);
  assert.equal(await Deno.readTextFile(`${run.dir}/answer.txt`), "42\n");
});

Deno.test("runSlice() applies the lookup budgets per stage", async (t) => {
  await t.step(
    "a ninth argument lookup refuses the step and the loop goes on",
    async () => {
      const lookups = Array.from(
        { length: 9 },
        () => arg({ $list_results: 0 }),
      );
      await using run = await tinyRun([
        sel("repository.inspect"),
        ...lookups,
        ...step("repository.inspect", { paths: ["answer.txt"] }),
      ], { maxSteps: 2 });
      assert.equal(run.outcome.stop, "step_budget");
      assert.equal(run.outcome.steps, 2);
      assert.equal(run.outcome.refusals, 1);
      assert.equal(run.outcome.model_calls, 12);
      assert.equal(run.outcome.retrievals, 8);
    },
  );

  await t.step("a ninth selection lookup suspends the run", async () => {
    const lookups: Call[] = Array.from({ length: 9 }, () => ({
      phase: "selection",
      arguments: { $list_results: 0 },
    }));
    await using run = await tinyRun(lookups);
    assert.equal(run.outcome.stop, "suspended");
    assert.match(run.outcome.detail, /ninth lookup/i);
    assert.equal(run.outcome.steps, 1);
    assert.equal(run.outcome.model_calls, 9);
  });

  await t.step(
    "history lookups under legacy are answered as not available",
    async () => {
      await using run = await tinyRun([
        { phase: "selection", arguments: { $list_history: 0 } },
        ...step("repository.inspect", { paths: ["answer.txt"] }),
      ], { maxSteps: 1 });
      assert.equal(run.outcome.stop, "step_budget");
      assert.equal(run.outcome.retrievals, 0);
      assert.equal(run.outcome.refusals, 0);
    },
  );
});

Deno.test("runSlice() stops with refused after too many refusals in a row", async () => {
  const escape = step("repository.inspect", { paths: ["../x"] });
  await using run = await tinyRun([...escape, ...escape, ...escape], {
    maxConsecutiveRefusals: 3,
  });
  assert.equal(run.outcome.stop, "refused");
  assert.equal(run.outcome.steps, 3);
  assert.equal(run.outcome.refusals, 3);
});

Deno.test("runSlice() reports provider failures as provider_error with a report", async (t) => {
  await t.step("a recording that runs out", async () => {
    await using run = await tinyRun([sel("repository.inspect")], {
      report: true,
      contextPolicy: "bounded",
    });
    assert.equal(run.outcome.stop, "provider_error");
    assert.match(run.outcome.detail, /^recording_exhausted: /);
    // The failed second call counts too.
    assert.equal(run.outcome.model_calls, 2);
    const report = await readReport(run.reportPath);
    assert.equal(report.outcome.stop, "provider_error");
    assert.equal(report.model_calls, 2);
    assert.equal(report.requests.length, 2);
    assert.equal(report.requests[1]?.final_usage, false);
  });

  const failures: [string, string, RunEnv, RegExp][] = [
    ["a bad model spec", "nonsense:model", undefined, /^bad_spec: /],
    [
      "a missing API key",
      "anthropic:claude-sonnet-4-5",
      {},
      /^missing_api_key: /,
    ],
  ];
  for (const [name, provider, env, detail] of failures) {
    await t.step(`${name}, before any work`, async () => {
      await using ws = await tinyWorkspace();
      const outcome = await runSlice(
        { intent: "x", workspace: ws.dir, maxSteps: 1, provider },
        env === undefined ? {} : { env },
      );
      assert.equal(outcome.stop, "provider_error");
      assert.match(outcome.detail, detail);
      assert.equal(outcome.steps, 0);
      assert.equal(outcome.model_calls, 0);
    });
  }
});

Deno.test("runSlice() stops interrupted when the embedder aborts", async () => {
  const controller = new AbortController();
  await using run = await tinyRun(
    step("repository.inspect", { paths: ["answer.txt"] }),
    {
      signal: controller.signal,
      onProgress: () => controller.abort("enough"),
    },
  );
  assert.equal(run.outcome.stop, "interrupted");
  assert.match(run.outcome.detail, /^The run was interrupted: enough$/);
  assert.equal(run.outcome.steps, 1);
  assert.equal(run.outcome.model_calls, 2);
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
  await using ws = await tinyWorkspace();
  const provider = recorded(step("tests.run", {}));
  const outcome = await runSlice(
    { ...tinyRequest(ws.dir, provider), intent: "x".repeat(70_000) },
    { contextReport: ws.reportPath, contextPolicy: "bounded" },
  );
  assert.equal(outcome.stop, "capacity");
  assert.match(outcome.detail, /^request_too_large: /);
  assert.equal(outcome.model_calls, 0);
  assert.equal(provider.callsUsed, 0);
  const report = await readReport(ws.reportPath);
  assert.equal(report.outcome.stop, "capacity");
  assert.equal(report.model_calls, 0);
  // The report never carries prompt text, not even the oversized intent.
  assert.ok(!JSON.stringify(report).includes("xxxxxxxx"));
});

Deno.test("runSlice() writes an edit composed from a whole selection of a BOM file back byte-identical", async () => {
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, 0x34, 0x31, 0x0a]);
  const whole = wholeRef("result-1", sha256(bytes));
  await using run = await tinyRun(
    inspectAndEdit({ segments: [{ ref: whole }] }),
    { maxSteps: 2, files: { "answer.txt": bytes } },
  );
  assert.equal(run.outcome.stop, "step_budget", run.outcome.detail);
  assert.notEqual(run.outcome.revision, null);
  assert.deepEqual(await Deno.readFile(`${run.dir}/answer.txt`), bytes);
});

Deno.test("runSlice() clips model-controlled paths in refusals, so a 40 KB path does not end a bounded run", async (t) => {
  const long = "a".repeat(40_000);
  const cases: [string, unknown][] = [
    ["unknown_result", wholeRefEdit(long, "result-9", "0".repeat(64))],
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
      await using run = await tinyRun(
        [...step("repository.edit", edit), ...step("tests.run", {})],
        { maxSteps: 2, contextPolicy: "bounded" },
      );
      assert.equal(run.outcome.stop, "step_budget", run.outcome.detail);
      assert.equal(run.outcome.refusals, 1);
      assert.match(run.lines[0]!, new RegExp(`refused \\(${code}\\)`));
      assert.match(run.lines[1]!, /tests exit 1/);
      assert.ok(run.outcome.request_bytes.peak <= 65_536);
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
    argumentsReparsed: 0,
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
    ["repository.edit", arg(EDIT_42), /edited 1 file → rev-1-/],
  ];
  for (const [action, call, effect] of cases) {
    await t.step(action, async () => {
      const kept = keepSnapshots();
      await using run = await tinyRun([sel(action), call], {
        maxSteps: 5000,
        contextPolicy: "bounded",
        report: true,
        session: sessionHooks({
          resume: fullArchive(),
          onSnapshot: kept.onSnapshot,
        }),
      });
      const { outcome, lines } = run;
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
      const last = kept.snapshots.at(-1)!;
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
        assert.equal(await Deno.readTextFile(`${run.dir}/answer.txt`), "42\n");
      }
      // So does the context report.
      const report = await readReport(run.reportPath);
      assert.equal(report.outcome.stop, "capacity");
      assert.match(report.outcome.detail, effect);
    });
  }
});

/** Sixteen small files (each holding its own name) and `steps` inspections of all of them. */
function inspectAll(steps: number): TinyRunOptions & { script: Call[] } {
  const paths = Array.from({ length: 16 }, (_, i) => `f${i}.txt`);
  const script: Call[] = [];
  for (let i = 0; i < steps; i++) {
    script.push(...step("repository.inspect", { paths }));
  }
  return {
    script,
    maxSteps: steps,
    files: Object.fromEntries(paths.map((path) => [path, path])),
  };
}

Deno.test("runSlice() stops a bounded run with capacity when the result store fills", async () => {
  // 64 inspections of 16 files fill the store's 1,024 results.
  const { script, ...options } = inspectAll(66);
  await using run = await tinyRun(script, {
    ...options,
    contextPolicy: "bounded",
    report: true,
  });
  assert.equal(run.outcome.stop, "capacity");
  assert.equal(run.outcome.steps, 65);
  assert.match(
    run.outcome.detail,
    /^store_full: Cannot keep the result of repository\.inspect f0\.txt: the result store is full \(1024 results, /,
  );
  assert.match(
    run.outcome.detail,
    /step 65 \(repository\.inspect\) took effect: inspected 16 files$/,
  );
  assert.equal(run.lines.length, 65);
  assert.match(run.lines[64]!, /inspected 16 files/);
  const report = await readReport(run.reportPath);
  assert.equal(report.outcome.stop, "capacity");
  assert.equal(report.model_calls, 130);
});

Deno.test("runSlice() goes on under legacy when the result store fills, with previews and no references", async () => {
  const kept = keepSnapshots();
  const { script, ...options } = inspectAll(66);
  await using run = await tinyRun(script, {
    ...options,
    session: sessionHooks({ onSnapshot: kept.onSnapshot }),
  });
  assert.equal(run.outcome.stop, "step_budget", run.outcome.detail);
  assert.equal(run.outcome.steps, 66);
  const last = kept.snapshots.at(-1)!;
  const report = last.records.at(-1)!.report;
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
  assert.equal(last.results.count, 1024);
});

/** Usage with these input tokens and nothing else known. */
const inputUsage = (input: number, output: number | null) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_tokens: null,
  cache_write_tokens: null,
});

Deno.test("runSlice() counts a failed provider call in model_calls and keeps its usage partial", async () => {
  let calls = 0;
  const provider: ModelProvider = {
    spec: "fake:model",
    call() {
      calls += 1;
      if (calls === 1) {
        return Promise.resolve({
          arguments: { action: "tests.run" },
          usage: inputUsage(10, 2),
          final_usage: true,
        });
      }
      return Promise.reject(
        new ProviderError("provider_http", "The provider answered 500", {
          status: 500,
          usage: inputUsage(7, null),
        }),
      );
    },
  };
  await using run = await tinyRun(provider, { report: true });
  assert.equal(run.outcome.stop, "provider_error");
  assert.equal(calls, 2);
  assert.equal(run.outcome.model_calls, 2);
  const report = await readReport(run.reportPath);
  assert.equal(report.model_calls, 2);
  assert.deepEqual(
    report.requests.map((r) => [r.final_usage, r.input_tokens]),
    [[true, 10], [false, 7]],
  );
});

/**
 * A {@linkcode ScriptedProvider} of `replies` that keeps every request it
 * got, the one past the end of the script included.
 */
function scripted(replies: unknown[]): ModelProvider & { requests: string[] } {
  const script = new ScriptedProvider(replies.map((r) => ({ arguments: r })));
  const requests: string[] = [];
  return {
    spec: script.spec,
    requests,
    call(call) {
      requests.push(JSON.stringify(call.request));
      return script.call(call);
    },
  };
}

Deno.test("runSlice() shows refusal notes to the model in the next selection", async (t) => {
  for (const policy of ["legacy", "bounded"] as const) {
    await t.step(policy, async () => {
      const provider = scripted([
        { action: "repository.inspect" },
        { paths: ["../outside.txt"] },
        { action: "tests.run" },
      ]);
      await using run = await tinyRun(provider, {
        maxSteps: 2,
        contextPolicy: policy,
      });
      // The script runs out at the arguments of step 2.
      assert.equal(run.outcome.stop, "provider_error");
      assert.equal(provider.requests.length, 4);
      const note =
        'Step 1 (repository.inspect) was refused (path_escape): The path \\"../outside.txt\\" leaves the workspace';
      assert.ok(!provider.requests[1]!.includes(note));
      assert.ok(provider.requests[2]!.includes(note), provider.requests[2]);
    });
  }
});

Deno.test("runSlice() answers a lookup of a result whose descriptor rolled out of the transcript", async () => {
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
    { $read_result: wholeRef("result-1", sha256(CHECK_TS)) },
  );
  const provider = scripted(replies);
  await using run = await tinyRun(provider, { maxSteps: 66 });
  assert.equal(run.outcome.stop, "provider_error");
  assert.equal(run.outcome.retrievals, 2);
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
      JSON.stringify(JSON.stringify({ selected_text: CHECK_TS })).slice(1, -1),
    ),
  );
});

Deno.test("runSlice() writes the context report when the run fails internally", async () => {
  await using ws = await tinyWorkspace();
  let snapshots = 0;
  const failure = new Error("The disk is full");
  await assert.rejects(
    runSlice(
      tinyRequest(ws.dir, recorded(step("tests.run", {}))),
      {
        contextReport: ws.reportPath,
        session: sessionHooks({
          onSnapshot: () =>
            ++snapshots === 2 ? Promise.reject(failure) : Promise.resolve(),
        }),
      },
    ),
    (error: unknown) => error === failure,
  );
  const report = await readReport(ws.reportPath);
  assert.equal(report.outcome.stop, "suspended");
  assert.equal(report.outcome.detail, "Internal failure: The disk is full");
  assert.equal(report.model_calls, 2);
  assert.equal(report.requests.length, 2);
});

Deno.test("runSlice() answers eight plain 8,192-byte lookups in one stage", async () => {
  // Plain text: 8,192 bytes that JSON escaping leaves as they are.
  const body = "k".repeat(8192);
  const whole = { $read_result: wholeRef("result-1", sha256(body)) };
  const provider = scripted([
    { action: "repository.inspect" },
    { paths: ["big.txt"] },
    { action: "repository.inspect" },
    ...Array.from({ length: 8 }, () => whole),
    { paths: ["answer.txt"] },
  ]);
  await using run = await tinyRun(provider, {
    maxSteps: 2,
    files: { "big.txt": body },
  });
  assert.equal(run.outcome.stop, "step_budget", run.outcome.detail);
  assert.equal(run.outcome.retrievals, 8);
  const last = provider.requests.at(-1)!;
  assert.ok(!last.includes("budget_exhausted"));
});
