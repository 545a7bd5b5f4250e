/** `loom cost` in-process through main(). */
import assert from "node:assert/strict";
import { main } from "../../lib/cli/main.ts";
import { parseCostArguments } from "../../lib/cli/cost.ts";
import { UsageError } from "../../lib/cli/_io.ts";
import {
  fixtureWorkspace,
  intentPath,
  recordingPath,
  snapshotTree,
} from "../e2e/_workspace.ts";

function capture() {
  let out = "";
  let err = "";
  return {
    io: {
      out: (s: string) => {
        out += s;
      },
      err: (s: string) => {
        err += s;
      },
    },
    get out() {
      return out;
    },
    get err() {
      return err;
    },
  };
}

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
  const c = capture();
  const code = await main([
    ...BASE,
    "--model",
    "anthropic:claude-sonnet-4-5",
    "--compare",
    "--json",
  ], c.io);
  assert.equal(code, 0, c.err);
  const { runs } = JSON.parse(c.out);
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
  assert.match(c.err, /legacy: 15 calls replayed \(completed\)/);
  assert.deepEqual(await snapshotTree(fixtureWorkspace("bugfix")), before);
});

Deno.test("loom cost prints a table with the tokenizer's error bound", async () => {
  const c = capture();
  const code = await main([...BASE, "--model", "openai:gpt-4.1"], c.io);
  assert.equal(code, 0, c.err);
  assert.match(c.out, /openai:gpt-4\.1 priced as gpt-4\.1/);
  assert.match(c.out, /o200k_base/);
  assert.match(c.out, /cache hit ratio\s+\d+\.\d%/);
  assert.match(c.out, /input \$\s+\$\d+\.\d{4}/);
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
      const c = capture();
      const code = await main([...BASE, ...extra], c.io);
      if (name === "an unpriced model") {
        // A coded failure, not a usage error: exit 3 with its code.
        assert.notEqual(code, 0);
      } else assert.equal(code, 2, c.err);
      assert.match(c.err, pattern);
    });
  }
});

Deno.test("parseCostArguments() reads the settings to compare", () => {
  const parsed = parseCostArguments([
    ...BASE.slice(1),
    "--model",
    "anthropic:claude-sonnet-4-5",
    "--context-policy",
    "bounded",
    "--retire-target",
    "24576",
    "--roll-batch",
    "8",
    "--call-interval",
    "2s",
  ]);
  assert.ok(!parsed.help);
  assert.deepEqual(parsed.parsed.policies, ["bounded"]);
  assert.deepEqual(parsed.parsed.limits, {
    transcriptRollBatch: 8,
    retireTargetBytes: 24576,
  });
  assert.equal(parsed.parsed.callIntervalMs, 2000);
  assert.throws(
    () =>
      parseCostArguments([
        ...BASE.slice(1),
        "--model",
        "openai:gpt-4.1",
        "--compare",
        "--context-policy",
        "legacy",
      ]),
    UsageError,
  );
});
