/** `loom run --dry-run`: the first request as the SDK sends it, checked, nothing run. */
import assert from "node:assert/strict";
import { loomIn, loomInWith, tempDir } from "../_kit.ts";
import {
  prepareWorkspace,
  recordedRunArgs,
  recordingPath,
  snapshotTree,
} from "../e2e/_workspace.ts";
import { replayServer } from "../providers/_replay_server.ts";

const SECRET = "sk-dry-run-secret-key";

function args(
  workspace: string,
  model: string,
  baseUrl: string,
  policy: string,
): string[] {
  return [
    ...recordedRunArgs(workspace, { model, policy }),
    "--base-url",
    baseUrl,
  ];
}

const CASES = [
  ["anthropic", "anthropic:claude-sonnet-4-5", "/v1/messages", ""],
  ["openai", "openai:gpt-5", "/v1/chat/completions", "/v1"],
] as const;

for (const [wire, model, path, suffix] of CASES) {
  for (const policy of ["legacy", "bounded"]) {
    Deno.test(`loom run --dry-run prints the ${wire} body the SDK sends first (${policy}) and touches nothing`, async () => {
      await using prepared = await prepareWorkspace("bugfix");
      const before = await snapshotTree(prepared.workspace);
      await using server = await replayServer(wire, recordingPath("bugfix"));
      const env = { ANTHROPIC_API_KEY: SECRET, OPENAI_API_KEY: SECRET };
      const base = `${server.url}${suffix}`;
      const dry = await loomInWith(
        { env },
        "run",
        "--dry-run",
        ...args(prepared.workspace, model, base, policy).slice(1),
      );
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.bodies.length, 0, "no request was sent");
      assert.ok(!dry.stdout.includes(SECRET), "the API key is not printed");
      assert.deepEqual(await snapshotTree(prepared.workspace), before);
      const printed = JSON.parse(dry.stdout);
      assert.equal(printed.service, wire);
      assert.equal(printed.url, `${server.url}${path}`);

      // The same run, for real, against the strict replay server.
      const real = await loomInWith(
        { env },
        ...args(prepared.workspace, model, base, policy),
        "--max-steps",
        "1",
      );
      assert.ok(server.bodies.length >= 1, real.stderr);
      assert.deepEqual(printed.body, JSON.parse(server.bodies[0]!));
    });
  }
}

Deno.test("loom run --dry-run needs no workspace and no key", async () => {
  await using dir = await tempDir();
  const result = await loomInWith(
    { env: { ANTHROPIC_API_KEY: "" } },
    "run",
    "--dry-run",
    "--workspace",
    `${dir.path}/missing`,
    "--intent",
    "Fix the bug",
    "--model",
    "anthropic:claude-sonnet-4-5",
  );
  assert.equal(result.code, 0, result.stderr);
  const printed = JSON.parse(result.stdout);
  assert.equal(printed.url, "https://api.anthropic.com/v1/messages");
  assert.equal(printed.body.tools[0].input_schema.type, "object");
  assert.deepEqual(printed.body.tools[0].input_schema.required, ["step"]);
  assert.equal(printed.body.tools[0].input_schema.anyOf, undefined);
});

Deno.test("loom run --dry-run refuses what it cannot build or would not use", async (t) => {
  const cases: [string, string[], RegExp][] = [
    [
      "a recorded model",
      ["--intent", "x", "--model", "recorded:r.json"],
      /bad_spec/,
    ],
    [
      "a session",
      ["--intent", "x", "--model", "openai:gpt-5", "--session", "s"],
      /--dry-run makes no run, so --session does not apply/,
    ],
    [
      "a blank intent",
      ["--model", "openai:gpt-5", "--intent", "  "],
      /without an intent/,
    ],
  ];
  for (const [name, extra, pattern] of cases) {
    await t.step(name, async () => {
      const result = await loomIn(
        "run",
        "--dry-run",
        "--workspace",
        "ws",
        ...extra,
      );
      assert.equal(result.code, 2);
      assert.match(result.stderr, pattern);
    });
  }
});
