import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { dirNames, loomIn } from "../_kit.ts";

const RECORDING = resolve("fixtures/recordings/bugfix.json");

Deno.test("loom run checks every flag and file before the first effect and exits 2", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "loom-run-checks-" });
  const workspace = join(dir, "ws");
  await Deno.mkdir(workspace);
  await Deno.writeTextFile(join(workspace, "a.txt"), "hello\n");
  const file = join(dir, "plain-file");
  await Deno.writeTextFile(file, "not a directory\n");
  const base = ["run", "--workspace", workspace, "--intent", "Fix it"];
  const recorded = [...base, "--model", `recorded:${RECORDING}`];
  const session = join(dir, "session");
  const report = join(dir, "report.json");
  const cases: [string, string[], RegExp][] = [
    [
      "a model spec without a scheme",
      [...base, "--model", "claude", "--session", session],
      /^loom run: bad_spec: Invalid model spec claude: expected recorded:PATH/,
    ],
    [
      "a missing API key",
      [...base, "--model", "anthropic:claude-sonnet-5-5", "--session", session],
      /^loom run: missing_api_key: Cannot use anthropic: ANTHROPIC_API_KEY is not set/,
    ],
    [
      "a missing recording",
      [...base, "--model", `recorded:${dir}/nope.json`, "--session", session],
      /^loom run: recording_invalid: Cannot read the --model recording .*nope\.json: it does not exist\n$/,
    ],
    ["an invalid recording", [
      ...base,
      "--model",
      `recorded:${file}`,
      "--session",
      session,
    ], /^loom run: recording_invalid: /],
    [
      "a test program not on PATH",
      [...recorded, "--test", "pnpm-not-here test", "--session", session],
      /^loom run: test_program_not_found: Cannot run the --test program pnpm-not-here: it is not on PATH\n$/,
    ],
    [
      "a test program path not in the workspace",
      [...recorded, "--test", "./run-tests.sh", "--session", session],
      /^loom run: test_program_not_found: Cannot run the --test program \.\/run-tests\.sh: no executable file .*ws\/run-tests\.sh\n$/,
    ],
    [
      "a report in a missing folder",
      [
        ...recorded,
        "--context-report",
        `${dir}/no/such/r.json`,
        "--session",
        session,
      ],
      /^loom run: Cannot write --context-report .*\/no\/such\/r\.json: its folder .*\/no\/such does not exist/,
    ],
    [
      "a report path that is a directory",
      [...recorded, "--context-report", workspace, "--session", session],
      /^loom run: Cannot write --context-report .*ws: it is not a regular file/,
    ],
    [
      "--session naming a file",
      [...recorded, "--session", file],
      /^loom run: Cannot use --session .*plain-file: it is a file; give a directory/,
    ],
    [
      "--session under a file",
      [...recorded, "--session", `${file}/s`],
      /^loom run: Cannot use --session .*plain-file\/s: a part of the path is a file, not a directory/,
    ],
    ["--persist-threshold without --session", [
      ...recorded,
      "--persist-threshold",
      "nope",
    ], /^loom run: --persist-threshold needs --session/],
    ["--persist-config without --session", [
      ...recorded,
      "--persist-config",
      "/missing.json",
    ], /^loom run: --persist-config needs --session/],
    ["a bad --persist-threshold with --session", [
      ...recorded,
      "--persist-threshold",
      "nope",
      "--session",
      session,
    ], /^loom run: .*nope/],
    ["a missing --persist-config with --session", [
      ...recorded,
      "--persist-config",
      `${dir}/missing.json`,
      "--session",
      session,
    ], /^loom run: .*missing\.json/],
    ["--base-url with a recorded model", [
      ...recorded,
      "--base-url",
      "http://127.0.0.1:1/v1",
    ], /^loom run: --base-url has no effect with a recorded model/],
    [
      "a --base-url that is not a URL",
      [
        ...base,
        "--model",
        "openai:qwen",
        "--base-url",
        "not-a-url",
        "--session",
        session,
      ],
      /^loom run: bad_option: Invalid base URL not-a-url: expected an http or https URL/,
    ],
    ["a missing workspace", [
      "run",
      "--workspace",
      `${dir}/nope`,
      "--intent",
      "x",
      "--model",
      `recorded:${RECORDING}`,
      "--session",
      session,
    ], /^loom run: Cannot use --workspace .*nope: it does not exist/],
    ["a missing --intent-file", [
      ...recorded.slice(0, 3),
      "--intent-file",
      `${dir}/task.md`,
      "--model",
      `recorded:${RECORDING}`,
    ], /^loom run: Cannot read --intent-file .*task\.md: it does not exist/],
  ];
  try {
    for (const [name, args, expected] of cases) {
      await t.step(name, async () => {
        const before = await dirNames(dir);
        const { code, stdout, stderr } = await loomIn(...args);
        assert.equal(code, 2, stderr);
        assert.equal(stdout, "");
        assert.match(stderr, expected);
        assert.ok(!/os error/.test(stderr), stderr);
        // Nothing happened: no session, no report, the workspace untouched.
        assert.deepEqual(await dirNames(dir), before);
        assert.deepEqual(await dirNames(workspace), ["a.txt"]);
        await assert.rejects(Deno.stat(session));
        await assert.rejects(Deno.stat(report));
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loom run keeps exit 1 and 3 for runs that started", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "loom-run-exit-" });
  try {
    await t.step(
      "a recording that runs out is a provider failure: exit 3, with a progress line for the failing step",
      async () => {
        const recording = join(dir, "short.json");
        await Deno.writeTextFile(
          recording,
          JSON.stringify({ format: "loom-recording/1", calls: [] }),
        );
        const { code, stdout, stderr } = await loomIn(
          "run",
          "--workspace",
          dir,
          "--intent",
          "x",
          "--model",
          `recorded:${recording}`,
        );
        assert.equal(code, 3, stderr);
        assert.match(
          stdout,
          /^loom run: provider_error in step 1 \(1 model call, the last one failed\)\n/,
        );
        assert.match(
          stderr,
          /^step 1\/40 selection - request_bytes=[1-9][0-9]* calls=1: stopped \(provider_error\)$/m,
        );
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
