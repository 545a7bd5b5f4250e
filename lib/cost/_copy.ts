/** Copies a workspace tree for an offline replay. */

/**
 * Copies a directory tree: files and directories, symlinks recreated as
 * links (never followed).
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
