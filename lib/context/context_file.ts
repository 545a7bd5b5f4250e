/**
 * Declarative context files (YAML or JSON) for `loom render` and for
 * programs that keep their prompts in files.
 *
 * @module
 */
import { LoomError, type LoomErrorOptions, messageOf } from "../errors.ts";
import { dirname, join, resolve } from "node:path";
import { fsReason } from "../fs_reason.ts";
import { parseYaml } from "./_yaml.ts";
import { Context } from "./context.ts";
import type { Entry, Role } from "./entry.ts";
import { FileEntry } from "./file_entry.ts";
import type { IdPool } from "./id_pool.ts";
import { ImageEntry, type ImageMediaType } from "./image_entry.ts";
import { SECTION_NAMES, type SectionName } from "./section.ts";
import { StringEntry } from "./string_entry.ts";
import { isPlainObject } from "../plain_object.ts";

/**
 * A context file that cannot be loaded; names the file and the offending key.
 * Its codes:
 * - `unreadable_context_file`: The file (or a file it names) cannot be read.
 * - `invalid_context_file`: The file is not valid YAML/JSON or has a key or value that is not allowed.
 *
 * @example
 * ```ts
 * import { ContextFileError, loadContextFile } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const path = Deno.makeTempFileSync({ suffix: ".yaml" });
 * Deno.writeTextFileSync(path, "sections:\n  history: []\n");
 * assert.throws(() => loadContextFile(path), (e) => e instanceof ContextFileError && e.key === "sections.history");
 * ```
 */
export class ContextFileError
  extends LoomError.SyntaxError<"ContextFileError", {
    /** The file at fault. */
    readonly file: string;
    /** The offending key path (`sections.foundation[2].role`), or `""` for the whole file. */
    readonly key: string;
    /** Why, in a few words (the message without the file and key). */
    readonly reason: string;
  }> {}

function fileError(
  code: ContextFileError["code"],
  file: string,
  key: string,
  reason: string,
  options: LoomErrorOptions = {},
): ContextFileError {
  return new ContextFileError(
    code,
    key === ""
      ? `Cannot load context file ${file}: ${reason}`
      : `Cannot load context file ${file} at ${key}: ${reason}`,
    { ...options, file, key, reason },
  );
}

/** Options of {@linkcode loadContextFile}. */
export interface LoadContextFileOptions {
  /** Pool for the contexts' and entries' ids. */
  readonly ids?: IdPool;
}

const MEDIA_TYPES: readonly string[] = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
];

/**
 * Loads a context file:
 *
 * ```yaml
 * name: agent                 # optional; defaults to the file name
 * include: [shared.yaml]      # other context files, relative to this one
 * sections:
 *   foundation:
 *     - You are helpful.                       # a system string
 *     - { text: Be brief., name: Style }       # a string with name/role
 *     - { file: SOUL.md }                      # re-read on every compile
 *     - { image: shot.png, name: screenshot }  # type from its bytes
 *     - { data: BASE64, mediaType: image/png } # inline base64
 * ```
 *
 * Paths are relative to the file that names them. An included file is
 * loaded once even when named twice; a cycle of includes is an error.
 *
 * @param path The YAML or JSON file.
 * @param options The id pool.
 * @returns The context, with included files as visitors.
 * @throws {ContextFileError} When a file cannot be read or has a bad key or value; names the file and key.
 *
 * @example
 * ```ts
 * import { loadContextFile } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const path = Deno.makeTempFileSync({ suffix: ".yaml" });
 * Deno.writeTextFileSync(path, "name: demo\nsections:\n  foundation:\n    - Be brief.\n");
 * assert.equal(loadContextFile(path).render(), "> FOUNDATION\nBe brief.");
 * ```
 */
export function loadContextFile(
  path: string,
  options: LoadContextFileOptions = {},
): Context {
  return new Loader(options.ids).load(path, []);
}

class Loader {
  readonly #ids: IdPool | undefined;
  readonly #loaded = new Map<string, Context>();

  constructor(ids: IdPool | undefined) {
    this.#ids = ids;
  }

  load(path: string, stack: readonly string[]): Context {
    const key = resolve(path);
    const cached = this.#loaded.get(key);
    if (cached !== undefined) return cached;
    let text: string;
    try {
      text = Deno.readTextFileSync(path);
    } catch (error) {
      throw fileError(
        "unreadable_context_file",
        path,
        "",
        fsReason(error),
      );
    }
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (error) {
      throw fileError(
        "invalid_context_file",
        path,
        "",
        `not valid YAML or JSON (${
          error instanceof Error ? error.message.split("\n")[0] : String(error)
        })`,
      );
    }
    const bad = (at: string, reason: string): ContextFileError =>
      fileError("invalid_context_file", path, at, reason);
    if (doc === null || doc === undefined) doc = {};
    if (!isPlainObject(doc)) throw bad("", "the top level must be a mapping");
    checkKeys(doc, ["name", "include", "sections"], "", bad);
    const name = doc["name"] ?? baseName(path);
    if (typeof name !== "string") throw bad("name", "must be a string");
    const ctx = new Context(
      name,
      this.#ids === undefined ? {} : { ids: this.#ids },
    );
    const here = dirname(path);
    const include = doc["include"] ?? [];
    if (!Array.isArray(include)) {
      throw bad("include", "must be a list of file paths");
    }
    const chain = [...stack, key];
    for (const [i, item] of include.entries()) {
      if (typeof item !== "string" || item === "") {
        throw bad(`include[${i}]`, "must be a file path");
      }
      const target = join(here, item);
      if (chain.includes(resolve(target))) {
        throw bad(`include[${i}]`, `including ${item} would make a cycle`);
      }
      ctx.include(this.#include(target, chain, path, `include[${i}]`));
    }
    const sections = doc["sections"] ?? {};
    if (!isPlainObject(sections)) {
      throw bad("sections", "must be a mapping of section names to lists");
    }
    for (const [section, list] of Object.entries(sections)) {
      const at = `sections.${section}`;
      if (!(SECTION_NAMES as readonly string[]).includes(section)) {
        throw bad(
          at,
          `unknown section (sections are ${SECTION_NAMES.join(", ")})`,
        );
      }
      if (list === null) continue;
      if (!Array.isArray(list)) throw bad(at, "must be a list of entries");
      for (const [i, item] of list.entries()) {
        ctx[section as SectionName].add(
          this.#entry(item, here, `${at}[${i}]`, bad),
        );
      }
    }
    this.#loaded.set(key, ctx);
    return ctx;
  }

  /** Loads an included file; when it cannot be read, the includer and its key are named. */
  #include(
    target: string,
    chain: readonly string[],
    includer: string,
    at: string,
  ): Context {
    try {
      return this.load(target, chain);
    } catch (error) {
      if (
        error instanceof ContextFileError &&
        error.code === "unreadable_context_file" && error.file === target &&
        error.key === ""
      ) {
        throw fileError(
          "unreadable_context_file",
          includer,
          at,
          `cannot read the included file ${target}: ${error.reason}`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  #entry(
    item: unknown,
    here: string,
    at: string,
    bad: (at: string, reason: string) => ContextFileError,
  ): Entry {
    const ids = this.#ids === undefined ? {} : { ids: this.#ids };
    if (typeof item === "string") return new StringEntry(item, ids);
    if (!isPlainObject(item)) {
      throw bad(
        at,
        "an entry must be a string or a mapping with text, file, image or data",
      );
    }
    const name = item["name"];
    if (name !== undefined && typeof name !== "string") {
      throw bad(`${at}.name`, "must be a string");
    }
    const role = item["role"];
    if (
      role !== undefined && role !== "system" && role !== "user" &&
      role !== "assistant"
    ) {
      throw bad(`${at}.role`, "must be system, user or assistant");
    }
    const common = {
      ...ids,
      ...(name === undefined ? {} : { name }),
      ...(role === undefined ? {} : { role: role as Role }),
    };
    if ("text" in item) {
      checkKeys(item, ["text", "name", "role"], at, bad);
      if (typeof item["text"] !== "string") {
        throw bad(`${at}.text`, "must be a string");
      }
      return new StringEntry(item["text"], common);
    }
    if ("file" in item) {
      checkKeys(item, ["file", "name", "role"], at, bad);
      const file = item["file"];
      if (typeof file !== "string" || file === "") {
        throw bad(`${at}.file`, "must be a file path");
      }
      return new FileEntry(join(here, file), common);
    }
    if ("image" in item || "data" in item) {
      checkKeys(item, ["image", "data", "mediaType", "name", "role"], at, bad);
      if (role === "assistant") {
        throw bad(
          `${at}.role`,
          "an image must be system or user (assistant turns cannot carry images)",
        );
      }
      const mediaType = item["mediaType"];
      if (
        mediaType !== undefined &&
        (typeof mediaType !== "string" || !MEDIA_TYPES.includes(mediaType))
      ) {
        throw bad(
          `${at}.mediaType`,
          "must be image/png, image/jpeg, image/gif or image/webp",
        );
      }
      const image = {
        ...common,
        role: role === "user" ? "user" as const : "system" as const,
        ...(mediaType === undefined
          ? {}
          : { mediaType: mediaType as ImageMediaType }),
      };
      if ("image" in item) {
        const file = item["image"];
        if (typeof file !== "string" || file === "") {
          throw bad(`${at}.image`, "must be a file path");
        }
        try {
          return ImageEntry.fromFile(join(here, file), image);
        } catch (error) {
          throw bad(`${at}.image`, lowerFirst(messageOf(error)));
        }
      }
      if (typeof item["data"] !== "string") {
        throw bad(`${at}.data`, "must be base64 text");
      }
      if (image.mediaType === undefined) {
        throw bad(
          `${at}.mediaType`,
          "is needed with data: image/png, image/jpeg, image/gif or image/webp",
        );
      }
      try {
        return new ImageEntry({
          ...image,
          mediaType: image.mediaType,
          data: item["data"],
        });
      } catch (error) {
        throw bad(`${at}.data`, lowerFirst(messageOf(error)));
      }
    }
    throw bad(at, "an entry mapping needs one of text, file, image or data");
  }
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function checkKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  at: string,
  bad: (at: string, reason: string) => ContextFileError,
): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw bad(
        at === "" ? key : `${at}.${key}`,
        `unknown key (allowed: ${allowed.join(", ")})`,
      );
    }
  }
}

function baseName(path: string): string {
  const base = path.split(/[\\/]/).at(-1) ?? path;
  return base.replace(/\.(ya?ml|json)$/i, "");
}
