/**
 * Entries backed by a string.
 *
 * @module
 */
import { Entry, type EntryOptions, type Role } from "./entry.ts";
import { InvalidEntryError } from "./errors.ts";

/**
 * An entry of plain text. Two string entries with the same text compile once
 * per context tree, whatever their names.
 *
 * @example
 * ```ts
 * import { Context, StringEntry } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const ctx = new Context("agent");
 * ctx.foundation.add(new StringEntry("Be brief.", { name: "Style" }));
 * assert.equal(ctx.render(), "> FOUNDATION\n# Style\nBe brief.");
 * ```
 */
export class StringEntry extends Entry {
  /** The text. */
  readonly text: string;
  readonly #role: Role;
  #identity: string | undefined;

  /**
   * Creates a string entry.
   *
   * @param text The text.
   * @param options Name, role (default `system`) and id pool.
   * @throws {InvalidEntryError} When `text` is not a string or the role is unknown.
   */
  constructor(text: string, options: EntryOptions = {}) {
    if (typeof text !== "string") {
      throw new InvalidEntryError(
        "invalid_entry",
        "Cannot create a string entry: text must be a string",
      );
    }
    super(options);
    this.text = text;
    this.#role = options.role ?? "system";
  }

  /** The role given at construction, `system` by default. */
  get role(): Role {
    return this.#role;
  }

  /**
   * The text.
   *
   * @returns The text as given.
   */
  compile(): string {
    return this.text;
  }

  /**
   * The identity: the text itself.
   *
   * @returns `text:` followed by the text.
   */
  identity(): string {
    // Cached: the flat string keeps its hash, so dedup stays O(1) per entry.
    this.#identity ??= `text:${this.text}`;
    return this.#identity;
  }
}
