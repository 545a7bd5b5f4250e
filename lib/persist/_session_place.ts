/**
 * Where a session lives: without a store, the folder the caller named
 * (what `--session DIR` has always meant); with one, the session of that
 * name in it. And its lease, whose refusal reads as `session_locked`.
 *
 * @module
 */
import { folderSession } from "../storage/file_storage.ts";
import type {
  Lease,
  LeaseOptions,
  SessionSlot,
  Storage,
} from "../storage/storage.ts";
import {
  openStorage,
  type OpenStorageOptions,
} from "../storage/open_storage.ts";
import { StorageError } from "../storage/storage_error.ts";
import { realish } from "./_session_util.ts";
import { SessionError } from "./session_error.ts";

/** A session's slot, the local paths it must keep clear, and its store. */
export interface SessionPlace {
  readonly slot: SessionSlot;
  /** Local paths of the session (real where they exist). */
  readonly forbidden: readonly string[];
  /** The store opened for this session (close it with the session). */
  readonly owned: Storage | undefined;
}

/**
 * The session `root` names: a folder, or with `store` a session name in
 * that store (a URL is opened here, with `options`, and owned by the
 * caller).
 *
 * @throws {StorageError} When the store cannot be opened or the name is invalid.
 */
export async function placeSession(
  root: string,
  store: string | Storage | undefined,
  options: OpenStorageOptions = {},
): Promise<SessionPlace> {
  if (store === undefined) {
    const given = realish(root);
    const slot = folderSession(given);
    return { slot, forbidden: [given], owned: undefined };
  }
  const storage = typeof store === "string"
    ? await openStorage(store, options)
    : store;
  const owned = typeof store === "string" ? storage : undefined;
  try {
    const slot = storage.session(root);
    return {
      slot,
      forbidden: slot.paths.map((path) => realish(path)),
      owned,
    };
  } catch (error) {
    await owned?.close();
    throw error;
  }
}

/**
 * Takes a session's lease.
 *
 * @throws {SessionError} `session_locked` when another holder has it.
 */
export async function takeLease(
  slot: SessionSlot,
  options?: LeaseOptions,
): Promise<Lease> {
  try {
    return await slot.acquireLease(options);
  } catch (error) {
    if (error instanceof StorageError && error.code === "lease_held") {
      throw new SessionError("session_locked", error.message, {
        ...(error.location === undefined ? {} : { file: error.location }),
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * Opens a session handle at `place`: `open` takes the session's lease
 * through `lease()` when it needs it. When `open` fails, the lease it took
 * is released and a store opened for the session closed: a failed open
 * holds nothing.
 *
 * @param place Where the session lives.
 * @param open Makes the handle.
 * @returns What `open` returns.
 */
export async function openingAt<T>(
  place: SessionPlace,
  open: (lease: () => Promise<Lease>) => Promise<T>,
): Promise<T> {
  let taken: Lease | undefined;
  try {
    return await open(async () => taken = await takeLease(place.slot));
  } catch (error) {
    await taken?.release();
    await place.owned?.close();
    throw error;
  }
}
