import assert from "node:assert/strict";
import { tempDir } from "../_kit.ts";
import {
  commission,
  type CommissionOptions,
  type CommissionResult,
} from "../../lib/slice/commission.ts";

const DIGEST = "a".repeat(64);

/** A workspace (`src/a.ts`, `.git/hooks/`) beside an `outside/secret.txt`. */
interface CommissionWorkspace extends AsyncDisposable {
  readonly workspace: string;
  readonly outside: string;
}

async function commissionWorkspace(): Promise<CommissionWorkspace> {
  const root = await tempDir();
  const workspace = `${root.path}/workspace`;
  const outside = `${root.path}/outside`;
  await Deno.mkdir(`${workspace}/src`, { recursive: true });
  await Deno.mkdir(`${workspace}/.git/hooks`, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.writeTextFile(`${workspace}/src/a.ts`, "export const a = 1;\n");
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret\n");
  return {
    workspace,
    outside,
    [Symbol.asyncDispose]: root[Symbol.asyncDispose],
  };
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
  const args = { files: [{ path, contents: "x" }] };
  return codeOf(commission("repository.edit", args, options(workspace, extra)));
}

/** A step name, the action and its arguments, and options beyond the defaults. */
type Case = [string, string, unknown, Partial<CommissionOptions>];

Deno.test("commission() admits well-formed actions with normalised paths", async (t) => {
  await using ws = await commissionWorkspace();
  const { workspace } = ws;
  // Each case with the normalised arguments it is admitted with.
  const admitted: [...Case, unknown][] = [
    [
      "inspect paths lose ./, empty and inner .. segments",
      "repository.inspect",
      { paths: ["./src//a.ts", "src/x/../a.ts", "new/file.txt"] },
      {},
      { paths: ["src/a.ts", "src/a.ts", "new/file.txt"] },
    ],
    [
      "edit keeps contents and the optional message",
      "repository.edit",
      { files: [{ path: "src/./b.ts", contents: "b" }], message: "Add b" },
      {},
      { files: [{ path: "src/b.ts", contents: "b" }], message: "Add b" },
    ],
    [
      "tests.run is admitted when a test command is configured",
      "tests.run",
      {},
      {},
      {},
    ],
    [
      "slice.complete is admitted when the tests validate the latest revision",
      "slice.complete",
      { summary: "Fixed" },
      { latestValidated: true },
      { summary: "Fixed" },
    ],
    [
      "slice.complete is admitted when no test command is configured",
      "slice.complete",
      { summary: "Done" },
      { testConfigured: false },
      { summary: "Done" },
    ],
  ];
  for (const [name, action, args, extra, normalised] of admitted) {
    await t.step(name, () => {
      assert.deepEqual(commission(action, args, options(workspace, extra)), {
        ok: true,
        action,
        args: normalised,
      });
    });
  }
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

Deno.test("commission() refuses with stable codes", async (t) => {
  await using ws = await commissionWorkspace();
  const { workspace, outside } = ws;
  // Refusals that need nothing but the action, with the reason's wording where it matters.
  const refused: [...Case, string, RegExp | undefined][] = [
    [
      "unknown_action for an action the slice does not offer",
      "shell.exec",
      { command: "rm -rf /" },
      {},
      "unknown_action",
      /not an action of the slice/,
    ],
    [
      "duplicate_path for one file named twice in an edit",
      "repository.edit",
      {
        files: [{ path: "src/a.ts", contents: "1" }, {
          path: "./src/a.ts",
          contents: "2",
        }],
      },
      {},
      "duplicate_path",
      undefined,
    ],
    [
      "tests_not_configured for tests.run without a test command",
      "tests.run",
      {},
      { testConfigured: false },
      "tests_not_configured",
      undefined,
    ],
    [
      "tests_not_validated for slice.complete before the tests validate the latest revision",
      "slice.complete",
      { summary: "Done" },
      {},
      "tests_not_validated",
      /[^.]$/, // no trailing period
    ],
  ];
  for (const [name, action, args, extra, code, reason] of refused) {
    await t.step(name, () => {
      const result = commission(action, args, options(workspace, extra));
      assert.equal(codeOf(result), code);
      if (reason !== undefined) {
        assert.match(result.ok ? "" : result.reason, reason);
      }
    });
  }
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
      const escapes = [
        [inspect, "out/secret.txt"],
        [inspect, "passwd"],
        [edit, "out/new.txt"],
        [edit, "out/deeper/new.txt"],
        [inspect, "dangling"],
      ] as const;
      for (const [action, path] of escapes) {
        assert.equal(action(workspace, path), "symlink_escape", path);
      }
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
