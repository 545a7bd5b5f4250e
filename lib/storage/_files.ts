/** File helpers of the folder back-end: atomic writes and full writes. */
import { dirname, join } from "node:path";

/**
 * Writes a file atomically: a temp file in the same directory, flushed,
 * then renamed over the target. A crash leaves either the old file or the
 * new one, never a mix; a leftover temp file starts with `.tmp-`.
 */
export async function writeAtomic(
  path: string,
  bytes: Uint8Array,
): Promise<void> {
  const temp = join(dirname(path), `.tmp-${crypto.randomUUID()}`);
  try {
    {
      using file = await Deno.open(temp, {
        write: true,
        createNew: true,
        mode: 0o600,
      });
      await writeAll(file, bytes);
      await file.sync();
    }
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

/** Writes all of `bytes` to `file`. */
export async function writeAll(
  file: Deno.FsFile,
  bytes: Uint8Array,
): Promise<void> {
  for (let offset = 0; offset < bytes.length;) {
    offset += await file.write(bytes.subarray(offset));
  }
}

/** Whether a file name is a temp file left by {@linkcode writeAtomic}. */
export function isTempName(name: string): boolean {
  return name.startsWith(".tmp-");
}

/** Whether a path exists (symlinks not followed). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
