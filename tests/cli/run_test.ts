import assert from "node:assert/strict";
import { parseRunArguments } from "../../lib/cli/run.ts";
import { parseDuration } from "../../lib/cli/_args.ts";
import { splitCommand } from "../../lib/cli/_run_flags.ts";
import { exitCodeOf, UsageError } from "../../lib/cli/_io.ts";
import { CONTEXT_REPORT_KEYS, loomIn, tempDir } from "../_kit.ts";
import { checkParser } from "./_arguments.ts";

const BASE = ["--workspace", "ws", "--model", "recorded:r.json"];

const NEW_RUN = {
  kind: "run",
  workspace: "ws",
  model: "recorded:r.json",
  maxSteps: 40,
  modelTimeoutMs: 120_000,
  contextPolicy: "legacy",
  json: false,
  confinement: {},
  dryRun: false,
} as const;

Deno.test("parseRunArguments() reads every option and touches nothing", async (t) => {
  await checkParser(t, parseRunArguments, [
    ["with defaults", [...BASE, "--intent", "Fix it"], {
      ...NEW_RUN,
      intent: { text: "Fix it" },
    }],
    ["with every option given", [
      ...BASE,
      "--intent-file",
      "task.md",
      "--base-url",
      "http://127.0.0.1:8000/v1",
      "--test",
      "deno run --allow-read 'check me.ts'",
      "--test-timeout",
      "90s",
      "--max-steps",
      "7",
      "--model-timeout",
      "300ms",
      "--run-timeout",
      "10m",
      "--context-policy",
      "bounded",
      "--context-report",
      "out.json",
      "--record",
      "rec.json",
      "--session",
      "s",
      "--persist-config",
      "p.json",
      "--persist-threshold",
      "tests.run=5",
      "--test-env",
      "LOOM_TEST_SURELY_UNSET_VARIABLE",
      "--test-network",
      "--unconfined-tests",
      "--protect",
      "tests/**",
      "--edit-test-files",
      "--json",
    ], {
      ...NEW_RUN,
      intent: { file: "task.md" },
      baseUrl: "http://127.0.0.1:8000/v1",
      test: {
        command: ["deno", "run", "--allow-read", "check me.ts"],
        timeoutMs: 90_000,
      },
      maxSteps: 7,
      modelTimeoutMs: 300,
      runTimeoutMs: 600_000,
      contextPolicy: "bounded",
      contextReport: "out.json",
      record: "rec.json",
      session: "s",
      persistConfig: "p.json",
      persistThresholds: { overrides: { "tests.run": 5 }, warnings: [] },
      // Names only: the variable's value is read when the run starts.
      confinement: {
        env: ["LOOM_TEST_SURELY_UNSET_VARIABLE"],
        network: true,
        unconfined: true,
        protect: ["tests/**"],
        protectNamedFiles: false,
      },
      json: true,
    }],
    ["--help wins", ["--help", "--max-steps", "0"], {
      help: /^Usage: loom run /,
    }],
    ["a resume", ["--resume", "s", "--max-steps", "9", "--json"], {
      kind: "resume",
      root: "s",
      maxSteps: 9,
      json: true,
      confinement: {},
    }],
    ["a resume with every flag it takes", [
      "--resume=s",
      "--context-report",
      "r.json",
      "--base-url",
      "http://127.0.0.1:1/v1",
      "--model-timeout",
      "2s",
      "--run-timeout",
      "1m",
      "--persist-config",
      "p.json",
      "--persist-threshold",
      "tests.run=7",
      "--protect",
      "a/*",
    ], {
      kind: "resume",
      root: "s",
      contextReport: "r.json",
      baseUrl: "http://127.0.0.1:1/v1",
      modelTimeoutMs: 2000,
      runTimeoutMs: 60_000,
      persistConfig: "p.json",
      persistThresholds: { overrides: { "tests.run": 7 }, warnings: [] },
      json: false,
      confinement: { protect: ["a/*"] },
    }],
    ["a resume's --help", ["--resume", "s", "-h"], {
      help: /^Usage: loom run --resume DIR/,
    }],
  ]);
});

Deno.test("parseRunArguments() rejects bad usage with a UsageError", async (t) => {
  const x = [...BASE, "--intent", "x"];
  await checkParser(t, parseRunArguments, [
    ["an unknown option", [...x, "--nope"], {
      usage: "Unknown option --nope",
    }],
    ["no intent", BASE, {
      usage: "Missing the task: give --intent TEXT or --intent-file F",
    }],
    ["both intents", [...x, "--intent-file", "f"], {
      usage: "Give --intent or --intent-file, not both",
    }],
    ["no workspace", ["--model", "m", "--intent", "x"], {
      usage: "Missing --workspace DIR",
    }],
    ["no model", ["--workspace", "w", "--intent", "x"], {
      usage: "Missing --model SPEC",
    }],
    ["a bad policy", [...x, "--context-policy", "wide"], {
      usage: "Invalid --context-policy wide: expected legacy or bounded",
    }],
    ["a bad step budget", [...x, "--max-steps", "0"], {
      usage: "Invalid --max-steps 0: expected a positive integer",
    }],
    ["a timeout without a test", [...x, "--test-timeout", "5s"], {
      usage: "--test-timeout needs --test",
    }],
    ["a model timeout that is not a duration", [
      ...x,
      "--model-timeout",
      "soon",
    ], {
      usage:
        "Invalid --model-timeout soon: expected a duration such as 120s, 2m or 500ms",
    }],
    ["a zero run timeout", [...x, "--run-timeout", "0s"], {
      usage: /^Invalid --run-timeout 0s/,
    }],
    ["an unterminated quote", [...x, "--test", "deno 'run"], {
      usage: "Invalid --test deno 'run: unterminated quote",
    }],
    ["an empty test command", [...x, "--test", "  "], {
      usage: "Invalid --test: empty command",
    }],
    ["a positional argument", [...x, "extra"], {
      usage:
        "Unexpected argument extra: this command takes no positional arguments",
    }],
    ["a persistence flag without --session", [
      ...x,
      "--persist-threshold",
      "nope",
    ], {
      usage:
        "--persist-threshold needs --session: results are persisted only in a session",
    }],
    ["a bad --persist-threshold", [
      ...x,
      "--session",
      "s",
      "--persist-threshold",
      "nope",
    ], { usage: /^Cannot use --persist-threshold "nope": expected TOOL=N/ }],
    ["a confinement flag without --test", [...x, "--test-network"], {
      usage:
        "--test-env, --test-network, --unconfined-tests, --protect and --edit-test-files need --test",
    }],
    ["a malformed --test-env name", [
      ...x,
      "--test",
      "t",
      "--test-env",
      "A-B",
    ], {
      usage:
        "Invalid --test-env A-B: expected a variable name such as NODE_OPTIONS",
    }],
    ["a --protect glob leaving the workspace", [
      ...x,
      "--test",
      "t",
      "--protect",
      "../x",
    ], {
      usage:
        "Invalid --protect ../x: expected a glob relative to the workspace, such as tests/**",
    }],
    ["a resume with a stored flag", ["--resume", "s", "--model", "m"], {
      usage:
        "--resume continues with the workspace, intent, model, test command and policy stored in the session; drop --model",
    }],
    ["a resume without its DIR", ["--resume="], {
      usage: "Missing --resume DIR",
    }],
    ["a resume with a bad budget", ["--resume", "s", "--max-steps", "x"], {
      usage: "Invalid --max-steps x: expected a positive integer",
    }],
  ]);
});

Deno.test("parseDuration() accepts ms, s, m and bare seconds", () => {
  assert.equal(parseDuration("500ms", "--t"), 500);
  assert.equal(parseDuration("120s", "--t"), 120_000);
  assert.equal(parseDuration("2m", "--t"), 120_000);
  assert.equal(parseDuration("1.5", "--t"), 1_500);
  assert.equal(parseDuration(undefined, "--t"), undefined);
  for (const bad of ["", "0s", "-1s", "1h", "fast"]) {
    assert.throws(() => parseDuration(bad, "--t"), UsageError, bad);
  }
});

Deno.test("splitCommand() splits on spaces and honours quotes and escapes", () => {
  assert.deepEqual(splitCommand("deno  run check.ts"), [
    "deno",
    "run",
    "check.ts",
  ]);
  assert.deepEqual(splitCommand(`a "b c" 'd "e"' f\\ g ""`), [
    "a",
    "b c",
    'd "e"',
    "f g",
    "",
  ]);
  assert.throws(() => splitCommand("   "), UsageError);
});

Deno.test("exitCodeOf() maps stops to the documented exit codes", () => {
  assert.equal(exitCodeOf("completed"), 0);
  for (
    const stop of ["step_budget", "refused", "suspended", "capacity"] as const
  ) {
    assert.equal(exitCodeOf(stop), 1);
  }
  assert.equal(exitCodeOf("provider_error"), 3);
  assert.equal(exitCodeOf("confinement_unavailable"), 3);
});

Deno.test("loom run writes the asked-for context report when it fails before the slice starts", async (t) => {
  await using wsDir = await tempDir();
  await using outDir = await tempDir();
  const [ws, out] = [wsDir.path, outDir.path];
  await Deno.writeTextFile(
    `${out}/rec.json`,
    JSON.stringify({ format: "loom-recording/1", calls: [] }),
  );
  const model = ["--model", `recorded:${out}/rec.json`];
  const start = ["--workspace", ws, "--intent", "x", ...model];
  const cases: [string, string[], RegExp][] = [
    ["a nonexistent workspace", [
      "--workspace",
      `${ws}/missing`,
      "--intent",
      "x",
      ...model,
    ], /Cannot use --workspace/],
    ["an unreadable --intent-file", [
      "--workspace",
      ws,
      "--intent-file",
      `${out}/no-intent.txt`,
      ...model,
    ], /Cannot read --intent-file/],
    ["a --session root inside the workspace", [
      ...start,
      "--session",
      `${ws}/session`,
    ], /session/i],
    ["a bad persistence config", [
      ...start,
      "--session",
      `${out}/session`,
      "--persist-config",
      `${out}/no-config.json`,
    ], /no-config\.json/],
    ["a session that cannot be resumed", [
      "--resume",
      `${out}/no-session`,
    ], /no-session/],
    ["a model spec that names no provider", [
      ...start.slice(0, 4),
      "--model",
      "nonsense:model",
    ], /bad_spec: /],
  ];
  for (const [name, args, detail] of cases) {
    await t.step(name, async () => {
      const path = `${out}/report.json`;
      await Deno.remove(path).catch(() => {});
      const resume = args[0] === "--resume";
      const result = await loomIn(
        "run",
        ...args,
        "--context-report",
        path,
        ...(resume ? [] : ["--context-policy", "bounded"]),
      );
      assert.equal(result.code, 2, result.stderr);
      const report = JSON.parse(await Deno.readTextFile(path));
      assert.deepEqual(Object.keys(report), CONTEXT_REPORT_KEYS);
      assert.equal(report.policy, resume ? "legacy" : "bounded");
      assert.equal(
        report.outcome.stop,
        name.includes("model spec") ? "provider_error" : "suspended",
      );
      assert.match(report.outcome.detail, /^The slice did not start: /);
      assert.match(report.outcome.detail, detail);
      assert.deepEqual(report.requests, []);
      assert.equal(report.model_calls, 0);
    });
  }
});
