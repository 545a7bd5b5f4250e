import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { bwrapTest } from "../security/_bwrap.ts";
import {
  TEST_OUTPUT_TAIL_BYTES,
  WorkspaceExecutor,
  type WorkspaceExecutorOptions,
} from "../../lib/executor/workspace_executor.ts";

async function withExecutor(
  options: Omit<WorkspaceExecutorOptions, "workspace">,
  body: (executor: WorkspaceExecutor, workspace: string) => Promise<void>,
  prepare?: (workspace: string) => Promise<void>,
): Promise<void> {
  const workspace = await Deno.realPath(await Deno.makeTempDir());
  await prepare?.(workspace);
  const executor = await WorkspaceExecutor.start({ workspace, ...options });
  try {
    await body(executor, workspace);
  } finally {
    executor.close();
    await Deno.remove(workspace, { recursive: true });
  }
}

/** A workspace program `./check.sh` that echoes its first argument. */
function writeCheckScript(workspace: string): Promise<void> {
  return Deno.writeTextFile(
    `${workspace}/check.sh`,
    '#!/bin/sh\necho "checked $1"\n',
    { mode: 0o755 },
  );
}

async function listing(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

Deno.test("WorkspaceExecutor.inspect() reads UTF-8 text and explains every other case", async (t) => {
  await withExecutor({}, async (executor) => {
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
  }, async (workspace) => {
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
});

Deno.test("WorkspaceExecutor.inspect() refuses files larger than maxFileBytes", async () => {
  await withExecutor({ maxFileBytes: 4 }, async (executor) => {
    const [small, large] = await executor.inspect(["small.txt", "large.txt"]);
    assert.equal(small?.text, "1234");
    assert.equal(large?.code, "too_large");
  }, async (workspace) => {
    await Deno.writeTextFile(`${workspace}/small.txt`, "1234");
    await Deno.writeTextFile(`${workspace}/large.txt`, "12345");
  });
});

Deno.test("WorkspaceExecutor.edit() writes files atomically", async (t) => {
  const old = new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0x0a, 0xff, 0x00]);
  await withExecutor({}, async (executor, workspace) => {
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
        const before = await listing(workspace);
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
        assert.deepEqual(await listing(workspace), before);
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
});

/** The names in `dir` that match `pattern`. */
async function matching(dir: string, pattern: RegExp): Promise<string[]> {
  return (await listing(dir)).filter((name) => pattern.test(name));
}

/**
 * The edit fails with `rollback_failed`, says the workspace may be changed
 * (never that nothing changed), and lists exactly `unrestored`, with no
 * host path.
 */
function rejectsUnrestored(
  edit: Promise<unknown>,
  unrestored: string,
  workspace: string,
): Promise<void> {
  return assert.rejects(edit, (error: Error & { code?: string }) => {
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
    await withExecutor(
      sandbox === null ? { sandbox } : {},
      async (executor, workspace) => {
        assert.equal(executor.sandboxed, sandbox !== null);
        await t.step(
          "a failed restore is rollback_failed, names the file, and never says nothing changed",
          async () => {
            await rejectsUnrestored(
              executor.edit([
                { path: "link", contents: "replaces the symlink\n" },
                { path: "link/b.txt", contents: "model text\n" },
              ]),
              '"link/b.txt"',
              workspace,
            );
            // What could be restored was: the symlink, and b.txt untouched.
            assert.equal(await Deno.readLink(`${workspace}/link`), "dir");
            assert.equal(
              await Deno.readTextFile(`${workspace}/dir/b.txt`),
              "old b\n",
            );
            assert.deepEqual(await listing(workspace), ["dir", "link"]);
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
            await rejectsUnrestored(
              executor.edit([
                { path: "link", contents: "replaces the symlink\n" },
                { path: "link/new/c.txt", contents: "model text\n" },
              ]),
              '"link/new/c.txt", "link/new/"',
              workspace,
            );
            assert.equal(await Deno.readLink(`${workspace}/link`), "dir");
            assert.deepEqual(await listing(`${workspace}/dir`), [
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
      },
      async (workspace) => {
        await Deno.mkdir(`${workspace}/dir`);
        await Deno.writeTextFile(`${workspace}/dir/b.txt`, "old b\n");
        await Deno.symlink("dir", `${workspace}/link`);
      },
    );
  };
  const title =
    `WorkspaceExecutor.edit() ${mode}: a rollback that fails is reported as rollback_failed with what it could not restore`;
  if (sandbox === null) Deno.test(title, body);
  else bwrapTest(title, body);
}

/** `deno run` of a script written into the workspace as check.ts. */
function denoScript(script: string): {
  command: string[];
  prepare(workspace: string): Promise<void>;
} {
  return {
    command: [Deno.execPath(), "run", "check.ts"],
    prepare: (workspace) => Deno.writeTextFile(`${workspace}/check.ts`, script),
  };
}

Deno.test("WorkspaceExecutor.runTests() under Deno's confinement (no bubblewrap)", async (t) => {
  await t.step(
    "exit code, combined stdout and stderr, the workspace as cwd",
    async () => {
      const check = denoScript(
        "console.log('out:' + Deno.cwd()); console.error('err'); Deno.exit(3)",
      );
      await withExecutor(
        { testCommand: check.command, sandbox: null },
        async (executor, workspace) => {
          const run = await executor.runTests();
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
        check.prepare,
      );
    },
  );

  await t.step(
    "the test reads only the variables passed with testEnv",
    async () => {
      Deno.env.set("LOOM_TEST_SECRET", "hunter2");
      const check = denoScript(
        "let secret; try { secret = Deno.env.get('LOOM_TEST_SECRET'); } catch (e) { secret = e.name; }\n" +
          "console.log(JSON.stringify({ secret, extra: Deno.env.get('LOOM_EXTRA') }));",
      );
      try {
        await withExecutor({
          testCommand: check.command,
          sandbox: null,
          testEnv: { LOOM_EXTRA: "yes" },
        }, async (executor) => {
          const env = JSON.parse((await executor.runTests()).output_tail);
          assert.deepEqual(env, { secret: "NotCapable", extra: "yes" });
        }, check.prepare);
      } finally {
        Deno.env.delete("LOOM_TEST_SECRET");
      }
    },
  );

  await t.step(
    "the output tail is the last 8 KiB, cut on a character boundary",
    async () => {
      // 10,000 three-byte characters: the last 8,192 bytes start inside one.
      const check = denoScript(
        "Deno.stdout.writeSync(new TextEncoder().encode('€'.repeat(10000)))",
      );
      await withExecutor(
        { testCommand: check.command, sandbox: null },
        async (executor) => {
          const run = await executor.runTests();
          assert.equal(run.output_bytes, 30_000);
          assert.equal(run.output_tail, "€".repeat(2730));
          assert.equal(new TextEncoder().encode(run.output_tail).length, 8190);
          assert.ok(8190 <= TEST_OUTPUT_TAIL_BYTES);
        },
        check.prepare,
      );
    },
  );

  await t.step(
    "a run past the timeout is killed and reported timed_out",
    async () => {
      const check = denoScript(
        "console.log('started'); await new Promise((r) => setTimeout(r, 600_000));",
      );
      await withExecutor({
        testCommand: check.command,
        sandbox: null,
        testTimeoutMs: 500,
      }, async (executor) => {
        const run = await executor.runTests();
        assert.equal(run.timed_out, true);
        assert.notEqual(run.exit_code, 0);
        assert.match(run.confinement, /killed after 500 ms/);
      }, check.prepare);
    },
  );

  await t.step(
    "a test that writes into the workspace changes the tree",
    async () => {
      const check = denoScript(
        "Deno.writeTextFileSync('out.txt', String(Date.now()));",
      );
      await withExecutor(
        { testCommand: check.command, sandbox: null },
        async (executor) => {
          const run = await executor.runTests();
          assert.equal(run.exit_code, 0, run.output_tail);
          assert.notEqual(run.tree_before, run.tree_after);
        },
        check.prepare,
      );
    },
  );

  await t.step(
    "a command Deno cannot confine is confinement_unavailable",
    async () => {
      const workspace = await Deno.makeTempDir();
      try {
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
              workspace,
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
      } finally {
        await Deno.remove(workspace, { recursive: true });
      }
    },
  );
});

Deno.test("WorkspaceExecutor.runTests() unconfined when asked (--unconfined-tests)", async (t) => {
  await t.step(
    "a program path with a slash resolves against the workspace",
    async () => {
      await withExecutor(
        {
          testCommand: ["./check.sh", "arg"],
          sandbox: null,
          unconfinedTests: true,
        },
        async (executor) => {
          const run = await executor.runTests();
          assert.equal(run.exit_code, 0);
          assert.equal(run.output_tail, "checked arg\n");
          assert.equal(run.confined_by, "unconfined");
          assert.match(run.confinement, /^UNCONFINED/);
        },
        writeCheckScript,
      );
    },
  );

  await t.step(
    "a background process holding the pipes does not hang the run",
    async () => {
      await withExecutor({
        testCommand: ["sh", "-c", "sleep 5 & echo waiting; wait"],
        testTimeoutMs: 300,
        sandbox: null,
        unconfinedTests: true,
      }, async (executor) => {
        const run = await executor.runTests();
        assert.equal(run.timed_out, true);
      });
    },
  );

  await t.step("a missing program is tests_failed_to_start", async () => {
    await withExecutor(
      {
        testCommand: ["./no-such-program"],
        sandbox: null,
        unconfinedTests: true,
      },
      async (executor) => {
        await assert.rejects(executor.runTests(), {
          code: "tests_failed_to_start",
        });
      },
    );
  });

  await t.step("without a test command it is no_test_command", async () => {
    await withExecutor({}, async (executor) => {
      await assert.rejects(executor.runTests(), { code: "no_test_command" });
    });
  });
});

bwrapTest("WorkspaceExecutor.runTests() inside bubblewrap", async (t) => {
  await t.step(
    "a program in the workspace runs; the note names no host path",
    async () => {
      await withExecutor(
        { testCommand: ["./check.sh", "arg"] },
        async (executor, workspace) => {
          const run = await executor.runTests();
          assert.equal(run.exit_code, 0, run.output_tail);
          assert.equal(run.output_tail, "checked arg\n");
          assert.equal(run.confined_by, "bubblewrap");
          assert.match(run.confinement, /^Bubblewrap confined the test/);
          assert.ok(!run.confinement.includes(workspace), run.confinement);
        },
        writeCheckScript,
      );
    },
  );

  await t.step(
    "the environment holds PATH, HOME, TMPDIR and testEnv only",
    async () => {
      Deno.env.set("LOOM_TEST_SECRET", "hunter2");
      try {
        await withExecutor({
          testCommand: ["sh", "-c", "env | sort"],
          testEnv: { LOOM_EXTRA: "yes" },
        }, async (executor) => {
          const names = (await executor.runTests()).output_tail.trim().split(
            "\n",
          )
            .map((line) => line.split("=")[0]).filter((n) =>
              n !== "PWD" && n !== "SHLVL" && n !== "_"
            );
          assert.deepEqual(names, ["HOME", "LOOM_EXTRA", "PATH", "TMPDIR"]);
        });
      } finally {
        Deno.env.delete("LOOM_TEST_SECRET");
      }
    },
  );

  await t.step(
    "a run past the timeout is killed and reported timed_out",
    async () => {
      await withExecutor({
        testCommand: ["sh", "-c", "echo started; exec sleep 600"],
        testTimeoutMs: 300,
      }, async (executor) => {
        const run = await executor.runTests();
        assert.equal(run.timed_out, true);
        assert.notEqual(run.exit_code, 0);
      });
    },
  );

  await t.step(
    "a background process holding the pipes dies with the sandbox",
    async () => {
      await withExecutor({
        testCommand: ["sh", "-c", "sleep 600 & echo waiting"],
        testTimeoutMs: 60_000,
      }, async (executor) => {
        const run = await executor.runTests();
        assert.equal(run.timed_out, false);
        assert.equal(run.exit_code, 0);
      });
    },
  );
});

Deno.test("WorkspaceExecutor.start() checks its workspace and options", async (t) => {
  await t.step("a missing workspace is workspace_unavailable", async () => {
    await assert.rejects(
      WorkspaceExecutor.start({ workspace: "/no/such/workspace" }),
      { code: "workspace_unavailable" },
    );
  });
  await t.step("an empty test command is a TypeError", async () => {
    const workspace = await Deno.makeTempDir();
    try {
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
    } finally {
      await Deno.remove(workspace);
    }
  });
  await t.step("calls after close() fail with executor_closed", async () => {
    await withExecutor({}, async (executor) => {
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
});

Deno.test("WorkspaceExecutor runs its worker in this process without bubblewrap", async () => {
  await withExecutor({ sandbox: null }, (executor) => {
    assert.equal(executor.sandboxed, false);
    return Promise.resolve();
  });
});

bwrapTest(
  "WorkspaceExecutor runs its worker inside bubblewrap, where only the workspace exists",
  async () => {
    const outside = await Deno.realPath(await Deno.makeTempDir());
    await Deno.writeTextFile(`${outside}/secret.txt`, "outside secret\n");
    try {
      await withExecutor({}, async (executor, workspace) => {
        assert.equal(executor.sandboxed, true);
        // Inside the sandbox the link's target does not exist at all.
        await Deno.symlink(outside, `${workspace}/link`);
        const [file] = await executor.inspect(["link/secret.txt"]);
        assert.equal(file?.text, undefined);
        assert.equal(file?.code, "symlink_escape");
        const edited = await executor.edit([{ path: "a.txt", contents: "a" }]);
        assert.equal(edited.files.length, 1);
      });
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  },
);
