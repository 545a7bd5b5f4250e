import assert from "node:assert/strict";
import { createHash } from "node:crypto";
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

/** `deno eval` of a script, as a test command. */
function denoEval(script: string): string[] {
  return [Deno.execPath(), "eval", "--no-config", script];
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
      assert.match(entry?.error ?? "", /^NotFound: /);
    });
    await t.step(
      "binary, invalid UTF-8 and directories are errors, not text",
      async () => {
        const [binary, invalid, dir] = await executor.inspect([
          "bin.dat",
          "latin1.txt",
          "nested",
        ]);
        assert.match(binary?.error ?? "", /^BinaryFile: /);
        assert.match(
          invalid?.error ?? "",
          /^InvalidData: latin1\.txt is not valid UTF-8/,
        );
        assert.match(dir?.error ?? "", /^NotAFile: /);
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
    assert.match(large?.error ?? "", /^TooLarge: /);
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
            assert.equal(error.code, "edit_failed");
            assert.match(error.message, /nothing changed/);
            assert.match(error.message, /IsADirectory/);
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

Deno.test("WorkspaceExecutor.runTests() runs the configured command in the workspace", async (t) => {
  await t.step("exit code and combined stdout and stderr", async () => {
    await withExecutor({
      testCommand: denoEval(
        "console.log('out:' + Deno.cwd()); console.error('err'); Deno.exit(3)",
      ),
    }, async (executor, workspace) => {
      const run = await executor.runTests();
      assert.equal(run.exit_code, 3);
      assert.equal(run.timed_out, false);
      assert.ok(
        run.output_tail.includes(`out:${workspace}\n`),
        run.output_tail,
      );
      assert.ok(run.output_tail.includes("err\n"), run.output_tail);
      assert.equal(
        run.output_bytes,
        new TextEncoder().encode(run.output_tail).length,
      );
      assert.match(run.confinement, /Deno confined the executor's worker/);
      assert.match(run.confinement, /The test process is not confined by Deno/);
      // The note names no machine path, so event digests match across machines.
      assert.ok(!run.confinement.includes(workspace), run.confinement);
      assert.match(run.confinement, /run only "deno"/);
    });
  });

  await t.step(
    "a program path with a slash resolves against the workspace",
    async () => {
      await withExecutor(
        { testCommand: ["./check.sh", "arg"] },
        async (executor) => {
          const run = await executor.runTests();
          assert.equal(run.exit_code, 0);
          assert.equal(run.output_tail, "checked arg\n");
        },
        async (workspace) => {
          await Deno.writeTextFile(
            `${workspace}/check.sh`,
            '#!/bin/sh\necho "checked $1"\n',
            {
              mode: 0o755,
            },
          );
        },
      );
    },
  );

  await t.step(
    "the environment is cleared except the kept variables",
    async () => {
      Deno.env.set("LOOM_TEST_SECRET", "hunter2");
      try {
        await withExecutor({
          testCommand: denoEval(
            "console.log(JSON.stringify(Deno.env.toObject()))",
          ),
          testEnv: { LOOM_EXTRA: "yes" },
        }, async (executor) => {
          const env = JSON.parse((await executor.runTests()).output_tail);
          assert.equal(env.LOOM_TEST_SECRET, undefined);
          assert.equal(env.LOOM_EXTRA, "yes");
        });
      } finally {
        Deno.env.delete("LOOM_TEST_SECRET");
      }
    },
  );

  await t.step(
    "the output tail is the last 8 KiB, cut on a character boundary",
    async () => {
      // 10,000 three-byte characters: the last 8,192 bytes start inside one.
      await withExecutor({
        testCommand: denoEval(
          "Deno.stdout.writeSync(new TextEncoder().encode('€'.repeat(10000)))",
        ),
      }, async (executor) => {
        const run = await executor.runTests();
        assert.equal(run.output_bytes, 30_000);
        assert.equal(run.output_tail, "€".repeat(2730));
        assert.equal(new TextEncoder().encode(run.output_tail).length, 8190);
        assert.ok(8190 <= TEST_OUTPUT_TAIL_BYTES);
      });
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
        assert.match(run.confinement, /killed after 300 ms/);
      });
    },
  );

  await t.step(
    "a background process holding the pipes does not hang the run",
    async () => {
      await withExecutor({
        testCommand: ["sh", "-c", "sleep 5 & echo waiting; wait"],
        testTimeoutMs: 300,
      }, async (executor) => {
        const run = await executor.runTests();
        assert.equal(run.timed_out, true);
      });
    },
  );

  await t.step("a missing program is tests_failed_to_start", async () => {
    await withExecutor(
      { testCommand: ["./no-such-program"] },
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
