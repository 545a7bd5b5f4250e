/**
 * The base of every entry: id, name, role and creation time.
 *
 * @module
 */
import { InvalidEntryError } from "./errors.ts";
import { IdPool } from "./id_pool.ts";
import { internIdentity, releaseIdentity } from "./_identity.ts";

/** Who an entry speaks as. `system` entries build the system prompt. */
export type Role = "system" | "user" | "assistant";

const ROLES: ReadonlySet<string> = new Set(["system", "user", "assistant"]);

/** Options every entry accepts. */
export interface EntryOptions {
  /** A label; rendered as a `# NAME` header above the entry's text. */
  readonly name?: string;
  /** The role; defaults to `system` (a file's frontmatter may set it). */
  readonly role?: Role;
  /** Pool the entry's id comes from; defaults to {@linkcode IdPool.shared}. */
  readonly ids?: IdPool;
}

interface EntryState extends CompileState {
  id: string | undefined;
  pool: IdPool;
  holders: number;
}

/** What the compiler keeps on an entry between compiles. */
export interface CompileState {
  /** The dense number of `identity` while a section holds the entry, else -1. */
  slot: number;
  /** The identity `slot` was taken for. */
  identity: string | undefined;
  /** The compiled text with its `# NAME` header (`""` when blank), for entries whose text cannot change. */
  text: string | undefined;
}

const STATES = new WeakMap<Entry, EntryState>();
let stateOf: (entry: Entry) => EntryState;

/**
 * A piece of context: text, a file or an image. Every entry gets a short id
 * from an {@linkcode IdPool} and a creation time; the id goes back to the
 * pool when the entry is released (removed from its last section, cleared
 * from step, redacted, or `release()`d).
 *
 * @example
 * ```ts
 * import { type Entry, StringEntry } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const entry: Entry = new StringEntry("Be brief.", { name: "style" });
 * assert.equal(entry.id?.length, 3);
 * entry.release();
 * assert.equal(entry.id, undefined);
 * ```
 */
export abstract class Entry {
  /** The entry's label, if any. */
  readonly name: string | undefined;
  /** When the entry was created. */
  readonly createdAt: Date;
  readonly #state: EntryState;

  static {
    stateOf = (entry) => entry.#state;
  }

  /**
   * Sets up id, name and time; subclasses validate their own content.
   *
   * @param options Name, role check and id pool.
   * @throws {InvalidEntryError} When `role` is not `system`, `user` or `assistant`.
   */
  protected constructor(options: EntryOptions) {
    if (options.role !== undefined && !ROLES.has(options.role)) {
      throw new InvalidEntryError(
        "invalid_entry",
        `Cannot create an entry with role '${
          String(options.role)
        }': the role must be system, user or assistant`,
      );
    }
    if (options.name !== undefined && typeof options.name !== "string") {
      throw new InvalidEntryError(
        "invalid_entry",
        "Cannot create an entry: name must be a string",
      );
    }
    this.name = options.name === "" ? undefined : options.name;
    this.createdAt = new Date();
    const pool = options.ids ?? IdPool.shared;
    this.#state = {
      id: pool.next(),
      pool,
      holders: 0,
      slot: -1,
      identity: undefined,
      text: undefined,
    };
    STATES.set(this, this.#state);
  }

  /** The entry's short id; `undefined` once released. */
  get id(): string | undefined {
    return this.#state.id;
  }

  /** The role the entry speaks as. */
  abstract get role(): Role;

  /**
   * The entry's text as `render()` shows it (without the name header).
   *
   * @returns The text; never throws (files that cannot be read give a placeholder).
   */
  abstract compile(): string;

  /**
   * The content identity used to compile duplicates once: the text of a
   * string, the resolved path of a file, the digest of an image's data.
   *
   * @returns A key equal for entries with the same content.
   */
  abstract identity(): string;

  /** Returns the id to its pool; calling it again does nothing. */
  release(): void {
    const state = this.#state;
    if (state.id === undefined) return;
    state.pool.release(state.id);
    state.id = undefined;
  }
}

/** Validates a role value given at runtime (context files, JavaScript callers). */
export function checkRole(role: unknown): Role | undefined {
  if (role === undefined) return undefined;
  if (typeof role === "string" && ROLES.has(role)) return role as Role;
  throw new InvalidEntryError(
    "invalid_entry",
    `Cannot create an entry with role '${
      String(role)
    }': the role must be system, user or assistant`,
  );
}

/** A section takes the entry: counts the holder, gives it an id if released. */
export function attachEntry(entry: Entry, pool: IdPool): void {
  const state = STATES.get(entry);
  if (state === undefined) {
    throw new TypeError("Cannot add this value: it is not an Entry");
  }
  state.holders += 1;
  if (state.holders === 1) takeIdentity(state, entry.identity());
  if (state.id === undefined) {
    state.pool = pool;
    state.id = pool.next();
  }
}

/**
 * A section lets go of the entry; the id is released when no section holds
 * it any more, unless `keepId` (the entry is moving to another section).
 */
export function detachEntry(entry: Entry, keepId = false): void {
  const state = STATES.get(entry);
  if (state === undefined) return;
  state.holders = Math.max(0, state.holders - 1);
  if (state.holders === 0 && state.slot >= 0) {
    releaseIdentity(state.identity!, state.slot);
    state.slot = -1;
    state.identity = undefined;
  }
  if (!keepId && state.holders === 0) entry.release();
}

/**
 * The compiler's state of an entry a section holds, its identity number
 * brought up to date (a subclass whose identity changed gets a new one).
 */
export function compileState(entry: Entry): CompileState {
  const state = stateOf(entry);
  const identity = entry.identity();
  if (identity !== state.identity && state.holders > 0) {
    if (state.slot >= 0) releaseIdentity(state.identity!, state.slot);
    takeIdentity(state, identity);
  }
  return state;
}

function takeIdentity(state: EntryState, identity: string): void {
  state.slot = internIdentity(identity);
  state.identity = identity;
}

/** Tells whether a role string is valid, for frontmatter. */
export function isRole(value: unknown): value is Role {
  return typeof value === "string" && ROLES.has(value);
}
