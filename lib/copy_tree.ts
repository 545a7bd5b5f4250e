/**
 * Copies a directory tree: the demo's and the cost replay's scratch copies of
 * a fixture workspace, and the tests' copies.
 *
 * @module
 */

/**
 * Copies a directory tree: files and directories, symlinks recreated as
 * links (never followed).
 *
 * @param from The directory to copy.
 * @param to Where the copy goes (created, with missing parents).
 *
 * @example
 * ```ts
 * import { copyTree } from "./copy_tree.ts";
 * import assert from "node:assert/strict";
 * const from = await Deno.makeTempDir();
 * await Deno.mkdir(`${from}/sub`);
 * await Deno.writeTextFile(`${from}/sub/a.txt`, "a");
 * await Deno.symlink("sub/a.txt", `${from}/link`);
 * const to = `${await Deno.makeTempDir()}/copy`;
 * await copyTree(from, to);
 * assert.equal(await Deno.readTextFile(`${to}/sub/a.txt`), "a");
 * assert.equal(await Deno.readLink(`${to}/link`), "sub/a.txt");
 * ```
 */
export async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = `${from}/${entry.name}`;
    const target = `${to}/${entry.name}`;
    if (entry.isDirectory) await copyTree(source, target);
    else if (entry.isSymlink) {
      await Deno.symlink(await Deno.readLink(source), target);
    } else await Deno.copyFile(source, target);
  }
}
