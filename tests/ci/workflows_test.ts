// The GitHub Actions workflows, checked with GitHub's own parser: every file
// of .github/workflows/ parses without an error, a deliberately broken copy of
// each one does not, and the release workflow builds and publishes what the
// README says it does.
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { REPO_ROOT } from "../_kit.ts";
import { workflowErrors } from "./_workflow_parser.ts";

const FOLDER = join(REPO_ROOT, ".github", "workflows");

const workflows: Record<string, string> = {};
for await (const entry of Deno.readDir(FOLDER)) {
  if (entry.isFile && /\.ya?ml$/.test(entry.name)) {
    workflows[entry.name] = await Deno.readTextFile(join(FOLDER, entry.name));
  }
}

/** The release targets the README promises. */
const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
];

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Job {
  "runs-on": string;
  needs?: string | string[];
  permissions?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
}

function workflow(name: string): Workflow {
  const text = workflows[name];
  assert.ok(text !== undefined, `.github/workflows/${name} exists`);
  return parse(text) as Workflow;
}

/** Every `run` script of a workflow, joined. */
function scripts(w: Workflow): string {
  return Object.values(w.jobs).flatMap((job) => job.steps)
    .map((step) => step.run ?? "").join("\n");
}

Deno.test("Every workflow parses with GitHub's parser without an error", () => {
  assert.deepEqual(Object.keys(workflows).sort(), ["ci.yml", "release.yml"]);
  for (const [name, text] of Object.entries(workflows)) {
    assert.deepEqual(workflowErrors(name, text), [], name);
  }
});

Deno.test("GitHub's parser rejects a deliberately broken copy of each workflow", async (t) => {
  // Each breakage is one a YAML linter would let through.
  const breakages: [string, (text: string) => string, RegExp][] = [
    [
      "a misspelt job key",
      (text) => text.replace(/^( {4})runs-on:/m, "$1runs_on:"),
      /Required property is missing: runs-on/,
    ],
    [
      "a step with both uses and run",
      (text) =>
        text.replace(
          /^( {6})- uses: actions\/checkout@v4$/m,
          "$1- uses: actions/checkout@v4\n$1  run: echo both",
        ),
      /Unexpected value 'run'/,
    ],
    [
      "an unknown event",
      (text) => text.replace(/^on:\n/m, "on:\n  pushed:\n"),
      /Unexpected value 'pushed'/,
    ],
    [
      "an expression that does not close",
      (text) =>
        text.replace(
          /^( {6})- uses: actions\/checkout@v4$/m,
          "$1- uses: actions/checkout@v4\n$1  if: ${{ github.ref == 'x' }",
        ),
      /The expression is not closed/,
    ],
    [
      "a permission level that does not exist",
      (text) =>
        text.replace(/^( {2})contents: (read|write)$/m, "$1contents: all"),
      /Unexpected value 'all'/,
    ],
  ];
  for (const [name, text] of Object.entries(workflows)) {
    for (const [breakage, breakCopy, expected] of breakages) {
      await t.step(`${name}: ${breakage}`, () => {
        const broken = breakCopy(text);
        assert.notEqual(broken, text, "the breakage applies to this workflow");
        const errors = workflowErrors(name, broken);
        assert.ok(errors.length > 0, `no error for:\n${broken}`);
        assert.match(errors.join("\n"), expected);
      });
    }
  }
});

Deno.test("CI runs .ci/run on Ubuntu with bubblewrap on every push and pull request", () => {
  const ci = workflow("ci.yml");
  assert.deepEqual(Object.keys(ci.on).sort(), ["pull_request", "push"]);
  assert.deepEqual(Object.keys(ci.jobs).sort(), ["action", "ci"]);
  const job = ci.jobs.ci!;
  assert.match(job["runs-on"], /^ubuntu-/);
  const run = scripts({ ...ci, jobs: { ci: job } });
  assert.match(run, /apt-get install -y bubblewrap/);
  assert.match(run, /^bash \.ci\/run$/m);
  assert.ok(
    run.indexOf("bubblewrap") < run.indexOf(".ci/run"),
    "bubblewrap is installed before .ci/run",
  );
});

Deno.test("CI runs the action it publishes (uses: ./) on the recorded bug-fix slice from a release of the same commit", () => {
  const ci = workflow("ci.yml");
  const job = ci.jobs.action!;
  assert.match(job["runs-on"], /^ubuntu-/);
  const build = job.steps.findIndex((step) =>
    /deno compile /.test(step.run ?? "")
  );
  const action = job.steps.findIndex((step) => step.uses === "./");
  const check = job.steps.findIndex((step) =>
    /test "\$\{OUTCOME\}" = completed/.test(step.run ?? "")
  );
  assert.ok(
    build >= 0 && build < action && action < check,
    "a release is built, then the action runs on it, then its outcome is checked",
  );
  // The release as the action downloads it: the asset name for this
  // runner and its SHA256SUMS, with the flags the release gives its binaries.
  const compile = job.steps[build]!.run!;
  const release = scripts(workflow("release.yml"));
  const flags = /deno compile ([^\n]*)/.exec(release)![1]!.split(" ")
    .filter((word) => word.startsWith("--") && word !== "--target");
  for (const flag of flags) assert.ok(compile.includes(flag), flag);
  assert.match(
    compile,
    /--output "\$\{release\}\/loom-v\$\{version\}-x86_64-unknown-linux-gnu"/,
  );
  assert.match(compile, /sha256sum loom-\* > SHA256SUMS/);
  const step = job.steps[action]! as Step & { env?: Record<string, string> };
  assert.match(step.env?.LOOM_RELEASE_BASE_URL ?? "", /^file:\/\//);
  // The recorded bug-fix slice, tested by the fixture's own check.
  assert.deepEqual(step.with, {
    "intent-file": "fixtures/intents/bugfix.txt",
    model: "recorded:${{ github.workspace }}/fixtures/recordings/bugfix.json",
    test: "deno run check.ts",
    workspace: "${{ runner.temp }}/bugfix",
  });
});

Deno.test("The release compiles for Linux, macOS and Windows, attests and checksums the binaries, smoke-tests each on its own runner, then attaches them and publishes to JSR with OIDC", async () => {
  const release = workflow("release.yml");
  assert.deepEqual(Object.keys(release.on), ["push"]);
  assert.deepEqual((release.on.push as { tags: string[] }).tags, ["v*.*.*"]);
  const run = scripts(release);
  for (const target of TARGETS) assert.ok(run.includes(target), target);
  // The binaries get the permissions the `loom` task runs with.
  const tasks = (JSON.parse(
    await Deno.readTextFile(join(REPO_ROOT, "deno.json")),
  ) as { tasks: Record<string, string> }).tasks;
  const flags = tasks.loom!.match(/ --(unstable-worker-options|allow-\w+)/g)!;
  const compile = /deno compile ([^\n]*)/.exec(run)?.[1] ?? "";
  for (const flag of flags) assert.ok(compile.includes(flag.trim()), flag);
  // The asset names the action downloads: loom-<tag>-<target>.
  assert.match(run, /--output "dist\/loom-\$\{GITHUB_REF_NAME\}-\$\{target\}"/);
  assert.match(run, /sha256sum loom-\* > SHA256SUMS/);
  assert.match(run, /gh release upload/);

  // Attested where they are built, with the permissions attesting needs.
  const binaries = release.jobs["binaries"]!;
  const attest = binaries.steps.find((step) =>
    step.uses?.startsWith("actions/attest-build-provenance@")
  );
  assert.ok(attest, "the binaries job attests the build provenance");
  assert.equal(binaries.permissions?.["id-token"], "write");
  assert.equal(binaries.permissions?.["attestations"], "write");
  const subjects = String(attest.with?.["subject-path"]).trim().split("\n")
    .map((glob) =>
      new RegExp(
        `^${
          glob.trim().replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(
            /\*/g,
            "[^/]*",
          )
        }$`,
      )
    );
  for (const target of TARGETS) {
    const asset = `dist/loom-v1.2.3-${target}${
      target.includes("windows") ? ".exe" : ""
    }`;
    assert.ok(
      subjects.some((glob) => glob.test(asset)),
      `${asset} is attested`,
    );
    assert.ok(
      !subjects.some((glob) => glob.test(`${asset}.sha256`)),
      `only binaries are attested, not ${asset}.sha256`,
    );
  }

  // Each binary smoke-tested on its own operating system and architecture:
  // checksum, attestation, --version, the demo.
  const smoke = release.jobs["smoke"] as Job & {
    strategy: { matrix: { include: { runner: string; target: string }[] } };
  };
  assert.equal(smoke.needs, "binaries");
  assert.equal(smoke["runs-on"], "${{ matrix.runner }}");
  const matrix = smoke.strategy.matrix.include;
  assert.deepEqual(matrix.map((m) => m.target).sort(), [...TARGETS].sort());
  for (const { runner, target } of matrix) {
    const os = target.includes("linux")
      ? /^ubuntu-/
      : target.includes("darwin")
      ? /^macos-/
      : /^windows-/;
    assert.match(runner, os, `${target} on ${runner}`);
    const arm = /-arm$/.test(runner) ||
      (/^macos-/.test(runner) && !/-intel$/.test(runner));
    assert.equal(arm, target.startsWith("aarch64"), `${target} on ${runner}`);
  }
  const check = smoke.steps.map((step) => step.run ?? "").join("\n");
  assert.match(check, /sha256sum --check/);
  assert.match(check, /gh attestation verify/);
  assert.match(check, /--version/);
  assert.match(check, /" demo /);

  // Deno 2.9.6 everywhere Deno runs.
  const setups = Object.entries(release.jobs).filter(([, job]) =>
    job.steps.some((step) => step.uses?.startsWith("denoland/setup-deno@"))
  );
  assert.deepEqual(setups.map(([name]) => name), ["binaries", "smoke", "jsr"]);
  for (const [, job] of setups) {
    const step = job.steps.find((s) =>
      s.uses?.startsWith("denoland/setup-deno@")
    );
    assert.equal(step?.with?.["deno-version"], "2.9.6");
  }

  const attach = release.jobs["release"]!;
  assert.equal(
    attach.needs,
    "smoke",
    "nothing is attached before every smoke test passed",
  );
  assert.equal(attach.permissions?.["contents"], "write");
  const publish = Object.values(release.jobs).find((job) =>
    job.steps.some((step) => step.run?.trim() === "deno publish")
  );
  assert.ok(publish, "a job runs deno publish");
  assert.equal(publish.permissions?.["id-token"], "write");
  assert.equal(publish.needs, "release", "publishing waits for the release");
});

Deno.test("The action downloads exactly the assets the release workflow names", async () => {
  const install = await Deno.readTextFile(
    join(REPO_ROOT, ".github", "action", "install.sh"),
  );
  const targets = [...install.matchAll(/target=([a-z0-9_-]+)/g)].map((m) =>
    m[1]
  );
  assert.deepEqual(targets.sort(), [...TARGETS].sort());
  assert.match(install, /asset="loom-\$\{tag\}-\$\{target\}\$\{suffix\}"/);
  assert.match(install, /suffix=\.exe/);
  assert.match(install, /\$\{base\}\/\$\{tag\}\/SHA256SUMS/);
});

Deno.test("The workflow of docs/ci.md parses with GitHub's parser: a matrix of read-only slices, the session kept as an artifact and resumed in a later job, the pull request opened by the only job that writes", async () => {
  const page = await Deno.readTextFile(join(REPO_ROOT, "docs", "ci.md"));
  const blocks = [...page.matchAll(/^```yaml\n([\s\S]*?)^```/gm)]
    .map((m) => m[1]!).filter((b) => b.startsWith("name:"));
  assert.equal(blocks.length, 1, "docs/ci.md holds one complete workflow");
  const text = blocks[0]!;
  assert.deepEqual(workflowErrors("docs-ci.yml", text), []);
  const w = parse(text) as Workflow & {
    permissions: Record<string, string>;
    jobs: Record<
      string,
      Job & { strategy?: { matrix: Record<string, unknown> } }
    >;
  };
  assert.deepEqual(w.permissions, { contents: "read" });
  assert.deepEqual(Object.keys(w.jobs), ["slice", "resume", "pull-request"]);
  const { slice, resume } = w.jobs;
  const pr = w.jobs["pull-request"]!;

  // The action as the docs use it: its own inputs only, this version.
  const version = (JSON.parse(
    await Deno.readTextFile(join(REPO_ROOT, "deno.json")),
  ) as { version: string }).version;
  const manifest = parse(
    await Deno.readTextFile(join(REPO_ROOT, "action.yml")),
  ) as { inputs: Record<string, unknown> };
  const uses = (job: Job) =>
    job.steps.filter((s) => s.uses?.startsWith("OWNER/loom@"));
  for (const job of [slice!, resume!]) {
    const [step] = uses(job);
    assert.ok(step, "the job runs the action");
    assert.equal(step.uses, `OWNER/loom@v${version}`);
    for (const input of Object.keys(step.with ?? {})) {
      assert.ok(input in manifest.inputs, `the action has no input ${input}`);
    }
    assert.equal(step.with?.["session"], "${{ env.RESULT }}/session");
    assert.ok(
      job.steps.some((s) => s.uses?.startsWith("denoland/setup-deno@")),
      "the test command's Deno is installed",
    );
  }
  assert.ok(
    Array.isArray((slice!.strategy!.matrix as { include: unknown[] }).include),
  );
  assert.ok(
    (slice!.strategy!.matrix as { include: unknown[] }).include.length >= 2,
  );
  // Kept as an artifact, restored in the later job.
  assert.ok(
    slice!.steps.some((s) =>
      s.uses?.startsWith("actions/upload-artifact@") &&
      s.with?.["path"] === "${{ env.RESULT }}"
    ),
  );
  assert.equal(resume!.needs, "slice");
  assert.ok(
    resume!.steps.some((s) =>
      s.uses?.startsWith("actions/download-artifact@") &&
      s.with?.["path"] === "${{ env.RESULT }}"
    ),
  );
  // Who may do what: the jobs with the model key only read; the one that
  // writes holds no model key.
  for (const job of [slice!, resume!]) {
    assert.deepEqual(job.permissions, { contents: "read" });
  }
  assert.deepEqual(pr.permissions, {
    contents: "write",
    "pull-requests": "write",
  });
  assert.ok(!JSON.stringify(pr).includes("ANTHROPIC_API_KEY"));
  assert.match(scripts({ on: {}, jobs: { pr } }), /gh pr create/);
  assert.equal(pr.needs, "resume");
});
