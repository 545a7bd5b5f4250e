/**
 * The one-writer lock of a session root: `DIR/lock`, created with
 * `createNew` and holding the owner's pid and the time its process started.
 * A lock whose process no longer exists (signal 0 finds no such pid) is
 * stale and taken over. A pid that was reused by another process after a
 * crash looks live, and so does any pid when the process may not signal
 * (no `--allow-run`): the error then says which file to remove.
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { SessionError } from "./session_error.ts";

/** Name of the lock file inside a session root. */
const LOCK_FILE = "lock";

/** What a lock file holds. */
interface LockOwner {
  readonly pid: number;
  /** When the owning process started (ISO 8601). */
  readonly started: string;
}

/** A held lock. */
export interface SessionLock {
  /** The stale lock that was taken over, described, or `null`. */
  readonly tookOver: string | null;
  /** Removes the lock file if it is still this process's. */
  release(): Promise<void>;
}

/**
 * Takes the lock of a session root.
 *
 * @throws {SessionError} `session_locked` when a live process holds it.
 */
export async function acquireLock(root: string): Promise<SessionLock> {
  const file = join(root, LOCK_FILE);
  const mine: LockOwner = {
    pid: Deno.pid,
    started: new Date(performance.timeOrigin).toISOString(),
  };
  const text = `${JSON.stringify(mine)}\n`;
  let tookOver: string | null = null;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      await Deno.writeTextFile(file, text, { createNew: true, mode: 0o600 });
      return {
        tookOver,
        release: async () => {
          const now = await Deno.readTextFile(file).catch(() => "");
          if (now === text) await Deno.remove(file).catch(() => {});
        },
      };
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    const held = await Deno.readTextFile(file).catch(() => "");
    const owner = parseOwner(held);
    const why = owner === undefined
      ? "it is not a lock Loom wrote"
      : staleness(owner);
    if (why === null || owner === undefined) {
      throw new SessionError(
        "session_locked",
        owner === undefined
          ? `Session ${root} is locked: ${file} exists but ${why}; remove it once no loom run uses the session`
          : `Session ${root} is locked by process ${owner.pid} (started ${owner.started}), which is still running: wait for it to end; if that process is not a loom run (a reused pid, or a lock copied from elsewhere), remove ${file}`,
        { file },
      );
    }
    if (await takeOver(file, held)) {
      tookOver =
        `took over the stale lock of process ${owner.pid} (started ${owner.started}): ${why}`;
    }
  }
  throw new SessionError(
    "session_locked",
    `Session ${root} is locked: another process keeps taking ${file}`,
    { file },
  );
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text);
    if (Number.isSafeInteger(value?.pid) && typeof value.started === "string") {
      return value;
    }
  } catch {
    // Not a lock Loom wrote.
  }
  return undefined;
}

/** Why the owner's lock is stale, or `null` when it may still be live. */
function staleness(owner: LockOwner): string | null {
  if (owner.pid === Deno.pid) return null;
  try {
    process.kill(owner.pid, 0);
    return null;
  } catch (error) {
    return (error as { code?: unknown }).code === "ESRCH"
      ? "that process no longer exists"
      : null;
  }
}

/** Removes a stale lock unless another process replaced it meanwhile. */
async function takeOver(file: string, stale: string): Promise<boolean> {
  const aside = `${file}.stale-${crypto.randomUUID()}`;
  try {
    await Deno.rename(file, aside);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
  const moved = await Deno.readTextFile(aside).catch(() => "");
  if (moved !== stale) {
    // Someone else's fresh lock: put it back (never over a newer one).
    await Deno.link(aside, file).catch(() => {});
  }
  await Deno.remove(aside).catch(() => {});
  return moved === stale;
}
