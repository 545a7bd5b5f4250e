/**
 * Entries backed by a file that is re-read on every compile.
 *
 * @module
 */
import { basename, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Entry, type EntryOptions, isRole, type Role } from "./entry.ts";
import { InvalidEntryError } from "./errors.ts";
import { parseFrontmatter } from "./frontmatter.ts";

/** One read of a {@linkcode FileEntry}'s file. */
export interface FileSnapshot {
  /** The body (frontmatter removed), or a placeholder naming the file. */
  readonly text: string;
  /** The explicit role, else the frontmatter's `role:`, else `system`. */
  readonly role: Role;
  /** The frontmatter mapping; empty when there is none or the file is unavailable. */
  readonly frontmatter: Readonly<Record<string, unknown>>;
  /** `false` when the file could not be read and `text` is a placeholder. */
  readonly available: boolean;
}

/**
 * An entry whose text is a file, read synchronously on every compile so
 * edits show without rebuilding the context. A leading YAML frontmatter
 * block is removed from the text; its `role:` (system, user or assistant)
 * moves the file into its own message unless an explicit role was given.
 * Trailing newlines of the body are dropped (the blank line between entries
 * is the separator). A missing file compiles to `[File removed: PATH]`, an unreadable one to
 * `[File unreadable: PATH (reason)]`; compiling never throws. The name
 * defaults to the file's base name; the identity is the resolved path.
 *
 * @example
 * ```ts
 * import { FileEntry } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const path = Deno.makeTempFileSync({ suffix: ".md" });
 * Deno.writeTextFileSync(path, "---\nrole: assistant\n---\nI remember.");
 * const entry = new FileEntry(path);
 * assert.equal(entry.compile(), "I remember.");
 * assert.equal(entry.role, "assistant");
 * Deno.removeSync(path);
 * assert.equal(entry.compile(), `[File removed: ${path}]`);
 * ```
 */
export class FileEntry extends Entry {
  /** The path as given. */
  readonly path: string;
  /** The absolute path; the entry's identity. */
  readonly resolvedPath: string;
  readonly #role: Role | undefined;
  #identity: string | undefined;

  /**
   * Creates a file entry; the file is not read until compiled.
   *
   * @param path File path (relative to the working directory) or `file:` URL.
   * @param options Name (default: the base name), explicit role, id pool.
   * @throws {InvalidEntryError} When `path` is empty or the role is unknown.
   */
  constructor(path: string | URL, options: EntryOptions = {}) {
    const text = path instanceof URL ? fileURLToPath(path) : path;
    if (typeof text !== "string" || text === "") {
      throw new InvalidEntryError(
        "invalid_entry",
        "Cannot create a file entry: the path must be a non-empty string or file URL",
      );
    }
    super({ ...options, name: options.name ?? basename(text) });
    this.path = text;
    this.resolvedPath = resolve(text);
    this.#role = options.role;
  }

  /** The explicit role, else the file's frontmatter role (read now), else `system`. */
  get role(): Role {
    return this.#role ?? this.read().role;
  }

  /**
   * Reads the file now.
   *
   * @returns The body, resolved role and frontmatter; a placeholder when unreadable.
   */
  read(): FileSnapshot {
    let raw: string;
    try {
      raw = Deno.readTextFileSync(this.resolvedPath);
    } catch (error) {
      const missing = error instanceof Deno.errors.NotFound;
      const reason = error instanceof Error ? error.message : String(error);
      return {
        text: missing
          ? `[File removed: ${this.path}]`
          : `[File unreadable: ${this.path} (${reason})]`,
        role: this.#role ?? "system",
        frontmatter: {},
        available: false,
      };
    }
    const { data, body } = parseFrontmatter(raw);
    const fromFile = isRole(data["role"]) ? data["role"] : undefined;
    return {
      text: body.replace(/(?:\r?\n)+$/, ""),
      role: this.#role ?? fromFile ?? "system",
      frontmatter: data,
      available: true,
    };
  }

  /**
   * Reads the file and returns its body.
   *
   * @returns The body, or a placeholder naming the file when it cannot be read.
   */
  compile(): string {
    return this.read().text;
  }

  /**
   * The identity: the resolved path.
   *
   * @returns `file:` followed by the absolute path.
   */
  identity(): string {
    this.#identity ??= `file:${this.resolvedPath}`;
    return this.#identity;
  }
}
