/**
 * Entries backed by a file that is re-read on every compile.
 *
 * @module
 */
import { basename, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { fsReason } from "../fs_reason.ts";
import { Entry, type EntryOptions, isRole, type Role } from "./entry.ts";
import { InvalidEntryError } from "./errors.ts";
import { parseFrontmatter } from "./frontmatter.ts";

/** Options of {@linkcode FileEntry}. */
export interface FileEntryOptions extends EntryOptions {
  /**
   * Largest file, in bytes, that compiles to its text (default
   * {@linkcode DEFAULT_FILE_ENTRY_MAX_BYTES}, 1 MiB); a larger one compiles to
   * a placeholder naming the file, its size and the limit.
   */
  readonly maxBytes?: number;
  /**
   * Decode invalid UTF-8 with U+FFFD replacement characters instead of
   * compiling to a placeholder (default `false`: strict).
   */
  readonly lossyUtf8?: boolean;
}

/**
 * The default {@linkcode FileEntryOptions.maxBytes}: 1 MiB, about 250,000
 * tokens of English, more than any model's window should spend on one file.
 *
 * @example
 * ```ts
 * import { DEFAULT_FILE_ENTRY_MAX_BYTES } from "./file_entry.ts";
 * import assert from "node:assert/strict";
 * assert.equal(DEFAULT_FILE_ENTRY_MAX_BYTES, 1024 * 1024);
 * ```
 */
export const DEFAULT_FILE_ENTRY_MAX_BYTES: number = 1024 * 1024;

/** One read of a {@linkcode FileEntry}'s file. */
export interface FileSnapshot {
  /** The body (frontmatter removed), or a placeholder naming the file. */
  readonly text: string;
  /** The explicit role, else the frontmatter's `role:`, else `system`. */
  readonly role: Role;
  /** The frontmatter mapping; empty when there is none or the file is unavailable. */
  readonly frontmatter: Readonly<Record<string, unknown>>;
  /** `false` when the file could not be used and `text` is a placeholder. */
  readonly available: boolean;
  /**
   * Why the text is a placeholder: `missing` (no such file), `unreadable`,
   * `too_large` (over `maxBytes`) or `invalid_utf8` (with `lossyUtf8` off);
   * `null` when the file was used.
   */
  readonly problem:
    | "missing"
    | "unreadable"
    | "too_large"
    | "invalid_utf8"
    | null;
}

/** Why a file entry's text is a placeholder. */
type FileProblem = NonNullable<FileSnapshot["problem"]>;

const strict = new TextDecoder("utf-8", { fatal: true });
const lossy = new TextDecoder("utf-8");

/**
 * An entry whose text is a file, read synchronously on every compile so
 * edits show without rebuilding the context. A leading YAML frontmatter
 * block is removed from the text; its `role:` (system, user or assistant)
 * moves the file into its own message unless an explicit role was given.
 * Trailing newlines of the body are dropped (the blank line between entries
 * is the separator). Compiling never throws; a file it cannot use
 * compiles to a placeholder that names it and says why: `[File removed:
 * PATH]`, `[File unreadable: PATH (reason)]`, `[File too large: PATH (N
 * bytes; the limit is M bytes)]` (see `maxBytes`, 1 MiB by default) or
 * `[File not UTF-8: PATH (…)]` (strict decoding unless `lossyUtf8`). The
 * name defaults to the file's base name; the identity is the resolved path.
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
  /** Largest file, in bytes, that compiles to its text. */
  readonly maxBytes: number;
  /** Whether invalid UTF-8 is replaced by U+FFFD rather than refused. */
  readonly lossyUtf8: boolean;
  readonly #role: Role | undefined;
  #identity: string | undefined;

  /**
   * Creates a file entry; the file is not read until compiled.
   *
   * @param path File path (relative to the working directory) or `file:` URL.
   * @param options Name (default: the base name), explicit role, id pool,
   *   size limit and UTF-8 strictness.
   * @throws {InvalidEntryError} When `path` is empty, the role is unknown or
   *   `maxBytes` is not a positive integer.
   */
  constructor(path: string | URL, options: FileEntryOptions = {}) {
    const text = path instanceof URL ? fileURLToPath(path) : path;
    if (typeof text !== "string" || text === "") {
      throw new InvalidEntryError(
        "invalid_entry",
        "Cannot create a file entry: the path must be a non-empty string or file URL",
      );
    }
    const maxBytes = options.maxBytes ?? DEFAULT_FILE_ENTRY_MAX_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
      throw new InvalidEntryError(
        "invalid_entry",
        `Cannot create a file entry with maxBytes ${maxBytes}: it must be a positive integer`,
      );
    }
    super({ ...options, name: options.name ?? basename(text) });
    this.maxBytes = maxBytes;
    this.lossyUtf8 = options.lossyUtf8 === true;
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
      raw = this.#text();
    } catch (error) {
      const [problem, text] = error instanceof Unusable
        ? [error.problem, error.message]
        : error instanceof Deno.errors.NotFound
        ? ["missing" as const, `[File removed: ${this.path}]`]
        : [
          "unreadable" as const,
          `[File unreadable: ${this.path} (${fsReason(error)})]`,
        ];
      return {
        text,
        role: this.#role ?? "system",
        frontmatter: {},
        available: false,
        problem,
      };
    }
    const { data, body } = parseFrontmatter(raw);
    const fromFile = isRole(data["role"]) ? data["role"] : undefined;
    return {
      text: body.replace(/(?:\r?\n)+$/, ""),
      role: this.#role ?? fromFile ?? "system",
      frontmatter: data,
      available: true,
      problem: null,
    };
  }

  /** The file's text; throws {@linkcode Unusable} for a placeholder. */
  #text(): string {
    // The size is checked before reading, so a huge file is never loaded.
    const size = Deno.statSync(this.resolvedPath).size;
    const tooLarge = (bytes: number) =>
      new Unusable(
        "too_large",
        `[File too large: ${this.path} (${bytes} bytes; the limit is ${this.maxBytes} bytes)]`,
      );
    if (size > this.maxBytes) throw tooLarge(size);
    const bytes = Deno.readFileSync(this.resolvedPath);
    if (bytes.length > this.maxBytes) throw tooLarge(bytes.length);
    if (this.lossyUtf8) return lossy.decode(bytes);
    try {
      return strict.decode(bytes);
    } catch {
      throw new Unusable(
        "invalid_utf8",
        `[File not UTF-8: ${this.path} (its bytes are not valid UTF-8 text; it may be binary or in another encoding)]`,
      );
    }
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

/** A file the entry cannot use; the message is the placeholder. */
class Unusable extends Error {
  readonly problem: FileProblem;
  constructor(problem: FileProblem, placeholder: string) {
    super(placeholder);
    this.problem = problem;
  }
}
