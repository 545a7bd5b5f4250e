// The composite action's shell steps under a simulated runner
// (tests/ci/_runner.ts) against a release served from 127.0.0.1: the
// release's "binary" is a launcher script that notes each run in a marker
// file and runs the bundled CLI (dist/loom.js, built once for the file).
// A good checksum runs the recorded bug-fix slice and writes the summary and
// the outputs; a wrong checksum, a missing asset or a failing attestation
// stops before anything runs; keys in the environment appear nowhere.
import assert from "node:assert/strict";
import { join } from "node:path";
import { ContextReportBuilder } from "../../lib/briefing/context_report.ts";
import { bundle } from "../../tools/bundle.ts";
import { exists, loomIn, REPO_ROOT, tempDir } from "../_kit.ts";
import {
  intentPath,
  prepareWorkspace,
  recordingPath,
} from "../e2e/_workspace.ts";
import { type ActionRun, runAction, type RunnerOptions } from "./_runner.ts";
import { localServer } from "../_kit/local_server.ts";

const VERSION = (JSON.parse(
  await Deno.readTextFile(join(REPO_ROOT, "deno.json")),
) as { version: string }).version;
const TAG = `v${VERSION}`;
const LINUX_ASSET = `loom-${TAG}-x86_64-unknown-linux-gnu`;

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(
    new Uint8Array(digest),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/** A release on 127.0.0.1 under a random path (the listener's token). */
interface Release extends AsyncDisposable {
  /** `LOOM_RELEASE_BASE_URL`. */
  readonly base: string;
  /** Paths asked for, after the token. */
  readonly requests: string[];
}

function serveRelease(
  files: Readonly<Record<string, Uint8Array<ArrayBuffer>>>,
): Release {
  const token = crypto.randomUUID();
  const requests: string[] = [];
  const server = localServer(
    (request) => {
      const path = new URL(request.url).pathname;
      const prefix = `/${token}/`;
      if (!path.startsWith(prefix)) return new Response("no", { status: 403 });
      const name = path.slice(prefix.length);
      requests.push(name);
      const body = files[name];
      return body === undefined
        ? new Response("Not Found", { status: 404 })
        : new Response(body);
    },
  );
  return {
    base: `${server.url}/${token}`,
    requests,
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

const encoder = new TextEncoder();

/**
 * This Deno's cache, shared with the simulated jobs: a fresh HOME would give
 * each `deno` a fresh, empty cache, which costs seconds to set up.
 */
const DENO_DIR: string = Deno.env.get("DENO_DIR") ?? (JSON.parse(
  new TextDecoder().decode(
    (await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output()).stdout,
  ),
) as { denoDir: string }).denoDir;

/** A release of `binary` under `asset`, with its SHA256SUMS (or another). */
async function releaseFiles(
  asset: string,
  binary: Uint8Array<ArrayBuffer>,
  sums?: string,
): Promise<Record<string, Uint8Array<ArrayBuffer>>> {
  return {
    [`${TAG}/${asset}`]: binary,
    [`${TAG}/SHA256SUMS`]: encoder.encode(
      sums ?? `${await sha256(binary)}  ${asset}\n`,
    ),
  };
}

/** A launcher "binary": notes the run in `marker`, then runs `loomJs`. */
function launcher(marker: string, loomJs: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`#!/bin/sh
printf 'executed %s\\n' "$*" >> '${marker}'
exec '${Deno.execPath()}' run --quiet --unstable-worker-options --allow-read --allow-write --allow-run --allow-net=127.0.0.1 --allow-env '${loomJs}' "$@"
`);
}

/** Fake `gh` and `sudo` that note their arguments. */
async function fakeBin(dir: string): Promise<string> {
  const bin = join(dir, "bin");
  await Deno.mkdir(bin, { recursive: true });
  const note = (name: string) =>
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${join(dir, `${name}.log`)}'\n`;
  await Deno.writeTextFile(
    join(bin, "gh"),
    `${
      note("gh")
    }if [ -n "$FAKE_GH_FAIL" ]; then echo "$FAKE_GH_FAIL" >&2; exit 1; fi\necho "Loaded 1 attestation"\n`,
    { mode: 0o755 },
  );
  await Deno.writeTextFile(join(bin, "sudo"), note("sudo"), { mode: 0o755 });
  return bin;
}

/** The job: a fresh RUNNER_TEMP and HOME under `dir`, PATH with the fakes. */
async function job(
  dir: string,
  release: Release,
  overrides: Partial<RunnerOptions> & { extraEnv?: Record<string, string> },
): Promise<RunnerOptions> {
  const temp = await Deno.makeTempDir({ dir, prefix: "runner-temp-" });
  const home = await Deno.makeTempDir({ dir, prefix: "home-" });
  const env: Record<string, string> = {
    PATH: `${join(dir, "bin")}:${Deno.env.get("PATH") ?? ""}`,
    HOME: home,
    LOOM_RELEASE_BASE_URL: release.base,
    LOOM_USERNS_SWITCH: join(dir, "userns-switch"),
    DENO_DIR,
    ...overrides.extraEnv,
  };
  return {
    temp,
    workspace: dir,
    env,
    ...overrides,
  };
}

function stepConclusions(run: ActionRun): Record<string, string> {
  return Object.fromEntries(run.steps.map((s) => [s.id, s.conclusion]));
}

Deno.test("The action refuses a wrong checksum, a missing asset or checksum line, and a failed attestation before anything runs", async (t) => {
  await using dir = await tempDir();
  await fakeBin(dir.path);
  const marker = join(dir.path, "executed.txt");
  const binary = launcher(marker, "/nonexistent/loom.js");
  const good = await sha256(binary);
  const cases: [
    string,
    Record<string, Uint8Array<ArrayBuffer>>,
    Record<string, string>,
    RegExp,
  ][] = [
    [
      "a wrong checksum",
      await releaseFiles(
        LINUX_ASSET,
        binary,
        `${"0".repeat(64)}  ${LINUX_ASSET}\n`,
      ),
      {},
      new RegExp(
        `::error title=Loom action::Checksum mismatch for ${LINUX_ASSET}: SHA256SUMS says 0{64}, the download is ${good}; refusing to run it`,
      ),
    ],
    [
      "a binary changed after its checksum was taken",
      {
        ...(await releaseFiles(LINUX_ASSET, binary)),
        [`${TAG}/${LINUX_ASSET}`]: encoder.encode("#!/bin/sh\necho evil\n"),
      },
      {},
      /Checksum mismatch for loom-v.*: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}; refusing to run it/,
    ],
    [
      "a missing asset",
      {
        [`${TAG}/SHA256SUMS`]: encoder.encode(`${good}  ${LINUX_ASSET}\n`),
      },
      {},
      new RegExp(
        `Cannot download the release asset ${LINUX_ASSET} from http://127\\.0\\.0\\.1:\\d+/[-0-9a-f]+/${TAG}/${LINUX_ASSET} \\(is there a loom ${TAG} release for x86_64-unknown-linux-gnu\\?\\)`,
      ),
    ],
    [
      "a checksum file without the asset's line",
      await releaseFiles(LINUX_ASSET, binary, `${good}  loom-${TAG}-other\n`),
      {},
      new RegExp(
        `SHA256SUMS of loom ${TAG} has no line for ${LINUX_ASSET}: refusing to run it`,
      ),
    ],
    [
      "no checksum file",
      { [`${TAG}/${LINUX_ASSET}`]: binary },
      {},
      /Cannot download SHA256SUMS of loom v.*: refusing to run a binary that cannot be checked/,
    ],
    [
      "an attestation that does not verify",
      await releaseFiles(LINUX_ASSET, binary),
      { FAKE_GH_FAIL: "no attestations found for the artifact's digest" },
      /gh: no attestations found[\s\S]*The build attestation of loom-v.* does not verify for loom-dev\/loom: refusing to run it/,
    ],
  ];
  for (const [name, files, extraEnv, expected] of cases) {
    await t.step(name, async () => {
      await Deno.remove(marker).catch(() => {});
      await using release = serveRelease(files);
      const options = await job(dir.path, release, {
        with: { model: "recorded:/nonexistent.json", intent: "x" },
        extraEnv,
      });
      const run = await runAction(options);
      assert.match(run.log, expected);
      assert.deepEqual(stepConclusions(run), {
        install: "failure",
        sandbox: "skipped",
        run: "skipped",
      });
      assert.equal(run.conclusion, "failure");
      assert.equal(await exists(marker), false, "the binary never ran");
      assert.equal(await exists(join(options.temp, "loom-bin")), false);
    });
  }
});

Deno.test("The action picks the release asset for the runner and the action's own version", async (t) => {
  await using dir = await tempDir();
  await fakeBin(dir.path);
  const binary = encoder.encode("#!/bin/sh\nexit 0\n");
  const targets: [string, string, string, string][] = [
    ["Linux", "X64", `loom-${TAG}-x86_64-unknown-linux-gnu`, "loom"],
    ["Linux", "ARM64", `loom-${TAG}-aarch64-unknown-linux-gnu`, "loom"],
    ["macOS", "X64", `loom-${TAG}-x86_64-apple-darwin`, "loom"],
    ["macOS", "ARM64", `loom-${TAG}-aarch64-apple-darwin`, "loom"],
    ["Windows", "X64", `loom-${TAG}-x86_64-pc-windows-msvc.exe`, "loom.exe"],
  ];
  for (const [os, arch, asset, installed] of targets) {
    await t.step(`${os} ${arch}: ${asset}`, async () => {
      await using release = serveRelease(await releaseFiles(asset, binary));
      const options = await job(dir.path, release, {
        os,
        arch,
        only: ["install"],
      });
      const run = await runAction(options);
      assert.equal(run.conclusion, "success", run.log);
      assert.deepEqual(release.requests, [
        `${TAG}/SHA256SUMS`,
        `${TAG}/${asset}`,
      ]);
      const gh = await Deno.readTextFile(join(dir.path, "gh.log"));
      assert.match(
        gh.trim().split("\n").at(-1)!,
        new RegExp(
          `^attestation verify \\S+/${
            asset.replace(".", "\\.")
          } --repo loom-dev/loom$`,
        ),
      );
      assert.match(run.log, /Build attestation of .* verified/);
      const path = join(options.temp, "loom-bin", installed);
      assert.deepEqual(run.path, [join(options.temp, "loom-bin")]);
      assert.equal(((await Deno.stat(path)).mode ?? 0) & 0o111, 0o111);
    });
  }
  await t.step("an explicit version input, with or without the v", async () => {
    const asset = `loom-v9.8.7-x86_64-unknown-linux-gnu`;
    await using release = serveRelease({
      [`v9.8.7/${asset}`]: binary,
      [`v9.8.7/SHA256SUMS`]: encoder.encode(
        `${await sha256(binary)} *${asset}\n`,
      ),
    });
    for (const version of ["9.8.7", "v9.8.7"]) {
      const options = await job(dir.path, release, {
        with: { version },
        only: ["install"],
      });
      const run = await runAction(options);
      assert.equal(run.conclusion, "success", run.log);
    }
  });
  await t.step(
    "a runner without a release binary, and a version that is none",
    async () => {
      await using release = serveRelease({});
      const arm = await runAction(
        await job(dir.path, release, {
          os: "Windows",
          arch: "ARM64",
          only: ["install"],
        }),
      );
      assert.match(arm.log, /No loom release binary for Windows on ARM64/);
      const bad = await runAction(
        await job(dir.path, release, {
          with: { version: "latest; rm -rf /" },
          only: ["install"],
        }),
      );
      assert.match(
        bad.log,
        /Invalid loom version 'latest; rm -rf \/': expected a release such as 0\.1\.0/,
      );
      assert.deepEqual(release.requests, [], "nothing was downloaded");
    },
  );
  await t.step(
    "uses: ./ takes the releases and attestations of the repository it runs in",
    async () => {
      await using release = serveRelease(
        await releaseFiles(LINUX_ASSET, binary),
      );
      const options = await job(dir.path, release, {
        only: ["install"],
        actionPath: REPO_ROOT,
        repository: "loom-dev/loom-fork",
      });
      const run = await runAction(options);
      assert.equal(run.conclusion, "success", run.log);
      const gh = await Deno.readTextFile(join(dir.path, "gh.log"));
      assert.match(
        gh.trim().split("\n").at(-1)!,
        / --repo loom-dev\/loom-fork$/,
      );
    },
  );
  await t.step("the attestation check says when it was skipped", async () => {
    await using release = serveRelease(await releaseFiles(LINUX_ASSET, binary));
    const noToken = await job(dir.path, release, {
      only: ["install"],
      extraEnv: { LOOM_SKIP_ATTESTATION: "1" },
    });
    const run = await runAction(noToken);
    assert.equal(run.conclusion, "success", run.log);
    assert.match(
      run.log,
      /Build attestation of loom-v.* not checked: skipped \(LOOM_SKIP_ATTESTATION=1\)/,
    );
  });
});

/** A fake `loom` for the run step: notes its arguments, writes a report. */
async function fakeLoom(dir: string): Promise<string> {
  const path = join(dir, "fake-loom");
  await Deno.writeTextFile(
    path,
    `#!/usr/bin/env bash
if [ "$1" = report ] && [ "$2" = --html ]; then echo "<!doctype html>" > "$4"; exit 0; fi
if [ "$1" = report ]; then echo "### fake summary of $3"; exit 0; fi
printf '%s\\0' "$@" > "$FAKE_LOOM_DIR/args"
env > "$FAKE_LOOM_DIR/env"
prev=""
for a in "$@"; do
  if [ "$prev" = --context-report ] && [ -n "$FAKE_LOOM_REPORT" ]; then cp "$FAKE_LOOM_REPORT" "$a"; fi
  prev="$a"
done
echo "::error::forged by the model"
exit "\${FAKE_LOOM_EXIT:-0}"
`,
    { mode: 0o755 },
  );
  return path;
}

Deno.test("The run step passes arguments, resumes a stored session, and fails or passes by the exit code", async (t) => {
  await using dir = await tempDir();
  await fakeBin(dir.path);
  await using release = serveRelease({});
  const loomBin = await fakeLoom(dir.path);
  const stopped = join(dir.path, "stopped.json");
  await Deno.writeTextFile(
    stopped,
    JSON.stringify(
      new ContextReportBuilder("bounded").build(
        { stop: "step_budget", detail: "Out of steps" },
        { steps: 3, revision: "rev-1-abcdefabcdef", elapsedMs: 1 },
      ),
      null,
      2,
    ) + "\n",
  );
  const runStep = async (
    inputs: Record<string, string>,
    env: Record<string, string> = {},
  ) => {
    const options = await job(dir.path, release, {
      with: inputs,
      only: ["run"],
      stepOutputs: { install: { binary: loomBin } },
      extraEnv: { FAKE_LOOM_DIR: dir.path, FAKE_LOOM_REPORT: "", ...env },
    });
    const run = await runAction(options);
    const args =
      (await Deno.readTextFile(join(dir.path, "args")).catch(() => ""))
        .split("\0").slice(0, -1);
    return { run, args, options };
  };
  await t.step(
    "a new slice: the inputs become loom run's flags; args is split like a shell, never evaluated",
    async () => {
      await Deno.remove(join(dir.path, "args")).catch(() => {});
      const { run, args } = await runStep({
        model: "anthropic:claude-sonnet-4-5",
        intent: "Fix the `median` bug; $(touch pwned)",
        test: "deno test -A",
        "max-steps": "12",
        workspace: "/w",
        args:
          `--protect 'tests/**' --test-env "NODE OPTIONS" $(touch ${dir.path}/pwned) \\"`,
      });
      assert.equal(run.conclusion, "success", run.log);
      const report = args[args.indexOf("--context-report") + 1]!;
      assert.deepEqual(args, [
        "run",
        "--workspace",
        "/w",
        "--model",
        "anthropic:claude-sonnet-4-5",
        "--context-policy",
        "bounded",
        "--intent",
        "Fix the `median` bug; $(touch pwned)",
        "--test",
        "deno test -A",
        "--max-steps",
        "12",
        "--context-report",
        report,
        "--protect",
        "tests/**",
        "--test-env",
        "NODE OPTIONS",
        "$(touch",
        `${dir.path}/pwned)`,
        '"',
      ]);
      assert.match(
        run.log,
        /^loom run --workspace \/w --model anthropic:claude-sonnet-4-5 --context-policy bounded --intent <36 characters> --test deno test -A /m,
      );
      assert.equal(await exists(join(dir.path, "pwned")), false);
      assert.equal(await exists("pwned"), false);
    },
  );
  await t.step(
    "the session key reaches loom as a private file, never as a variable",
    async () => {
      const key = "ab".repeat(32);
      const { run, options } = await runStep(
        { model: "openai:gpt-4.1", intent: "x" },
        { LOOM_SESSION_KEY: key },
      );
      assert.equal(run.conclusion, "success", run.log);
      const env = await Deno.readTextFile(join(dir.path, "env"));
      assert.ok(!env.includes(key), "the key is not in loom's environment");
      assert.doesNotMatch(env, /^LOOM_SESSION_KEY=/m);
      const file = join(options.temp, "loom-session-key", "session.key");
      assert.match(env, new RegExp(`^LOOM_SESSION_KEY_FILE=${file}$`, "m"));
      assert.equal(await Deno.readTextFile(file), `${key}\n`);
      assert.equal((await Deno.stat(file)).mode! & 0o077, 0);
      assert.ok(!run.log.includes(key));
    },
  );
  await t.step("a session path cannot forge another output", async () => {
    const session = join(dir.path, "new\noutcome=completed");
    const { run } = await runStep(
      { model: "openai:gpt-4.1", intent: "x", session },
      { FAKE_LOOM_REPORT: stopped, FAKE_LOOM_EXIT: "1" },
    );
    assert.equal(run.outputs["outcome"], "step_budget");
    assert.equal(run.outputs["session"], session);
  });
  await t.step("a session folder holding a journal is resumed", async () => {
    const session = join(dir.path, "session");
    await Deno.mkdir(session, { recursive: true });
    await Deno.writeTextFile(join(session, "journal.jsonl"), "{}\n");
    const { run, args } = await runStep({
      session,
      "max-steps": "40",
      args: "--test-env HOME",
    }, { FAKE_LOOM_REPORT: stopped, FAKE_LOOM_EXIT: "1" });
    assert.deepEqual(args.slice(0, 5), [
      "run",
      "--resume",
      session,
      "--max-steps",
      "40",
    ]);
    assert.deepEqual(args.slice(-2), ["--test-env", "HOME"]);
    assert.match(
      run.log,
      /Resuming the session in .*session: its intent, model, workspace, test command and policy come from the session/,
    );
    // Stopped without completing: the step fails, the outputs are set.
    assert.equal(run.conclusion, "failure");
    assert.match(
      run.log,
      /::error title=Loom action::The slice stopped without completing \(step_budget\)/,
    );
    assert.equal(run.outputs["outcome"], "step_budget");
    assert.equal(run.outputs["exit-code"], "1");
    assert.equal(run.outputs["revision"], "rev-1-abcdefabcdef");
    assert.equal(run.outputs["session"], session);
    assert.match(run.summary, /^### fake summary of \S+context-report\.json$/m);
    assert.match(run.outputs["html-report"] ?? "", /context-report\.html$/);
    // loom's own lines ran with workflow commands stopped.
    const token = /::stop-commands::([0-9a-f]{32})\n/.exec(run.log)?.[1];
    assert.ok(token !== undefined, run.log);
    const stoppedPart = run.log.slice(
      run.log.indexOf(`::stop-commands::${token}`),
      run.log.indexOf(`::${token}::`),
    );
    assert.match(stoppedPart, /::error::forged by the model/);
  });
  await t.step(
    "allow-incomplete: true lets a stopped slice pass, with its outputs",
    async () => {
      const { run } = await runStep({
        model: "openai:gpt-4.1",
        "intent-file": "task.md",
        "allow-incomplete": "true",
      }, { FAKE_LOOM_REPORT: stopped, FAKE_LOOM_EXIT: "1" });
      assert.equal(run.conclusion, "success", run.log);
      assert.match(
        run.log,
        /::notice title=Loom action::The slice stopped without completing \(step_budget\); allow-incomplete is true/,
      );
      assert.equal(run.outputs["outcome"], "step_budget");
    },
  );
  await t.step(
    "bad input fails even with allow-incomplete, and outcome says the slice never started",
    async () => {
      const { run } = await runStep({
        model: "openai:gpt-4.1",
        intent: "x",
        "allow-incomplete": "true",
      }, { FAKE_LOOM_EXIT: "2" });
      assert.equal(run.conclusion, "failure");
      assert.equal(run.outputs["outcome"], "not_started");
      assert.equal(run.outputs["exit-code"], "2");
      assert.equal(run.outputs["report"], "");
      assert.equal(run.outputs["html-report"], "");
      assert.match(run.summary, /### Loom slice did not start/);
    },
  );
  await t.step("inputs the step refuses before running loom", async () => {
    const refusals: [Record<string, string>, Record<string, string>, RegExp][] =
      [
        [{ intent: "x" }, {}, /The model input is required/],
        [
          { model: "openai:gpt-4.1" },
          {},
          /The intent or intent-file input is required/,
        ],
        [
          { model: "openai:gpt-4.1", intent: "x", "intent-file": "f" },
          {},
          /Give intent or intent-file, not both/,
        ],
        [
          { model: "openai:gpt-4.1", intent: "x", "allow-incomplete": "yes" },
          {},
          /Invalid allow-incomplete 'yes'/,
        ],
        [
          { model: "openai:gpt-4.1", intent: "x", args: "--protect 'open" },
          {},
          /Cannot split the args input/,
        ],
        [{ model: "openai:gpt-4.1", intent: "x" }, {
          LOOM_SESSION_KEY: "not-hex",
        }, /LOOM_SESSION_KEY is not 64 lowercase hex digits/],
      ];
    for (const [inputs, env, message] of refusals) {
      await Deno.remove(join(dir.path, "args")).catch(() => {});
      const { run, args } = await runStep(inputs, env);
      assert.equal(run.conclusion, "failure");
      assert.match(run.log, message);
      assert.deepEqual(args, [], "loom did not run");
    }
  });
});

Deno.test("The action runs the recorded bug-fix slice from a verified release, writes the summary and outputs, and resumes a stopped session in a later job", async (t) => {
  await using dir = await tempDir();
  await fakeBin(dir.path);
  const loomJs = join(dir.path, "loom.js");
  await bundle(loomJs);
  const marker = join(dir.path, "executed.txt");
  await using release = serveRelease(
    await releaseFiles(LINUX_ASSET, launcher(marker, loomJs)),
  );
  await Deno.writeTextFile(join(dir.path, "userns-switch"), "1\n");
  const secrets = {
    ANTHROPIC_API_KEY: `sk-ant-secret-marker-${crypto.randomUUID()}`,
    OPENAI_API_KEY: `sk-openai-secret-marker-${crypto.randomUUID()}`,
    LOOM_SESSION_KEY: Array.from(
      crypto.getRandomValues(new Uint8Array(32)),
      (b) => b.toString(16).padStart(2, "0"),
    ).join(""),
  };
  const inputs = (workspace: string) => ({
    model: `recorded:${recordingPath("bugfix")}`,
    "intent-file": intentPath("bugfix"),
    // This Deno by its path, as the other end-to-end tests give it (under
    // bubblewrap too).
    test: `${Deno.execPath()} run check.ts`,
    workspace,
  });
  /** Nothing secret in what a run leaves for people to read. */
  const assertNoSecret = async (run: ActionRun, files: string[]) => {
    const texts = [
      run.log,
      run.summary,
      run.outputFiles,
      JSON.stringify(run.outputs),
      ...(await Promise.all(files.map((f) => Deno.readTextFile(f)))),
    ];
    for (const [name, value] of Object.entries(secrets)) {
      for (const text of texts) {
        assert.ok(!text.includes(value), `${name} leaked`);
      }
    }
  };

  await t.step(
    "a good checksum: the slice completes, the summary and outputs are written, no key is shown",
    async () => {
      await using prepared = await prepareWorkspace("bugfix");
      const session = join(prepared.root, "session");
      const options = await job(dir.path, release, {
        with: { ...inputs(prepared.workspace), session },
        extraEnv: secrets,
      });
      const run = await runAction(options);
      assert.equal(run.conclusion, "success", run.log);
      assert.deepEqual(stepConclusions(run), {
        install: "success",
        sandbox: "success",
        run: "success",
      });
      assert.match(
        await Deno.readTextFile(marker),
        /^executed run --workspace /,
      );
      // The outputs.
      const report = JSON.parse(
        await Deno.readTextFile(run.outputs["report"]!),
      );
      assert.equal(run.outputs["outcome"], "completed");
      assert.equal(run.outputs["exit-code"], "0");
      assert.equal(run.outputs["revision"], report.revision);
      assert.match(report.revision, /^rev-2-/);
      assert.equal(run.outputs["session"], session);
      assert.ok(await exists(join(session, "journal.jsonl")));
      // The summary is `loom report --markdown` of the report.
      const rendered = await loomIn(
        "report",
        "--markdown",
        run.outputs["report"]!,
      );
      assert.equal(run.summary, rendered.stdout);
      assert.match(run.summary, /^### Loom slice completed$/m);
      // The page of the run, one self-contained file beside the report.
      const html = await Deno.readTextFile(run.outputs["html-report"]!);
      assert.match(html, /^<!doctype html>/);
      assert.match(html, /http-equiv="Content-Security-Policy"/);
      assert.ok(html.includes('id="loom-data"'));
      // The edit landed, the sandbox step ran its switch.
      assert.match(
        await Deno.readTextFile(join(prepared.workspace, "src", "stats.ts")),
        /return total \/ values\.length;/,
      );
      assert.match(
        await Deno.readTextFile(join(dir.path, "sudo.log")),
        /^(-n )?sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0$/m,
      );
      assert.match(run.log, /SHA-256 of loom-v.* matches SHA256SUMS/);
      assert.match(
        run.log,
        /::stop-commands::[0-9a-f]{32}\n[\s\S]*step 7\/40 arguments slice\.complete/,
      );
      // The session key went to a private file, not to loom's environment.
      const key = join(options.temp, "loom-session-key", "session.key");
      assert.equal((await Deno.stat(key)).mode! & 0o077, 0);
      await assertNoSecret(run, [
        run.outputs["report"]!,
        join(session, "journal.jsonl"),
      ]);
    },
  );

  await t.step(
    "a stopped slice fails its step with the outputs set, and a later job resumes it to completion",
    async () => {
      await using prepared = await prepareWorkspace("bugfix");
      const session = join(prepared.root, "session");
      await Deno.remove(join(dir.path, "userns-switch"));
      const first = await runAction(
        await job(dir.path, release, {
          with: { ...inputs(prepared.workspace), session, "max-steps": "3" },
          extraEnv: secrets,
        }),
      );
      assert.equal(first.conclusion, "failure");
      assert.deepEqual(stepConclusions(first), {
        install: "success",
        sandbox: "success",
        run: "failure",
      });
      assert.match(
        first.log,
        /No .*userns-switch on this kernel: user namespaces need no switch/,
      );
      assert.equal(first.outputs["outcome"], "step_budget");
      assert.equal(first.outputs["exit-code"], "1");
      assert.match(first.outputs["revision"]!, /^rev-1-/);
      assert.match(first.summary, /^### Loom slice stopped \(step_budget\)$/m);
      // A later job: a fresh runner (new RUNNER_TEMP and HOME), the same
      // session folder and workspace, the session key from the secret.
      const later = await runAction(
        await job(dir.path, release, {
          with: { session, "max-steps": "20" },
          extraEnv: secrets,
        }),
      );
      assert.equal(later.conclusion, "success", later.log);
      assert.match(later.log, /Resuming the session in /);
      assert.equal(later.outputs["outcome"], "completed");
      assert.match(later.outputs["revision"]!, /^rev-2-/);
      const report = JSON.parse(
        await Deno.readTextFile(later.outputs["report"]!),
      );
      assert.equal(report.steps, 7, "the report covers the whole run");
      assert.deepEqual(
        report.tests.map((
          x: { step: number; exit_code: number },
        ) => [x.step, x.exit_code]),
        [[3, 1], [6, 0]],
      );
      await assertNoSecret(later, [join(session, "journal.jsonl")]);
    },
  );
});
