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
  const dir = dirname(path);
  const temp = join(dir, `.tmp-${crypto.randomUUID()}`);
  try {
    const file = await Deno.open(temp, {
      write: true,
      createNew: true,
      mode: 0o600,
    });
    try {
      let offset = 0;
      while (offset < bytes.length) {
        offset += await file.write(bytes.subarray(offset));
      }
      await file.sync();
    } finally {
      file.close();
    }
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

/** Whether a file name is a temp file left by {@linkcode writeAtomic}. */
export function isTempName(name: string): boolean {
  return name.startsWith(".tmp-");
}
