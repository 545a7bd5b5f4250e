import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { bwrapTest } from "../security/_bwrap.ts";
import {
  TEST_OUTPUT_TAIL_BYTES,
  type TestRunOutcome,
  WorkspaceExecutor,
  type WorkspaceExecutorOptions,
} from "../../lib/executor/workspace_executor.ts";
import { dirNames, tempDir } from "../_kit.ts";

type ExecutorOptions = Omit<WorkspaceExecutorOptions, "workspace">;

/** An executor on a fresh temp workspace; disposing closes it and removes the workspace. */
interface ExecutorScene extends AsyncDisposable {
  readonly executor: WorkspaceExecutor;
  readonly workspace: string;
}

/** Starts an executor on a temp workspace that `prepare` filled first. */
async function startExecutor(
  options: ExecutorOptions = {},
  prepare?: (workspace: string) => Promise<void>,
): Promise<ExecutorScene> {
  const dir = await tempDir();
  try {
    await prepare?.(dir.path);
    const executor = await WorkspaceExecutor.start({
      workspace: dir.path,
      ...options,
    });
    return {
      executor,
      workspace: dir.path,
      [Symbol.asyncDispose]: () => {
        executor.close();
        return dir[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await dir[Symbol.asyncDispose]();
    throw error;
  }
}

/** One test run in a fresh executor, and where its workspace was. */
async function testRun(
  options: ExecutorOptions,
  prepare?: (workspace: string) => Promise<void>,
): Promise<{ run: TestRunOutcome; workspace: string }> {
  await using scene = await startExecutor(options, prepare);
  return { run: await scene.executor.runTests(), workspace: scene.workspace };
}

/** Sets an environment variable of this process until disposed. */
function envVar(name: string, value: string): Disposable {
  Deno.env.set(name, value);
  return { [Symbol.dispose]: () => Deno.env.delete(name) };
}

Deno.test("WorkspaceExecutor.inspect() reads UTF-8 text and explains every other case", async (t) => {
  await using scene = await startExecutor({}, async (workspace) => {
    await Deno.writeTextFile(`${workspace}/a.txt`, "\ufeffalpha é\r\n");
    await Deno.mkdir(`${workspace}/nested`);
    await Deno.writeTextFile(`${workspace}/nested/b.md`, "# b\n");
    await Deno.writeFile(
      `${workspace}/bin.dat`,
      new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1]),
    );
    await Deno.writeFile(
      `${workspace}/latin1.txt`,
      new Uint8Array([0x63, 0x61, 0x66, 0xe9]),
    );
  });
  const { executor } = scene;
  await t.step("text comes back as written, BOM and all", async () => {
    const [a, b] = await executor.inspect(["a.txt", "./nested/b.md"]);
    assert.deepEqual(a, { path: "a.txt", text: "\ufeffalpha é\r\n" });
    assert.deepEqual(b, { path: "./nested/b.md", text: "# b\n" });
  });
  await t.step("a missing file is marked missing", async () => {
    const [entry] = await executor.inspect(["gone.txt"]);
    assert.equal(entry?.missing, true);
    assert.equal(entry?.code, "not_found");
    assert.equal(entry?.error, 'Cannot read "gone.txt": it does not exist');
  });
  await t.step(
    "binary, invalid UTF-8 and directories are errors, not text",
    async () => {
      const [binary, invalid, dir] = await executor.inspect([
        "bin.dat",
        "latin1.txt",
        "nested",
      ]);
      assert.equal(binary?.code, "binary_file");
      assert.equal(invalid?.code, "invalid_utf8");
      assert.equal(invalid?.error, '"latin1.txt" is not valid UTF-8 text');
      assert.equal(dir?.code, "not_a_file");
      for (const entry of [binary, invalid, dir]) {
        assert.equal(entry?.text, undefined);
      }
    },
  );
});

Deno.test("WorkspaceExecutor.inspect() refuses files larger than maxFileBytes", async () => {
  await using scene = await startExecutor({ maxFileBytes: 4 }, async (ws) => {
    await Deno.writeTextFile(`${ws}/small.txt`, "1234");
    await Deno.writeTextFile(`${ws}/large.txt`, "12345");
  });
  const [small, large] = await scene.executor.inspect([
    "small.txt",
    "large.txt",
  ]);
  assert.equal(small?.text, "1234");
  assert.equal(large?.code, "too_large");
});

Deno.test("WorkspaceExecutor.edit() writes files atomically", async (t) => {
  const old = new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0x0a, 0xff, 0x00]);
  await using scene = await startExecutor();
  const { executor, workspace } = scene;
  await t.step(
    "creates parent directories and reports size and digest",
    async () => {
      const contents = 'export const ok = "✓";\n';
      const result = await executor.edit([{
        path: "src/deep/x.ts",
        contents,
      }]);
      const bytes = new TextEncoder().encode(contents);
      assert.deepEqual(result, {
        files: [{
          path: "src/deep/x.ts",
          utf8_bytes: bytes.length,
          sha256: createHash("sha256").update(bytes).digest("hex"),
        }],
      });
      assert.equal(
        await Deno.readTextFile(`${workspace}/src/deep/x.ts`),
        contents,
      );
    },
  );

  await t.step("replaces an existing file and keeps its mode", async () => {
    await Deno.writeTextFile(`${workspace}/run.sh`, "#!/bin/sh\n");
    await Deno.chmod(`${workspace}/run.sh`, 0o750);
    await executor.edit([{
      path: "run.sh",
      contents: "#!/bin/sh\necho hi\n",
    }]);
    assert.equal(
      await Deno.readTextFile(`${workspace}/run.sh`),
      "#!/bin/sh\necho hi\n",
    );
    assert.equal(
      ((await Deno.stat(`${workspace}/run.sh`)).mode ?? 0) & 0o777,
      0o750,
    );
  });

  await t.step(
    "a directory in the way fails the whole edit and leaves the old file byte-identical",
    async () => {
      await Deno.writeFile(`${workspace}/old.bin`, old);
      await Deno.mkdir(`${workspace}/blocker`);
      const before = await dirNames(workspace);
      await assert.rejects(
        executor.edit([
          { path: "old.bin", contents: "replaced\n" },
          { path: "fresh/new.txt", contents: "new\n" },
          { path: "blocker", contents: "x" },
        ]),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "not_a_file");
          assert.match(error.message, /nothing changed/);
          assert.match(error.message, /"blocker": it is a directory/);
          return true;
        },
      );
      assert.deepEqual(await Deno.readFile(`${workspace}/old.bin`), old);
      // No temp files, no half-made directories.
      assert.deepEqual(await dirNames(workspace), before);
    },
  );

  await t.step(
    "a file in the way of a parent directory fails the edit and changes nothing",
    async () => {
      await assert.rejects(
        executor.edit([
          { path: "old.bin", contents: "replaced\n" },
          { path: "old.bin/child.txt", contents: "x" },
        ]),
        { code: "edit_failed" },
      );
      assert.deepEqual(await Deno.readFile(`${workspace}/old.bin`), old);
    },
  );
});

/** The names in `dir` that match `pattern`. */
async function matching(dir: string, pattern: RegExp): Promise<string[]> {
  return (await dirNames(dir)).filter((name) => pattern.test(name));
}

/**
 * Edits `link` (replacing the symlink by a file) and then `target` under it:
 * the edit fails with `rollback_failed`, says the workspace may be changed
 * (never that nothing changed), lists exactly `unrestored`, with no host
 * path, and the symlink is back.
 */
async function rollbackFails(
  { executor, workspace }: ExecutorScene,
  target: string,
  unrestored: string,
): Promise<void> {
  const edit = executor.edit([
    { path: "link", contents: "replaces the symlink\n" },
    { path: target, contents: "model text\n" },
  ]);
  await assert.rejects(edit, (error: Error & { code?: string }) => {
    assert.equal(error.code, "rollback_failed");
    assert.doesNotMatch(error.message, /nothing changed/i);
    assert.match(error.message, /the workspace may be changed/);
    assert.ok(
      error.message.endsWith(
        `; restoring the workspace failed for ${unrestored}, which may hold changed or missing contents`,
      ),
      error.message,
    );
    assert.ok(!error.message.includes(workspace), error.message);
    return true;
  });
  assert.equal(await Deno.readLink(`${workspace}/link`), "dir");
}

// A real, deterministic rollback failure (no seam, no timing): `link` is a
// symlink to `dir`, and the edit writes `link` (replacing the symlink by a
// file, which phase 2 does first) and then `link/...`, whose temp file
// phase 1 wrote into `dir` through the symlink. Phase 2 then fails at
// `link/...` (`link` is now a file), and the rollback must remove that temp
// file through `link` before it has put the symlink back, so it cannot: the
// workspace keeps a stray file, and the edit must say so rather than report
// that nothing changed.
for (const sandbox of [null, undefined] as const) {
  const mode = sandbox === null ? "in this process" : "in bubblewrap";
  const body = async (t: Deno.TestContext) => {
    await using scene = await startExecutor(
      sandbox === null ? { sandbox } : {},
      async (workspace) => {
        await Deno.mkdir(`${workspace}/dir`);
        await Deno.writeTextFile(`${workspace}/dir/b.txt`, "old b\n");
        await Deno.symlink("dir", `${workspace}/link`);
      },
    );
    const { executor, workspace } = scene;
    assert.equal(executor.sandboxed, sandbox !== null);
    await t.step(
      "a failed restore is rollback_failed, names the file, and never says nothing changed",
      async () => {
        await rollbackFails(scene, "link/b.txt", '"link/b.txt"');
        // What could be restored was: the symlink, and b.txt untouched.
        assert.equal(
          await Deno.readTextFile(`${workspace}/dir/b.txt`),
          "old b\n",
        );
        assert.deepEqual(await dirNames(workspace), ["dir", "link"]);
        // And what could not is really there: the report told the truth.
        const stray = await matching(
          `${workspace}/dir`,
          /^\.b\.txt\.loom-[0-9a-f]{32}\.tmp$/,
        );
        assert.equal(stray.length, 1);
        assert.equal(
          await Deno.readTextFile(`${workspace}/dir/${stray[0]}`),
          "model text\n",
        );
        await Deno.remove(`${workspace}/dir/${stray[0]}`);
      },
    );

    await t.step(
      "a directory it made and cannot remove is named too",
      async () => {
        await rollbackFails(
          scene,
          "link/new/c.txt",
          '"link/new/c.txt", "link/new/"',
        );
        assert.deepEqual(await dirNames(`${workspace}/dir`), [
          "b.txt",
          "new",
        ]);
        assert.equal(
          (await matching(
            `${workspace}/dir/new`,
            /^\.c\.txt\.loom-[0-9a-f]{32}\.tmp$/,
          )).length,
          1,
        );
      },
    );
  };
  const title =
    `WorkspaceExecutor.edit() ${mode}: a rollback that fails is reported as rollback_failed with what it could not restore`;
  if (sandbox === null) Deno.test(title, body);
  else bwrapTest(title, body);
}

/** `deno run` of `script`, written into the workspace as check.ts, under Deno's confinement. */
function denoScript(
  script: string,
  options: ExecutorOptions = {},
): Promise<{ run: TestRunOutcome; workspace: string }> {
  return testRun(
    {
      testCommand: [Deno.execPath(), "run", "check.ts"],
      sandbox: null,
      ...options,
    },
    (workspace) => Deno.writeTextFile(`${workspace}/check.ts`, script),
  );
}

Deno.test("WorkspaceExecutor.runTests() under Deno's confinement (no bubblewrap)", async (t) => {
  await t.step(
    "exit code, combined stdout and stderr, the workspace as cwd",
    async () => {
      const { run, workspace } = await denoScript(
        "console.log('out:' + Deno.cwd()); console.error('err'); Deno.exit(3)",
      );
      assert.equal(run.exit_code, 3);
      assert.equal(run.timed_out, false);
      assert.equal(run.confined_by, "deno");
      assert.ok(
        run.output_tail.includes(`out:${workspace}\n`),
        run.output_tail,
      );
      assert.ok(run.output_tail.includes("err\n"), run.output_tail);
      assert.equal(
        run.output_bytes,
        new TextEncoder().encode(run.output_tail).length,
      );
      assert.match(run.confinement, /^Deno confined the test/);
      // The note names no machine path, so event digests match across machines.
      assert.ok(!run.confinement.includes(workspace), run.confinement);
      assert.equal(run.tree_before, run.tree_after);
    },
  );

  await t.step(
    "the test reads only the variables passed with testEnv",
    async () => {
      using _secret = envVar("LOOM_TEST_SECRET", "hunter2");
      const { run } = await denoScript(
        "let secret; try { secret = Deno.env.get('LOOM_TEST_SECRET'); } catch (e) { secret = e.name; }\n" +
          "console.log(JSON.stringify({ secret, extra: Deno.env.get('LOOM_EXTRA') }));",
        { testEnv: { LOOM_EXTRA: "yes" } },
      );
      const env = JSON.parse(run.output_tail);
      assert.deepEqual(env, { secret: "NotCapable", extra: "yes" });
    },
  );

  await t.step(
    "the output tail is the last 8 KiB, cut on a character boundary",
    async () => {
      // 10,000 three-byte characters: the last 8,192 bytes start inside one.
      const { run } = await denoScript(
        "Deno.stdout.writeSync(new TextEncoder().encode('€'.repeat(10000)))",
      );
      assert.equal(run.output_bytes, 30_000);
      assert.equal(run.output_tail, "€".repeat(2730));
      assert.equal(new TextEncoder().encode(run.output_tail).length, 8190);
      assert.ok(8190 <= TEST_OUTPUT_TAIL_BYTES);
    },
  );

  await t.step(
    "a run past the timeout is killed and reported timed_out",
    async () => {
      const { run } = await denoScript(
        "console.log('started'); await new Promise((r) => setTimeout(r, 600_000));",
        { testTimeoutMs: 500 },
      );
      assert.equal(run.timed_out, true);
      assert.notEqual(run.exit_code, 0);
      assert.match(run.confinement, /killed after 500 ms/);
    },
  );

  await t.step(
    "a test that writes into the workspace changes the tree",
    async () => {
      const { run } = await denoScript(
        "Deno.writeTextFileSync('out.txt', String(Date.now()));",
      );
      assert.equal(run.exit_code, 0, run.output_tail);
      assert.notEqual(run.tree_before, run.tree_after);
    },
  );

  await t.step(
    "a command Deno cannot confine is confinement_unavailable",
    async () => {
      await using workspace = await tempDir();
      for (
        const command of [
          ["node", "check.mjs"],
          [Deno.execPath(), "eval", "1"],
          [Deno.execPath(), "task", "test"],
          [Deno.execPath(), "run", "-A", "check.ts"],
          [Deno.execPath(), "run", "--allow-read=/", "check.ts"],
        ]
      ) {
        await assert.rejects(
          WorkspaceExecutor.start({
            workspace: workspace.path,
            testCommand: command,
            sandbox: null,
          }),
          (error: Error & { code?: string }) => {
            assert.equal(error.code, "confinement_unavailable");
            assert.match(
              error.message,
              /install bubblewrap .*--unconfined-tests/,
            );
            return true;
          },
          command.join(" "),
        );
      }
    },
  );
});

/** The workspace's `./check.sh arg`: it echoes its first argument. */
const CHECK_SCRIPT = {
  command: ["./check.sh", "arg"],
  prepare: (workspace: string) =>
    Deno.writeTextFile(
      `${workspace}/check.sh`,
      '#!/bin/sh\necho "checked $1"\n',
      { mode: 0o755 },
    ),
};

Deno.test("WorkspaceExecutor.runTests() unconfined when asked (--unconfined-tests)", async (t) => {
  const unconfined = { sandbox: null, unconfinedTests: true };
  await t.step(
    "a program path with a slash resolves against the workspace",
    async () => {
      const { run } = await testRun(
        { testCommand: CHECK_SCRIPT.command, ...unconfined },
        CHECK_SCRIPT.prepare,
      );
      assert.equal(run.exit_code, 0);
      assert.equal(run.output_tail, "checked arg\n");
      assert.equal(run.confined_by, "unconfined");
      assert.match(run.confinement, /^UNCONFINED/);
    },
  );

  await t.step(
    "a background process holding the pipes does not hang the run",
    async () => {
      const { run } = await testRun({
        testCommand: ["sh", "-c", "sleep 5 & echo waiting; wait"],
        testTimeoutMs: 300,
        ...unconfined,
      });
      assert.equal(run.timed_out, true);
    },
  );

  await t.step("a missing program is tests_failed_to_start", async () => {
    await using scene = await startExecutor({
      testCommand: ["./no-such-program"],
      ...unconfined,
    });
    await assert.rejects(scene.executor.runTests(), {
      code: "tests_failed_to_start",
    });
  });

  await t.step("without a test command it is no_test_command", async () => {
    await using scene = await startExecutor();
    await assert.rejects(scene.executor.runTests(), {
      code: "no_test_command",
    });
  });
});

bwrapTest("WorkspaceExecutor.runTests() inside bubblewrap", async (t) => {
  await t.step(
    "a program in the workspace runs; the note names no host path",
    async () => {
      const { run, workspace } = await testRun(
        { testCommand: CHECK_SCRIPT.command },
        CHECK_SCRIPT.prepare,
      );
      assert.equal(run.exit_code, 0, run.output_tail);
      assert.equal(run.output_tail, "checked arg\n");
      assert.equal(run.confined_by, "bubblewrap");
      assert.match(run.confinement, /^Bubblewrap confined the test/);
      assert.ok(!run.confinement.includes(workspace), run.confinement);
    },
  );

  await t.step(
    "the environment holds PATH, HOME, TMPDIR and testEnv only",
    async () => {
      using _secret = envVar("LOOM_TEST_SECRET", "hunter2");
      const { run } = await testRun({
        testCommand: ["sh", "-c", "env | sort"],
        testEnv: { LOOM_EXTRA: "yes" },
      });
      const names = run.output_tail.trim().split("\n")
        .map((line) => line.split("=")[0])
        .filter((n) => n !== "PWD" && n !== "SHLVL" && n !== "_");
      assert.deepEqual(names, ["HOME", "LOOM_EXTRA", "PATH", "TMPDIR"]);
    },
  );

  // A test past its timeout is killed; a process it left behind dies with
  // the sandbox, so the run ends when the test does.
  const lifetimes: [string, string, number, boolean][] = [
    [
      "a run past the timeout is killed and reported timed_out",
      "echo started; exec sleep 600",
      300,
      true,
    ],
    [
      "a background process holding the pipes dies with the sandbox",
      "sleep 600 & echo waiting",
      60_000,
      false,
    ],
  ];
  for (const [name, script, testTimeoutMs, timedOut] of lifetimes) {
    await t.step(name, async () => {
      const { run } = await testRun({
        testCommand: ["sh", "-c", script],
        testTimeoutMs,
      });
      assert.equal(run.timed_out, timedOut);
      // Killed means a failing exit; the other one ends as its shell did.
      assert.equal(run.exit_code === 0, !timedOut, String(run.exit_code));
    });
  }
});

Deno.test("WorkspaceExecutor.start() checks its workspace and options", async (t) => {
  await t.step("a missing workspace is workspace_unavailable", async () => {
    await assert.rejects(
      WorkspaceExecutor.start({ workspace: "/no/such/workspace" }),
      { code: "workspace_unavailable" },
    );
  });
  await t.step("an empty test command is a TypeError", async () => {
    await using dir = await tempDir();
    const workspace = dir.path;
    await assert.rejects(
      WorkspaceExecutor.start({ workspace, testCommand: [] }),
      TypeError,
    );
    await assert.rejects(
      WorkspaceExecutor.start({
        workspace,
        testCommand: ["true"],
        testTimeoutMs: 0,
      }),
      RangeError,
    );
  });
  await t.step("calls after close() fail with executor_closed", async () => {
    await using scene = await startExecutor();
    const { executor } = scene;
    executor.close();
    executor.close();
    await assert.rejects(executor.inspect(["a"]), {
      code: "executor_closed",
    });
    await assert.rejects(executor.edit([{ path: "a", contents: "" }]), {
      code: "executor_closed",
    });
  });
});

Deno.test("WorkspaceExecutor runs its worker in this process without bubblewrap", async () => {
  await using scene = await startExecutor({ sandbox: null });
  assert.equal(scene.executor.sandboxed, false);
});

bwrapTest(
  "WorkspaceExecutor runs its worker inside bubblewrap, where only the workspace exists",
  async () => {
    await using outside = await tempDir();
    await Deno.writeTextFile(`${outside.path}/secret.txt`, "outside secret\n");
    await using scene = await startExecutor();
    const { executor, workspace } = scene;
    assert.equal(executor.sandboxed, true);
    // Inside the sandbox the link's target does not exist at all.
    await Deno.symlink(outside.path, `${workspace}/link`);
    const [file] = await executor.inspect(["link/secret.txt"]);
    assert.equal(file?.text, undefined);
    assert.equal(file?.code, "symlink_escape");
    const edited = await executor.edit([{ path: "a.txt", contents: "a" }]);
    assert.equal(edited.files.length, 1);
  },
);
