/**
 * The renewal side every back-end's lease shares: an unref'd timer renews
 * it every third of its ttl while the process lives; a failed renewal
 * marks the lease lost, and {@linkcode Lease.check} then throws before the
 * next write.
 *
 * @module
 */
import type { Lease } from "./storage.ts";
import { StorageError } from "./storage_error.ts";

/** What a back-end provides for one held lease. */
export interface LeaseParts {
  readonly holder: string;
  readonly tookOver: string | null;
  readonly expiresAt: number;
  readonly ttlMs: number;
  readonly autoRenew: boolean;
  /** Extends the lease; returns the new expiry; throws `lease_lost`. */
  renew(): Promise<number>;
  /** Gives the lease up if still held. */
  release(): Promise<void>;
}

/** A lease over a back-end's parts, renewed in the background. */
export function renewing(parts: LeaseParts): Lease {
  let expiresAt = parts.expiresAt;
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
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error },
      );
      throw failure;
    }
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  if (parts.autoRenew) {
    const id = setInterval(() => {
      pending = renew().catch(() => {});
    }, Math.max(10, Math.floor(parts.ttlMs / 3)));
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
      if (Date.now() >= expiresAt - parts.ttlMs / 3) await renew();
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
