/**
 * One of the six ordered sections of a context.
 *
 * @module
 */
import { attachEntry, detachEntry, type Entry } from "./entry.ts";
import { IdPool } from "./id_pool.ts";
import { StringEntry } from "./string_entry.ts";

/** The six sections, in compile order. */
export type SectionName =
  | "foundation"
  | "focus"
  | "topic"
  | "convo"
  | "step"
  | "attention";

/** A section name in lower, upper or capitalised case (`convo`, `CONVO`, `Convo`). */
export type SectionNameInput =
  | SectionName
  | Uppercase<SectionName>
  | Capitalize<SectionName>;

/** Section names in compile order. */
export const SECTION_NAMES: readonly SectionName[] = Object.freeze([
  "foundation",
  "focus",
  "topic",
  "convo",
  "step",
  "attention",
]);

/** Options of {@linkcode Section}. */
export interface SectionOptions {
  /** Pool for entries the section creates from strings, and for re-added released entries. */
  readonly ids?: IdPool;
}

const ARRAYS = new WeakMap<Section, Entry[]>();
let changesOf: (section: Section) => number;
let touch: (section: Section) => void;

/**
 * An ordered list of entries. Adding a string wraps it in a
 * {@linkcode StringEntry}; removing or clearing releases the ids of entries
 * no other section holds.
 *
 * @example
 * ```ts
 * import { Context } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const ctx = new Context("agent");
 * const entry = ctx.convo.add("User asked for a summary.");
 * assert.equal(ctx.convo.entries.length, 1);
 * assert.equal(ctx.convo.remove(entry.id!), true);
 * assert.equal(entry.id, undefined);
 * ```
 */
export class Section {
  /** The section's name. */
  readonly name: SectionName;
  readonly #entries: Entry[] = [];
  readonly #ids: IdPool;
  /** Bumped by every change but an append, so compile caches can extend. */
  #changes = 0;

  static {
    changesOf = (section) => section.#changes;
    touch = (section) => void (section.#changes += 1);
  }

  /**
   * Creates an empty section (contexts create their own six).
   *
   * @param name Which section this is.
   * @param options The id pool for wrapped strings.
   */
  constructor(name: SectionName, options: SectionOptions = {}) {
    this.name = name;
    this.#ids = options.ids ?? IdPool.shared;
    ARRAYS.set(this, this.#entries);
  }

  /** The entries in order (a live read-only view). */
  get entries(): readonly Entry[] {
    return this.#entries;
  }

  /**
   * Appends an entry.
   *
   * @param entry An entry, or text to wrap in a `system` {@linkcode StringEntry}.
   * @returns The entry added.
   * @throws {TypeError} When `entry` is neither an Entry nor a string.
   */
  add(entry: Entry | string): Entry {
    const added = typeof entry === "string"
      ? new StringEntry(entry, { ids: this.#ids })
      : entry;
    attachEntry(added, this.#ids);
    this.#entries.push(added);
    return added;
  }

  /**
   * Removes an entry (by object or by id) and releases its id unless another
   * section still holds it.
   *
   * @param entry The entry object, or its id.
   * @returns `true` when something was removed.
   */
  remove(entry: Entry | string): boolean {
    const index = typeof entry === "string"
      ? this.#entries.findIndex((e) => e.id === entry)
      : this.#entries.indexOf(entry);
    if (index < 0) return false;
    this.#changes += 1;
    const [removed] = this.#entries.splice(index, 1);
    if (removed !== undefined) detachEntry(removed);
    return true;
  }

  /** Removes every entry, releasing their ids. */
  clear(): void {
    if (this.#entries.length === 0) return;
    this.#changes += 1;
    const removed = this.#entries.splice(0, this.#entries.length);
    for (const entry of removed) detachEntry(entry);
  }
}

/**
 * The section's backing array, for the context's own moves and tombstones
 * (counted as a change: the caller may edit it).
 */
export function sectionEntries(section: Section): Entry[] {
  const entries = ARRAYS.get(section);
  if (entries === undefined) throw new TypeError("Not a section");
  touch(section);
  return entries;
}

/**
 * How many times the section changed other than by appending: equal counts
 * mean the entries seen before are still there, in order.
 */
export function sectionChanges(section: Section): number {
  return changesOf(section);
}
