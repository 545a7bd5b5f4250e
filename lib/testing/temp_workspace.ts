/**
 * A disposable workspace directory for tests.
 *
 * @module
 */
import { dirname, isAbsolute, join, normalize } from "node:path";

/**
 * Makes a temporary directory holding `files` (path → contents, `/`-separated
 * relative paths; folders are created), removed with everything in it when
 * disposed (`await using`).
 *
 * @param files Relative paths and their text.
 * @returns The directory's real path, and its disposer.
 * @throws {RangeError} When a path is absolute or leaves the directory.
 *
 * @example
 * ```ts
 * import { tempWorkspace } from "@loom/loom/testing";
 * import assert from "node:assert/strict";
 * let kept = "";
 * {
 *   await using workspace = await tempWorkspace({ "src/a.ts": "export const a = 1;\n" });
 *   kept = workspace.path;
 *   assert.equal(await Deno.readTextFile(`${workspace.path}/src/a.ts`), "export const a = 1;\n");
 * }
 * await assert.rejects(Deno.stat(kept), Deno.errors.NotFound);
 * ```
 */
export async function tempWorkspace(
  files: Readonly<Record<string, string>> = {},
): Promise<AsyncDisposable & { readonly path: string }> {
  for (const name of Object.keys(files)) {
    const clean = normalize(name);
    if (isAbsolute(name) || clean === ".." || clean.startsWith("../")) {
      throw new RangeError(
        `Cannot create ${name} in a temporary workspace: the path must be relative and stay inside it`,
      );
    }
  }
  const path = await Deno.realPath(await Deno.makeTempDir());
  for (const [name, text] of Object.entries(files)) {
    const target = join(path, name);
    await Deno.mkdir(dirname(target), { recursive: true });
    await Deno.writeTextFile(target, text);
  }
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }),
  };
}
