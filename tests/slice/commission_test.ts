import assert from "node:assert/strict";
import {
  commission,
  type CommissionOptions,
  type CommissionResult,
} from "../../lib/slice/commission.ts";

const DIGEST = "a".repeat(64);

async function withWorkspace(
  body: (workspace: string, outside: string) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir());
  const workspace = `${root}/workspace`;
  const outside = `${root}/outside`;
  await Deno.mkdir(`${workspace}/src`, { recursive: true });
  await Deno.mkdir(`${workspace}/.git/hooks`, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.writeTextFile(`${workspace}/src/a.ts`, "export const a = 1;\n");
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret\n");
  try {
    await body(workspace, outside);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function options(
  workspace: string,
  extra: Partial<CommissionOptions> = {},
): CommissionOptions {
  return { workspace, testConfigured: true, latestValidated: false, ...extra };
}

function codeOf(result: CommissionResult): string {
  return result.ok ? "admitted" : result.code;
}

function inspect(workspace: string, path: string, extra = {}): string {
  return codeOf(
    commission(
      "repository.inspect",
      { paths: [path] },
      options(workspace, extra),
    ),
  );
}

function edit(workspace: string, path: string, extra = {}): string {
  return codeOf(
    commission(
      "repository.edit",
      { files: [{ path, contents: "x" }] },
      options(workspace, extra),
    ),
  );
}

Deno.test("commission() admits well-formed actions with normalised paths", async (t) => {
  await withWorkspace(async (workspace) => {
    await t.step("inspect paths lose ./, empty and inner .. segments", () => {
      const result = commission(
        "repository.inspect",
        { paths: ["./src//a.ts", "src/x/../a.ts", "new/file.txt"] },
        options(workspace),
      );
      assert.deepEqual(result, {
        ok: true,
        action: "repository.inspect",
        args: { paths: ["src/a.ts", "src/a.ts", "new/file.txt"] },
      });
    });
    await t.step("edit keeps contents and the optional message", () => {
      const result = commission(
        "repository.edit",
        { files: [{ path: "src/./b.ts", contents: "b" }], message: "Add b" },
        options(workspace),
      );
      assert.deepEqual(result, {
        ok: true,
        action: "repository.edit",
        args: {
          files: [{ path: "src/b.ts", contents: "b" }],
          message: "Add b",
        },
      });
    });
    await t.step(
      "tests.run is admitted when a test command is configured",
      () => {
        assert.deepEqual(commission("tests.run", {}, options(workspace)), {
          ok: true,
          action: "tests.run",
          args: {},
        });
      },
    );
    await t.step(
      "slice.complete is admitted when the tests validate the latest revision",
      () => {
        const result = commission(
          "slice.complete",
          { summary: "Fixed" },
          options(workspace, { latestValidated: true }),
        );
        assert.deepEqual(result, {
          ok: true,
          action: "slice.complete",
          args: { summary: "Fixed" },
        });
      },
    );
    await t.step(
      "slice.complete is admitted when no test command is configured",
      () => {
        const result = commission(
          "slice.complete",
          { summary: "Done" },
          options(workspace, { testConfigured: false }),
        );
        assert.equal(codeOf(result), "admitted");
      },
    );
    await t.step(
      "a symlink that stays inside the workspace is admitted",
      async () => {
        await Deno.symlink(`${workspace}/src`, `${workspace}/alias`);
        assert.equal(inspect(workspace, "alias/a.ts"), "admitted");
        assert.equal(edit(workspace, "alias/c.ts"), "admitted");
      },
    );
    await t.step(
      "reading inside .git is admitted (only writes are refused)",
      () => {
        assert.equal(inspect(workspace, ".git/hooks"), "admitted");
      },
    );
  });
});

Deno.test("commission() refuses with stable codes", async (t) => {
  await withWorkspace(async (workspace, outside) => {
    await t.step(
      "unknown_action for an action the slice does not offer",
      () => {
        const result = commission(
          "shell.exec",
          { command: "rm -rf /" },
          options(workspace),
        );
        assert.equal(codeOf(result), "unknown_action");
        assert.match(
          result.ok ? "" : result.reason,
          /not an action of the slice/,
        );
      },
    );

    await t.step(
      "invalid_arguments for shapes outside the closed schemas",
      () => {
        const cases: [string, unknown][] = [
          ["repository.inspect", { paths: ["a"], extra: 1 }],
          ["repository.inspect", { paths: [] }],
          ["repository.inspect", {
            paths: Array.from({ length: 17 }, (_, i) => `f${i}`),
          }],
          ["repository.inspect", { paths: [7] }],
          ["repository.inspect", null],
          ["repository.edit", { files: [] }],
          ["repository.edit", {
            files: [{ path: "a", contents: "x", mode: 0o777 }],
          }],
          ["repository.edit", {
            files: [{
              path: "a",
              contents: {
                segments: [{
                  ref: {
                    result: "result-1",
                    sha256: DIGEST,
                    select: { kind: "whole" },
                  },
                }],
              },
            }],
          }],
          ["repository.edit", {
            files: [{ path: "a", contents: "x" }],
            message: 3,
          }],
          ["tests.run", { verbose: true }],
          ["slice.complete", {}],
          ["slice.complete", { summary: 1 }],
        ];
        for (const [action, args] of cases) {
          const result = commission(action, args, options(workspace));
          assert.equal(
            codeOf(result),
            "invalid_arguments",
            JSON.stringify(args),
          );
          assert.match(
            result.ok ? "" : result.reason,
            new RegExp(`^The arguments of ${action.replace(".", "\\.")}`),
          );
        }
      },
    );

    await t.step(
      "invalid_path for empty, NUL, backslash and root paths",
      () => {
        for (const path of ["", "a\0b", "src\\a.ts", ".", "src/..", "./"]) {
          assert.equal(
            inspect(workspace, path),
            "invalid_path",
            JSON.stringify(path),
          );
        }
      },
    );

    await t.step(
      "absolute_path for POSIX and drive-letter absolute paths",
      () => {
        assert.equal(inspect(workspace, "/etc/passwd"), "absolute_path");
        assert.equal(
          inspect(workspace, `${workspace}/src/a.ts`),
          "absolute_path",
        );
        assert.equal(edit(workspace, "C:/Windows/x"), "absolute_path");
      },
    );

    await t.step("path_escape for .. leaving the workspace", () => {
      assert.equal(inspect(workspace, "../outside/secret.txt"), "path_escape");
      assert.equal(
        inspect(workspace, "src/../../outside/secret.txt"),
        "path_escape",
      );
      assert.equal(edit(workspace, "a/b/../../../x"), "path_escape");
    });

    await t.step(
      "symlink_escape for symlinks leading outside, as directory or file",
      async () => {
        await Deno.symlink(outside, `${workspace}/out`);
        await Deno.symlink("/etc/passwd", `${workspace}/passwd`);
        await Deno.symlink(
          `${workspace}/missing-target`,
          `${workspace}/dangling`,
        );
        assert.equal(inspect(workspace, "out/secret.txt"), "symlink_escape");
        assert.equal(inspect(workspace, "passwd"), "symlink_escape");
        assert.equal(edit(workspace, "out/new.txt"), "symlink_escape");
        assert.equal(edit(workspace, "out/deeper/new.txt"), "symlink_escape");
        assert.equal(inspect(workspace, "dangling"), "symlink_escape");
      },
    );

    await t.step(
      "git_write for writes into .git, in any letter case or through a symlink",
      async () => {
        assert.equal(edit(workspace, ".git/hooks/pre-commit"), "git_write");
        assert.equal(edit(workspace, "sub/.GIT/config"), "git_write");
        await Deno.symlink(`${workspace}/.git/hooks`, `${workspace}/hooks`);
        assert.equal(edit(workspace, "hooks/pre-commit"), "git_write");
      },
    );

    await t.step(
      "forbidden_root for paths into a forbidden directory, directly or by symlink",
      async () => {
        await Deno.mkdir(`${workspace}/.loom-session`);
        await Deno.symlink(
          `${workspace}/.loom-session`,
          `${workspace}/session-link`,
        );
        const extra = { forbiddenRoots: [`${workspace}/.loom-session`] };
        assert.equal(
          inspect(workspace, ".loom-session/result-1.txt", extra),
          "forbidden_root",
        );
        assert.equal(
          edit(workspace, ".loom-session/x", extra),
          "forbidden_root",
        );
        assert.equal(
          inspect(workspace, "session-link/x", extra),
          "forbidden_root",
        );
        assert.equal(inspect(workspace, "src/a.ts", extra), "admitted");
        assert.equal(
          inspect(workspace, ".loom-session-other", extra),
          "admitted",
        );
      },
    );

    await t.step("duplicate_path for one file named twice in an edit", () => {
      const result = commission(
        "repository.edit",
        {
          files: [{ path: "src/a.ts", contents: "1" }, {
            path: "./src/a.ts",
            contents: "2",
          }],
        },
        options(workspace),
      );
      assert.equal(codeOf(result), "duplicate_path");
    });

    await t.step(
      "tests_not_configured for tests.run without a test command",
      () => {
        const result = commission(
          "tests.run",
          {},
          options(workspace, { testConfigured: false }),
        );
        assert.equal(codeOf(result), "tests_not_configured");
      },
    );

    await t.step(
      "tests_not_validated for slice.complete before the tests validate the latest revision",
      () => {
        const result = commission(
          "slice.complete",
          { summary: "Done" },
          options(workspace),
        );
        assert.equal(codeOf(result), "tests_not_validated");
        assert.doesNotMatch(result.ok ? "" : result.reason, /\.$/);
      },
    );

    await t.step(
      "workspace_unavailable when the workspace does not exist",
      () => {
        assert.equal(
          inspect(`${workspace}/nope`, "a.txt"),
          "workspace_unavailable",
        );
      },
    );

    await t.step("a refusal changes nothing on disk", async () => {
      edit(workspace, "../outside/secret.txt");
      assert.equal(
        await Deno.readTextFile(`${outside}/secret.txt`),
        "secret\n",
      );
    });
  });
});
