/**
 * What every back-end's lease shares: who a holder is (its pid, and the
 * machine it runs on, so a holder on this machine whose process is gone is
 * provably gone), the messages, and the renewal: an unref'd timer renews
 * the lease every third of its ttl while the process lives; a failed
 * renewal marks the lease lost, and {@linkcode Lease.check} then throws
 * before the next write.
 *
 * @module
 */
import process from "node:process";
import type { Lease, LeaseOptions } from "./storage.ts";
import { StorageError } from "./storage_error.ts";
import { messageOf } from "../errors.ts";

/** Default lease ttl: how long an unprovable holder blocks a session. */
export const LEASE_TTL_MS = 60_000;

let seenFrom: string | undefined;

/**
 * This machine, as far as a pid means the same process to both: its
 * `/etc/machine-id` and host name (containers of one image share the
 * first, not the second); `""` where either cannot be read. (The kernel's
 * boot id and pid namespace would be exact, but Deno lets only
 * `--allow-all` read `/proc`.)
 */
function seenFromHere(): string {
  if (seenFrom !== undefined) return seenFrom;
  const read = (path: string) => {
    try {
      return Deno.readTextFileSync(path).trim();
    } catch {
      return "";
    }
  };
  let host = "";
  try {
    host = Deno.hostname();
  } catch {
    host = read("/etc/hostname");
  }
  const machine = read("/etc/machine-id");
  seenFrom =
    /^[0-9a-f]{32}$/.test(machine) && /^[A-Za-z0-9.-]{1,253}$/.test(host)
      ? `${host}/${machine.slice(0, 12)}`
      : "";
  return seenFrom;
}

/**
 * A new holder name for this process: `pid N on HOST/MACHINE TOKEN` (`on
 * ?` where the machine cannot be told).
 *
 * @returns The holder.
 */
export function newHolder(): string {
  return `pid ${Deno.pid} on ${seenFromHere() || "?"} ${crypto.randomUUID()}`;
}

/**
 * Whether the process `pid` is gone: signal 0 finds no such process. A
 * process this one may not signal, or no permission to try, counts as
 * alive (unprovable).
 *
 * @param pid The process id.
 * @returns `true` only when it provably does not exist.
 */
export function processGone(pid: number): boolean {
  if (pid === Deno.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === "ESRCH";
  }
}

/**
 * Why the holder named `holder` (by {@linkcode newHolder}) is provably
 * gone — it ran on this machine and its process no longer exists — or
 * `null` when it may still live.
 *
 * @param holder A holder name.
 * @returns The reason, or `null`.
 */
export function holderGone(holder: string): string | null {
  const match = /^pid (\d+) on (\S+) /.exec(holder);
  const here = seenFromHere();
  if (match === null || here === "" || match[2] !== here) return null;
  return processGone(Number(match[1]))
    ? `its process ${match[1]} no longer exists on this machine`
    : null;
}

/** The `lease_held` error of a live or unprovable holder. */
export function leaseHeld(
  where: string,
  holder: string | undefined,
  until: Date | undefined,
  why = "",
): StorageError {
  return new StorageError(
    "lease_held",
    `Session ${where} is leased by ${holder ?? "another holder"}${
      until === undefined ? "" : ` until ${until.toISOString()}`
    }${why}: wait for it to end or to expire`,
    { location: where },
  );
}

/** A lease row as a database holds it. */
export interface HeldLease {
  /** Its holder's name. */
  readonly holder: string;
  /** When it expires. */
  readonly expiresAt: Date;
  /** Whether that time has passed (by the database's clock where it has one). */
  readonly expired: boolean;
}

/**
 * Whether a new holder may take a lease a database holds as `held`: its
 * `tookOver` text (`null` when nobody held it), or `lease_held` while its
 * holder may live.
 *
 * @param held The row, or `undefined` when there is none.
 * @param where The session, for the error.
 * @param gone Why a holder whose lease has not expired is gone, or `null`.
 * @returns `null`, or `took over the lease of HOLDER: WHY`.
 * @throws {StorageError} `lease_held`.
 */
export function takeOver(
  held: HeldLease | undefined,
  where: string,
  gone: (holder: string) => string | null = holderGone,
): string | null {
  if (held === undefined) return null;
  const why = held.expired
    ? `its lease expired at ${held.expiresAt.toISOString()}`
    : gone(held.holder);
  if (why === null) throw leaseHeld(where, held.holder, held.expiresAt);
  return `took over the lease of ${held.holder}: ${why}`;
}

/** The `lease_lost` error of a holder whose lease another took. */
export function leaseLost(where: string): StorageError {
  return new StorageError(
    "lease_lost",
    `Lost the lease of session ${where}: it expired and another holder took it, or it was removed; nothing more is written`,
    { location: where },
  );
}

/** The lease's time to live in milliseconds, the default applied. */
export function leaseTtlMs(options: LeaseOptions): number {
  return options.ttlMs ?? LEASE_TTL_MS;
}

/** What a back-end provides for one held lease. */
export interface LeaseParts {
  readonly holder: string;
  readonly tookOver: string | null;
  /** When it expires unrenewed (default: its time to live from now). */
  readonly expiresAt?: number;
  /** Extends the lease; returns the new expiry; throws `lease_lost`. */
  renew(): Promise<number>;
  /** Gives the lease up if still held. */
  release(): Promise<void>;
}

/**
 * A lease over a back-end's parts, renewed in the background (every third
 * of its time to live) unless `options.autoRenew` is `false`.
 */
export function renewing(parts: LeaseParts, options: LeaseOptions): Lease {
  const ttlMs = leaseTtlMs(options);
  let expiresAt = parts.expiresAt ?? Date.now() + ttlMs;
  let failure: unknown;
  let released = false;
  let pending: Promise<void> = Promise.resolve();
  const renew = async (): Promise<void> => {
    if (failure !== undefined) throw failure;
    try {
      expiresAt = await parts.renew();
    } catch (error) {
      failure = error instanceof StorageError ? error : new StorageError(
        "lease_lost",
        `Lost the lease ${parts.holder}: renewing it failed: ${
          messageOf(error)
        }`,
        { cause: error },
      );
      throw failure;
    }
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  if (options.autoRenew ?? true) {
    const id = setInterval(() => {
      pending = renew().catch(() => {});
    }, Math.max(10, Math.floor(ttlMs / 3)));
    Deno.unrefTimer(id as unknown as number);
    timer = id;
  }
  return {
    holder: parts.holder,
    tookOver: parts.tookOver,
    get expiresAt() {
      return expiresAt;
    },
    renew,
    check: async () => {
      await pending;
      if (failure !== undefined) throw failure;
      // Past its expiry without a renewal (a paused process): renew now.
      if (Date.now() >= expiresAt - ttlMs / 3) await renew();
    },
    release: async () => {
      if (released) return;
      released = true;
      if (timer !== undefined) clearInterval(timer);
      await pending;
      await parts.release();
    },
  };
}
