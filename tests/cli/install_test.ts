import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { copyTree } from "../../lib/copy_tree.ts";
import { LOOM_FLAGS, shimFor } from "../../tools/install.ts";

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
  // The machine's network settings (a proxy, an extra certificate authority)
  // stay: a user's shell has them too.
  for (
    const name of [
      "PATH",
      "HOME",
      "DENO_DIR",
      "XDG_CACHE_HOME",
      "TMPDIR",
      "NODE_EXTRA_CA_CERTS",
      "DENO_CERT",
      "DENO_TLS_CA_STORE",
      "HTTPS_PROXY",
      "https_proxy",
      "HTTP_PROXY",
      "http_proxy",
      "NO_PROXY",
      "no_proxy",
    ]
  ) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * A proxy address where nothing listens: with it in HTTPS_PROXY and
 * HTTP_PROXY, any download the installed command tried would fail, so the
 * runs below prove it needs nothing beyond what `deno task install` cached,
 * however warm the cache was before the install.
 */
function deadProxy(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return `http://127.0.0.1:${port}`;
}

Deno.test("deno task install puts a loom command that resolves paths against the caller's folder", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "loom-install-" });
  // The installed shim runs `deno` from PATH, as it does for a user; the
  // network is out of reach, so a first run cannot download anything.
  const offline = {
    PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}`,
    HTTPS_PROXY: deadProxy(),
    HTTP_PROXY: deadProxy(),
    NO_PROXY: "",
  };
  try {
    const installed = await run(Deno.execPath(), ["task", "install"], {
      cwd: REPO,
      env: { DENO_INSTALL_ROOT: root },
    });
    assert.equal(installed.code, 0, installed.stderr);
    const loom = join(root, "bin", "loom");
    const shim = await Deno.readTextFile(loom);
    assert.match(shim, /--unstable-worker-options/);
    assert.match(shim, /'--allow-read' '--allow-write'/);
    // It runs this checkout with its own deno.json, so deno.lock's pinned
    // versions are the ones that run (no copied config with a new lock).
    assert.ok(shim.includes(`'--config' '${join(REPO, "deno.json")}'`), shim);
    await assert.rejects(Deno.stat(join(root, "bin", ".loom")));

    await t.step("render from the folder of the context file", async () => {
      const { code, stdout, stderr } = await run(
        loom,
        ["render", "agent.yaml"],
        {
          cwd: join(REPO, "fixtures/contexts"),
          env: offline,
        },
      );
      assert.equal(code, 0, stderr);
      assert.equal(stderr, "");
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
      ], { cwd: work, env: offline });
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

    await t.step(
      "a bad path names the caller's path, and nothing else is printed",
      async () => {
        const { code, stdout, stderr } = await run(loom, [
          "inspect",
          "nope.txt",
        ], {
          cwd: root,
          env: offline,
        });
        assert.equal(code, 2);
        assert.equal(stdout, "");
        assert.equal(
          stderr,
          "loom inspect: Cannot read nope.txt: it does not exist\n",
        );
      },
    );
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

Deno.test("The loom launcher passes a clone path with spaces and quotes, and the caller's arguments, to deno unchanged", async () => {
  const root = await Deno.makeTempDir({ prefix: "loom-shim-" });
  try {
    const repo = join(root, `it's a "clone"`);
    const shim = shimFor(root, repo, "linux");
    await Deno.mkdir(join(root, "bin"));
    await Deno.writeTextFile(shim.path, shim.text, { mode: 0o755 });
    // A stand-in `deno` that prints the arguments it got, one per line.
    const fake = join(root, "fake");
    await Deno.mkdir(fake);
    await Deno.writeTextFile(
      join(fake, "deno"),
      '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n',
      { mode: 0o755 },
    );
    const { code, stdout } = await run(shim.path, [
      "render",
      "a b.yaml",
      "$HOME",
    ], {
      cwd: root,
      env: { PATH: `${fake}:/usr/bin:/bin` },
    });
    assert.equal(code, 0);
    assert.deepEqual(stdout.split("\n").slice(0, -1), [
      "run",
      ...LOOM_FLAGS,
      "--config",
      join(repo, "deno.json"),
      new URL(`file://${join(repo, "cli.ts")}`).href,
      "render",
      "a b.yaml",
      "$HOME",
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
