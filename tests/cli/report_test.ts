// `loom report`: golden renderings of the reports of three real runs of the
// bug-fix recording (completed, stopped by its step budget, failed when the
// recording runs out), the escaping of a stop detail a model can shape, the
// cost estimate from provider counters, and the refusals of bad input.
// Golden files: tests/testdata/report/; rewrite them with UPDATE_GOLDEN=1.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type ContextReport,
  ContextReportBuilder,
} from "../../lib/briefing/context_report.ts";
import { parseReportArguments } from "../../lib/cli/report.ts";
import { UsageError } from "../../lib/cli/_io.ts";
import { loomIn, loomInWith, tempDir, testdata } from "../_kit.ts";
import {
  intentPath,
  prepareWorkspace,
  recordingPath,
} from "../e2e/_workspace.ts";

const UPDATE = Deno.env.get("UPDATE_GOLDEN") === "1";

/**
 * Runs the bug-fix recording with `loom run` and returns its report. The
 * same requests on every machine: the test command is `deno run check.ts`
 * (this Deno, through PATH) under Deno's own confinement (`LOOM_BWRAP=""`),
 * since both the command and the confinement are in what the model sees.
 */
async function reportOf(
  dir: string,
  options: { maxSteps: number; recording?: string },
): Promise<{ code: number; report: ContextReport; path: string }> {
  await using prepared = await prepareWorkspace("bugfix");
  const bin = join(dir, "bin");
  await Deno.mkdir(bin, { recursive: true });
  await Deno.symlink(Deno.execPath(), join(bin, "deno")).catch((error) => {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  });
  const path = join(dir, `report-${crypto.randomUUID()}.json`);
  const env = {
    PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`,
    LOOM_BWRAP: "",
  };
  const result = await loomInWith(
    { env },
    "run",
    "--workspace",
    prepared.workspace,
    "--intent-file",
    intentPath("bugfix"),
    "--model",
    `recorded:${options.recording ?? recordingPath("bugfix")}`,
    "--test",
    "deno run check.ts",
    "--max-steps",
    String(options.maxSteps),
    "--context-policy",
    "bounded",
    "--context-report",
    path,
  );
  const report = JSON.parse(await Deno.readTextFile(path)) as ContextReport;
  return { code: result.code, report, path };
}

/**
 * The report with its timings fixed and the temp folder named `$TMP`, so the
 * rendering is reproducible.
 */
function reproducible(report: ContextReport, dir: string): ContextReport {
  return {
    ...report,
    outcome: {
      ...report.outcome,
      detail: report.outcome.detail.replaceAll(dir, "$TMP"),
    },
    requests: report.requests.map((r) => ({ ...r, elapsed_ms: 0 })),
    elapsed_ms: 1234.5,
  };
}

async function rendered(
  dir: string,
  report: ContextReport,
  ...flags: string[]
): Promise<string> {
  const path = join(dir, `fixed-${crypto.randomUUID()}.json`);
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2));
  const result = await loomIn("report", ...flags, path);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, "");
  return result.stdout;
}

async function assertGolden(name: string, actual: string): Promise<void> {
  const file = testdata(`report/${name}`);
  if (UPDATE) await Deno.writeTextFile(file, actual);
  assert.equal(actual, await Deno.readTextFile(file), `golden ${name}`);
}

Deno.test("loom report --markdown renders the reports of a completed, a stopped and a failed run as the golden files", async (t) => {
  await using dir = await tempDir();
  const recording = JSON.parse(
    await Deno.readTextFile(recordingPath("bugfix")),
  ) as { calls: unknown[] };
  const short = join(dir.path, "short.json");
  // Enough calls for the first edit, then the recording runs out.
  await Deno.writeTextFile(
    short,
    JSON.stringify({ ...recording, calls: recording.calls.slice(0, 7) }),
  );
  const cases = [
    ["completed", { maxSteps: 20 }, 0, "completed"],
    ["stopped", { maxSteps: 3 }, 1, "step_budget"],
    ["failed", { maxSteps: 20, recording: short }, 3, "provider_error"],
  ] as const;
  for (const [name, options, exit, stop] of cases) {
    await t.step(`${name} (${stop}, exit ${exit})`, async () => {
      const run = await reportOf(dir.path, options);
      assert.equal(run.code, exit);
      assert.equal(run.report.outcome.stop, stop);
      const fixed = reproducible(run.report, dir.path);
      const markdown = await rendered(dir.path, fixed, "--markdown");
      await assertGolden(`${name}.md`, markdown);
      await assertGolden(`${name}.txt`, await rendered(dir.path, fixed));
      // Rendered from the report alone: nothing of the prompt or the files.
      assert.ok(!markdown.includes("median"), "no file text");
      assert.match(markdown, /\| Bytes by part \| [a-z ]+ \d+%/);
      // Version 1 (no version, no per-request figures) reads too, the same
      // but for the bytes-by-part row it cannot have.
      const { version: _, ...rest } = fixed;
      const v1: ContextReport = {
        ...rest,
        requests: fixed.requests.map((r) => {
          const {
            step: _s,
            checkpoint: _c,
            bytes_by_part: _b,
            cache_order_bytes: _o,
            cache_breakpoints: _p,
            ...line
          } = r;
          return line;
        }),
      };
      assert.equal(
        await rendered(dir.path, v1, "--markdown"),
        markdown.replace(/\| Bytes by part \|[^\n]*\n/, ""),
      );
    });
  }
});

Deno.test("loom report names the validated revision and each test run's exit and revision", async () => {
  await using dir = await tempDir();
  const run = await reportOf(dir.path, { maxSteps: 20 });
  const r = run.report;
  assert.equal(r.steps, 7);
  assert.equal(r.tests_validate_latest_revision, true);
  assert.match(r.revision ?? "", /^rev-2-[0-9a-f]{12}$/);
  assert.deepEqual(
    r.tests.map((t) => [t.step, t.exit_code, t.revision?.slice(0, 6)]),
    [[3, 1, "rev-1-"], [6, 0, "rev-2-"]],
  );
  const markdown = await rendered(dir.path, r, "--markdown");
  assert.ok(
    markdown.includes(`| Tests validated | \`${r.revision}\` (the latest`),
  );
  assert.ok(markdown.includes(`| 6 | \`${r.revision}\` | 0 | passed |`));
});

Deno.test("loom report --markdown escapes a stop detail a model can shape", async () => {
  await using dir = await tempDir();
  const hostile =
    "Refused ../x: <img src=x onerror=alert(1)> [click](https://evil.example) ![i](http://e/i.png) | cell | **bold** `code` @octocat #1 $x$ www.evil.example :smile:\n# heading";
  const report = new ContextReportBuilder("bounded").build(
    { stop: "refused", detail: hostile },
    { steps: 8, elapsedMs: 5 },
  );
  const markdown = await rendered(dir.path, report, "--markdown");
  const detail = markdown.split("\n").find((l) => l.startsWith("> "))!;
  for (
    const raw of [
      "<img",
      "[click]",
      "![",
      " | cell",
      "**",
      "`code`",
      " @octocat",
      " #1",
      "$x$",
      "www.",
      "https://",
      ":smile:",
    ]
  ) {
    assert.ok(!detail.includes(raw), `${raw} survives in ${detail}`);
  }
  assert.ok(detail.includes("&lt;img"), detail);
  assert.equal(
    markdown.split("\n").filter((l) => l.startsWith("#")).length,
    1,
    "the detail's newline makes no heading",
  );
});

Deno.test("loom report estimates the cost from the provider's counters", async () => {
  await using dir = await tempDir();
  const builder = new ContextReportBuilder("bounded");
  const request = {
    system: [{ type: "text" as const, text: "s" }],
    messages: [{
      role: "user" as const,
      content: [{ type: "text" as const, text: "m" }],
    }],
    tool: { name: "t", description: "d", input_schema: {} },
    tool_choice: { type: "tool" as const, name: "t" },
  };
  builder.addRequest(request, {
    phase: "selection",
    usage: {
      input_tokens: 1_000_000,
      cache_read_tokens: 1_000_000,
      cache_write_tokens: 0,
      output_tokens: 100_000,
    },
  });
  builder.addRequest(request, { phase: "arguments" });
  const report = builder.build({ stop: "completed", detail: "Done" }, {
    model: "anthropic:claude-sonnet-4-5-20250929",
    steps: 1,
    elapsedMs: 10,
  });
  const markdown = await rendered(dir.path, report, "--markdown");
  // 1M uncached at $3, 1M read at $0.30, 100k out at $15/M = $4.80.
  assert.match(
    markdown,
    /\| Estimated cost \| \\\$4\.8000 \(claude-sonnet-4-5 at .*; 1 of 2 calls reported usage\) \|/,
  );
  assert.match(
    markdown,
    /\| Cache reads \/ writes \| 1,000,000 tokens read, 0 written \|/,
  );
});

Deno.test("loom report refuses a missing file, a file that is no report, and bad usage (exit 2)", async (t) => {
  await using dir = await tempDir();
  const notJson = join(dir.path, "x.json");
  await Deno.writeTextFile(notJson, "{");
  const outcome = join(dir.path, "outcome.json");
  await Deno.writeTextFile(outcome, JSON.stringify({ stop: "completed" }));
  const cases: [string, string[], RegExp][] = [
    [
      "a missing file",
      [join(dir.path, "none.json")],
      /Cannot read FILE .*none\.json/,
    ],
    [
      "a file that is not JSON",
      [notJson],
      /report_invalid: Context report .*x\.json is not JSON/,
    ],
    [
      "a JSON file that is no report",
      [outcome],
      /report_invalid: .*outcome\.json is not a context report/,
    ],
    ["no FILE", ["--markdown"], /Expected exactly one FILE/],
  ];
  for (const [name, args, message] of cases) {
    await t.step(name, async () => {
      const result = await loomIn("report", ...args);
      assert.equal(result.code, 2);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /^loom report: /);
      assert.match(result.stderr, message);
    });
  }
  await t.step(
    "parseReportArguments() reads every option and touches nothing",
    () => {
      assert.deepEqual(parseReportArguments(["--markdown", "r.json"]), {
        file: "r.json",
        markdown: true,
      });
      assert.deepEqual(
        parseReportArguments([
          "--html",
          "r.json",
          "r.html",
          "--requests",
          "q.jsonl",
        ]),
        {
          file: "r.json",
          markdown: false,
          html: "r.html",
          requests: "q.jsonl",
        },
      );
      for (
        const bad of [
          ["--html", "r.json"],
          ["--html", "r.json", "r.html", "extra.html"],
          ["--html", "--markdown", "r.json", "r.html"],
          ["--requests", "q.jsonl", "r.json"],
        ]
      ) {
        assert.throws(
          () => parseReportArguments(bad),
          UsageError,
          bad.join(" "),
        );
      }
    },
  );
});
