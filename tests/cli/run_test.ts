import assert from "node:assert/strict";
import {
  parseDuration,
  parseRunArguments,
  splitCommand,
} from "../../lib/cli/run.ts";
import { exitCodeOf, UsageError } from "../../lib/cli/_io.ts";
import { loom } from "../_kit.ts";

const BASE = ["--workspace", "ws", "--model", "recorded:r.json"];

Deno.test("parseRunArguments() reads every option", async (t) => {
  await t.step("with defaults", () => {
    const parsed = parseRunArguments([...BASE, "--intent", "Fix it"]);
    assert.ok(!parsed.help);
    assert.deepEqual(parsed.intent, { text: "Fix it" });
    assert.deepEqual(parsed.parsed, {
      workspace: "ws",
      model: "recorded:r.json",
      maxSteps: 40,
      modelTimeoutMs: 120_000,
      contextPolicy: "legacy",
      json: false,
    });
  });

  await t.step("with every option given", () => {
    const parsed = parseRunArguments([
      ...BASE,
      "--intent-file",
      "task.md",
      "--base-url",
      "http://127.0.0.1:8000/v1",
      "--test",
      "deno run --allow-read 'check me.ts'",
      "--test-timeout",
      "2m",
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
      "--json",
    ]);
    assert.ok(!parsed.help);
    assert.deepEqual(parsed.intent, { file: "task.md" });
    assert.deepEqual(parsed.parsed, {
      workspace: "ws",
      model: "recorded:r.json",
      baseUrl: "http://127.0.0.1:8000/v1",
      test: {
        command: ["deno", "run", "--allow-read", "check me.ts"],
        timeoutMs: 120_000,
      },
      maxSteps: 7,
      modelTimeoutMs: 300,
      runTimeoutMs: 600_000,
      contextPolicy: "bounded",
      contextReport: "out.json",
      json: true,
    });
  });

  await t.step("--help wins", () => {
    assert.deepEqual(parseRunArguments(["--help"]), { help: true });
  });
});

Deno.test("parseRunArguments() rejects bad usage with a UsageError", async (t) => {
  const cases: [string, string[], RegExp][] = [
    ["an unknown option", [...BASE, "--intent", "x", "--nope"], /nope/],
    ["no intent", BASE, /--intent TEXT or --intent-file F/],
    [
      "both intents",
      [...BASE, "--intent", "x", "--intent-file", "f"],
      /not both/,
    ],
    ["no workspace", ["--model", "m", "--intent", "x"], /--workspace/],
    [
      "a bad policy",
      [...BASE, "--intent", "x", "--context-policy", "wide"],
      /legacy or bounded/,
    ],
    [
      "a bad step budget",
      [...BASE, "--intent", "x", "--max-steps", "0"],
      /positive integer/,
    ],
    ["a timeout without a test", [
      ...BASE,
      "--intent",
      "x",
      "--test-timeout",
      "5s",
    ], /needs --test/],
    [
      "a model timeout that is not a duration",
      [...BASE, "--intent", "x", "--model-timeout", "soon"],
      /^Invalid --model-timeout soon: expected a duration/,
    ],
    [
      "a zero run timeout",
      [...BASE, "--intent", "x", "--run-timeout", "0s"],
      /^Invalid --run-timeout 0s/,
    ],
    [
      "an unterminated quote",
      [...BASE, "--intent", "x", "--test", "deno 'run"],
      /unterminated/,
    ],
    [
      "a positional argument",
      [...BASE, "--intent", "x", "extra"],
      /extra|positional/i,
    ],
  ];
  for (const [name, args, message] of cases) {
    await t.step(name, () => {
      assert.throws(
        () => parseRunArguments(args),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
      );
    });
  }
});

Deno.test("parseDuration() accepts ms, s, m and bare seconds", () => {
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("120s"), 120_000);
  assert.equal(parseDuration("2m"), 120_000);
  assert.equal(parseDuration("1.5"), 1_500);
  for (const bad of ["", "0s", "-1s", "1h", "fast"]) {
    assert.throws(() => parseDuration(bad), UsageError, bad);
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
  const ws = await Deno.makeTempDir({ prefix: "loom-cli-start-" });
  const out = await Deno.makeTempDir({ prefix: "loom-cli-report-" });
  await Deno.writeTextFile(
    `${out}/rec.json`,
    JSON.stringify({ format: "loom-recording/1", calls: [] }),
  );
  const model = ["--model", `recorded:${out}/rec.json`];
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
      "--workspace",
      ws,
      "--intent",
      "x",
      ...model,
      "--session",
      `${ws}/session`,
    ], /session/i],
    ["a bad persistence config", [
      "--workspace",
      ws,
      "--intent",
      "x",
      ...model,
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
      "--workspace",
      ws,
      "--intent",
      "x",
      "--model",
      "nonsense:model",
    ], /bad_spec: /],
  ];
  try {
    for (const [name, args, detail] of cases) {
      await t.step(name, async () => {
        const path = `${out}/report.json`;
        await Deno.remove(path).catch(() => {});
        const result = await loom(
          "run",
          ...args,
          "--context-report",
          path,
          ...(args[0] === "--resume" ? [] : ["--context-policy", "bounded"]),
        );
        assert.equal(result.code, 2, result.stderr);
        const report = JSON.parse(await Deno.readTextFile(path));
        assert.deepEqual(Object.keys(report), [
          "policy",
          "outcome",
          "requests",
          "checkpoints",
          "retrievals",
          "model_calls",
          "elapsed_ms",
        ]);
        assert.equal(
          report.policy,
          args[0] === "--resume" ? "legacy" : "bounded",
        );
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
  } finally {
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(out, { recursive: true });
  }
});
