/** `loom cost` in-process through main(). */
import assert from "node:assert/strict";
import { type CostArguments, parseCostArguments } from "../../lib/cli/cost.ts";
import { loomIn } from "../_kit.ts";
import { checkParser } from "./_arguments.ts";
import {
  fixtureWorkspace,
  intentPath,
  recordingPath,
  snapshotTree,
} from "../e2e/_workspace.ts";

const BASE = [
  "cost",
  "--recording",
  recordingPath("bugfix"),
  "--workspace",
  fixtureWorkspace("bugfix"),
  "--intent-file",
  intentPath("bugfix"),
  "--test",
  `${Deno.execPath()} run check.ts`,
];

Deno.test("loom cost --compare prices legacy and bounded side by side and leaves the workspace alone", async () => {
  const before = await snapshotTree(fixtureWorkspace("bugfix"));
  const c = await loomIn(
    ...BASE,
    "--model",
    "anthropic:claude-sonnet-4-5",
    "--compare",
    "--json",
  );
  assert.equal(c.code, 0, c.stderr);
  const { runs } = JSON.parse(c.stdout);
  assert.deepEqual(runs.map((r: { policy: string }) => r.policy), [
    "legacy",
    "bounded",
  ]);
  for (const run of runs) {
    assert.equal(run.stop, "completed");
    assert.equal(run.cost.priced_as, "claude-sonnet-4-5");
    assert.equal(run.cost.tokenizer.estimate, true);
    assert.ok(run.cost.total.input_tokens > 0);
    assert.ok(run.cost.total.cache_read_tokens > 0);
    assert.equal(run.cost.requests.length, 15);
  }
  assert.match(c.stderr, /legacy: 15 calls replayed \(completed\)/);
  assert.deepEqual(await snapshotTree(fixtureWorkspace("bugfix")), before);
});

Deno.test("loom cost prints a table with the tokenizer's error bound", async () => {
  const c = await loomIn(...BASE, "--model", "openai:gpt-4.1");
  assert.equal(c.code, 0, c.stderr);
  assert.match(c.stdout, /openai:gpt-4\.1 priced as gpt-4\.1/);
  assert.match(c.stdout, /o200k_base/);
  assert.match(c.stdout, /cache hit ratio\s+\d+\.\d%/);
  assert.match(c.stdout, /input \$\s+\$\d+\.\d{4}/);
});

Deno.test("loom cost refuses bad input with exit 2", async (t) => {
  const cases: [string, string[], RegExp][] = [
    [
      "a recorded model",
      ["--model", "recorded:x.json"],
      /anthropic:MODEL or openai:MODEL/,
    ],
    ["an unpriced model", ["--model", "openai:gpt-99"], /Cannot price model/],
    ["a missing price file", [
      "--model",
      "openai:gpt-4.1",
      "--prices",
      "/nonexistent/prices.json",
    ], /--prices/],
  ];
  for (const [name, extra, pattern] of cases) {
    await t.step(name, async () => {
      const c = await loomIn(...BASE, ...extra);
      if (name === "an unpriced model") {
        // A coded failure, not a usage error: exit 3 with its code.
        assert.notEqual(c.code, 0);
      } else assert.equal(c.code, 2, c.stderr);
      assert.match(c.stderr, pattern);
    });
  }
});

const PARSED: CostArguments = {
  recording: "r.json",
  workspace: "ws",
  intent: { text: "x" },
  wire: "anthropic",
  model: "claude-sonnet-4-5",
  maxSteps: 200,
  policies: ["legacy"],
  limits: {},
  callIntervalMs: 5000,
  perRequest: false,
  json: false,
};

Deno.test("parseCostArguments() reads the settings to compare", async (t) => {
  const args =
    "--recording r.json --workspace ws --intent x --model anthropic:claude-sonnet-4-5"
      .split(" ");
  await checkParser(t, parseCostArguments, [
    ["with defaults, nothing read", args, PARSED],
    ["with every setting", [
      ...args,
      "--context-policy",
      "bounded",
      "--retire-target",
      "24576",
      "--retire-above",
      "40960",
      "--roll-batch",
      "8",
      "--call-interval",
      "2s",
      "--test",
      "deno run check.ts",
      "--test-timeout",
      "1m",
      "--max-steps",
      "9",
      "--prices",
      "p.json",
      "--per-request",
      "--json",
    ], {
      ...PARSED,
      policies: ["bounded"],
      limits: {
        transcriptRollBatch: 8,
        retireTargetBytes: 24576,
        retireAboveBytes: 40960,
      },
      callIntervalMs: 2000,
      test: { command: ["deno", "run", "check.ts"], timeoutMs: 60_000 },
      maxSteps: 9,
      prices: "p.json",
      perRequest: true,
      json: true,
    }],
    ["--compare", [...args.slice(0, 6), "--model", "openai:o3", "--compare"], {
      ...PARSED,
      wire: "openai",
      model: "o3",
      policies: ["legacy", "bounded"],
    }],
    ["--help wins", [...args, "--help"], { help: /^Usage: loom cost / }],
    ["--compare with a policy", [
      ...args,
      "--compare",
      "--context-policy",
      "legacy",
    ], { usage: "Give --context-policy or --compare, not both" }],
    ["a recorded model", [...args, "--model", "recorded:x.json"], {
      usage:
        "Invalid --model recorded:x.json: loom cost prices anthropic:MODEL or openai:MODEL",
    }],
    ["no recording", args.slice(2), { usage: "Missing --recording PATH" }],
    ["a bad --call-interval names its flag", [
      ...args,
      "--call-interval",
      "soon",
    ], {
      usage:
        "Invalid --call-interval soon: expected a duration such as 120s, 2m or 500ms",
    }],
    ["a bad --roll-batch", [...args, "--roll-batch", "0"], {
      usage: "Invalid --roll-batch 0: expected a positive integer",
    }],
    ["a bad policy", [...args, "--context-policy", "wide"], {
      usage: "Invalid --context-policy wide: expected legacy or bounded",
    }],
  ]);
});
