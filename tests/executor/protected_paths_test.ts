import assert from "node:assert/strict";
import { ProtectedPaths } from "../../lib/executor/protected_paths.ts";
import { tempDir } from "../_kit.ts";

/** Every protected regular file, found by walking the whole tree. */
async function walkedFiles(
  guard: ProtectedPaths,
  workspace: string,
): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      if (prefix === "" && entry.name === ".git") continue;
      const rel = prefix + entry.name;
      if (entry.isDirectory) await walk(`${dir}/${entry.name}`, `${rel}/`);
      else if (entry.isFile && guard.matches(rel)) found.push(rel);
    }
  };
  await walk(workspace, "");
  return found.sort();
}

Deno.test("ProtectedPaths.existingFiles() finds what a walk of the whole tree finds", async (t) => {
  await using dir = await tempDir();
  const ws = dir.path;
  const files = [
    "check.mjs",
    "package.json",
    "a*b.txt",
    "axb.txt",
    "tests/a.test.ts",
    "tests/deep/b.test.ts",
    "tests/deep/notes.md",
    "src/c.test.ts",
    "src/lib/d.test.ts",
    "src/lib/e.ts",
    "docs/guide/f.md",
    ".git/config",
    "vendor/check.mjs",
  ];
  for (const file of files) {
    await Deno.mkdir(`${ws}/${file.split("/").slice(0, -1).join("/")}`, {
      recursive: true,
    });
    await Deno.writeTextFile(`${ws}/${file}`, "x\n");
  }
  // Symlinks are not followed: neither to a directory nor to a file.
  await Deno.symlink(`${ws}/tests`, `${ws}/linked`);
  await Deno.symlink(`${ws}/check.mjs`, `${ws}/linked.mjs`);
  const cases: [string, readonly string[] | undefined, string[]][] = [
    ["the named file alone", ["node", "check.mjs"], []],
    ["a task runner's file", ["npm", "test"], []],
    ["a file name with a glob character", ["node", "a*b.txt"], []],
    ["a directory, all of it", undefined, ["tests"]],
    ["a glob below a literal directory", undefined, ["tests/**/*.test.ts"]],
    ["a glob in a middle segment", undefined, ["src/*/d.test.ts"]],
    ["a glob that starts with a wildcard", undefined, ["**/*.test.ts"]],
    ["an escaped glob character", undefined, ["a\\*b.txt"]],
    ["a path through a file", undefined, ["check.mjs/x"]],
    ["a symlinked directory", undefined, ["linked/**", "linked.mjs"]],
    ["a path into .git", undefined, [".git/config", ".git/**"]],
    ["a missing path", undefined, ["nowhere/**", "gone.txt"]],
    ["overlapping patterns", undefined, ["tests/**", "tests/deep", "*.md"]],
  ];
  for (const [name, command, globs] of cases) {
    await t.step(name, async () => {
      const guard = ProtectedPaths.forTest(command, ws, { globs });
      const expected = await walkedFiles(guard, ws);
      assert.deepEqual(await guard.existingFiles(ws), expected);
    });
  }
  await t.step("the walk's answer is what the patterns say", async () => {
    const guard = ProtectedPaths.forTest(["node", "check.mjs"], ws, {
      globs: ["tests/**/*.test.ts", "a\\*b.txt"],
    });
    assert.deepEqual(await guard.existingFiles(ws), [
      "a*b.txt",
      "check.mjs",
      "tests/a.test.ts",
      "tests/deep/b.test.ts",
    ]);
  });
});
