import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { copyTree } from "../../lib/copy_tree.ts";

const REPO = resolve(".");
const decoder = new TextDecoder();

async function run(
  program: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
) {
  const output = await new Deno.Command(program, {
    args,
    cwd: options.cwd,
    // A clean environment: an inherited INIT_CWD (npx sets one) would hide
    // what deno task does by itself.
    clearEnv: true,
    env: { ...baseEnv(), NO_COLOR: "1", ...options.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

Deno.test("deno task install puts a loom command that resolves paths against the caller's folder", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "loom-install-" });
  // The installed shim runs `deno` from PATH, as it does for a user.
  const path = `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}`;
  try {
    const installed = await run(Deno.execPath(), ["task", "install"], {
      cwd: REPO,
      env: { DENO_INSTALL_ROOT: root },
    });
    assert.equal(installed.code, 0, installed.stderr);
    const loom = join(root, "bin", "loom");
    const shim = await Deno.readTextFile(loom);
    assert.match(shim, /--unstable-worker-options/);
    assert.match(shim, /--allow-read --allow-write/);

    await t.step("render from the folder of the context file", async () => {
      const { code, stdout, stderr } = await run(
        loom,
        ["render", "agent.yaml"],
        {
          cwd: join(REPO, "fixtures/contexts"),
          env: { PATH: path },
        },
      );
      assert.equal(code, 0, stderr);
      assert.match(stdout, /^> FOUNDATION\n/);
    });

    await t.step("run --workspace . edits the caller's folder", async () => {
      const work = join(root, "work");
      await copyTree(join(REPO, "fixtures/workspaces/bugfix"), work);
      await Deno.copyFile(
        join(REPO, "fixtures/recordings/bugfix.json"),
        join(root, "bugfix.json"),
      );
      await Deno.copyFile(
        join(REPO, "fixtures/intents/bugfix.txt"),
        join(root, "intent.txt"),
      );
      const before = await Deno.readTextFile(join(work, "src/stats.ts"));
      const { code, stdout, stderr } = await run(loom, [
        "run",
        "--workspace",
        ".",
        "--intent-file",
        "../intent.txt",
        "--model",
        "recorded:../bugfix.json",
        "--test",
        "deno run check.ts",
        "--context-policy",
        "bounded",
        "--context-report",
        "report.json",
      ], { cwd: work, env: { PATH: path } });
      assert.equal(code, 0, stderr);
      assert.match(stdout, /^loom run: completed after/);
      assert.notEqual(
        await Deno.readTextFile(join(work, "src/stats.ts")),
        before,
      );
      const report = JSON.parse(
        await Deno.readTextFile(join(work, "report.json")),
      );
      assert.equal(typeof report, "object");
    });

    await t.step("a bad path names the caller's path", async () => {
      const { code, stderr } = await run(loom, ["inspect", "nope.txt"], {
        cwd: root,
        env: { PATH: path },
      });
      assert.equal(code, 2);
      assert.equal(
        stderr,
        "loom inspect: Cannot read nope.txt: it does not exist\n",
      );
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("deno task loom resolves paths against the folder it was started from", async () => {
  const { code, stdout, stderr } = await run(
    Deno.execPath(),
    ["task", "--quiet", "loom", "render", "agent.yaml", "--format", "text"],
    { cwd: join(REPO, "fixtures/contexts") },
  );
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^> FOUNDATION\n/);
});
