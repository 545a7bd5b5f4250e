/**
 * The lease of a session folder: `DIR/lock`, created with `createNew`,
 * holding the owner's pid, the time its process started, a holder token
 * and when the lease expires unless renewed. A lease is stale when it
 * expired, or when its process no longer exists (signal 0 finds no such
 * pid); a stale lease is taken over. A pid reused by another process after
 * a crash looks live until the lease expires, and so does any pid when the
 * process may not signal (no `--allow-run`): the error then says which file
 * to remove. Locks of earlier releases (pid and start time only) never
 * expire and go stale only with their process.
 *
 * @module
 */
import { join } from "node:path";
import type { Lease, LeaseOptions } from "./storage.ts";
import { StorageError } from "./storage_error.ts";
import { leaseTtlMs, processGone, renewing } from "./_lease.ts";

/** Name of the lock file inside a session folder. */
export const LOCK_FILE = "lock";

/** What a lock file holds. */
interface LockOwner {
  readonly pid: number;
  /** When the owning process started (ISO 8601). */
  readonly started: string;
  /** The holder's token (absent in locks of earlier releases). */
  readonly holder?: string;
  /** When the lease expires (ISO 8601; absent in earlier releases' locks). */
  readonly expires?: string;
}

/**
 * Takes the lease of a session folder.
 *
 * @throws {StorageError} `lease_held` when a live holder has it.
 */
export async function acquireFileLease(
  root: string,
  options: LeaseOptions = {},
): Promise<Lease> {
  const file = join(root, LOCK_FILE);
  const ttlMs = leaseTtlMs(options);
  const holder = `pid ${Deno.pid} ${crypto.randomUUID()}`;
  const started = new Date(performance.timeOrigin).toISOString();
  const textUntil = (expires: number) =>
    `${
      JSON.stringify(
        {
          pid: Deno.pid,
          started,
          holder,
          expires: new Date(expires).toISOString(),
        } satisfies LockOwner,
      )
    }\n`;
  let tookOver: string | null = null;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    let expiresAt = Date.now() + ttlMs;
    try {
      await Deno.writeTextFile(file, textUntil(expiresAt), {
        createNew: true,
        mode: 0o600,
      });
      return renewing({
        holder,
        tookOver,
        expiresAt,
        renew: async () => {
          const owner = parseOwner(
            await Deno.readTextFile(file).catch(() => ""),
          );
          if (owner?.holder !== holder) throw lost(root, file);
          expiresAt = Date.now() + ttlMs;
          // Rewritten in place: the file's identity (and a taker's rename) stays.
          await Deno.writeTextFile(file, textUntil(expiresAt));
          return expiresAt;
        },
        release: async () => {
          const owner = parseOwner(
            await Deno.readTextFile(file).catch(() => ""),
          );
          if (owner?.holder === holder) await Deno.remove(file).catch(() => {});
        },
      }, options);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    const held = await Deno.readTextFile(file).catch(() => "");
    const owner = parseOwner(held);
    const why = owner === undefined
      ? "it is not a lock Loom wrote"
      : staleness(owner);
    if (why === null || owner === undefined) {
      throw new StorageError(
        "lease_held",
        owner === undefined
          ? `Session ${root} is locked: ${file} exists but ${why}; remove it once no loom run uses the session`
          : `Session ${root} is locked by process ${owner.pid} (started ${owner.started}), which is still running: wait for it to end; if that process is not a loom run (a reused pid, or a lock copied from elsewhere), remove ${file}`,
        { location: file },
      );
    }
    if (await takeOver(file, held)) {
      tookOver =
        `took over the stale lock of process ${owner.pid} (started ${owner.started}): ${why}`;
    }
  }
  throw new StorageError(
    "lease_held",
    `Session ${root} is locked: another process keeps taking ${file}`,
    { location: file },
  );
}

function lost(root: string, file: string): StorageError {
  return new StorageError(
    "lease_lost",
    `Lost the lease of session ${root}: ${file} no longer names this process (it expired and another process took the session over, or the file was removed); nothing more is written`,
    { location: file },
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

/** Why the owner's lease is stale, or `null` when it may still be live. */
function staleness(owner: LockOwner): string | null {
  if (owner.expires !== undefined) {
    const expires = Date.parse(owner.expires);
    if (Number.isFinite(expires) && expires < Date.now()) {
      return `its lease expired at ${owner.expires}`;
    }
  }
  return processGone(owner.pid) ? "that process no longer exists" : null;
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
