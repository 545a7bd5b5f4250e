/**
 * Protected paths: workspace files no edit may change and every confined
 * test sees read-only, so a model cannot rewrite a test to pass.
 *
 * @module
 */

/** How {@linkcode ProtectedPaths.forTest} picks the protected paths. */
export interface ProtectedPathsOptions {
  /** Extra globs (`--protect GLOB`): `*`, `?` within a segment, `**` across. */
  readonly globs?: readonly string[];
  /** Protect the files the test command names (default `true`). */
  readonly defaults?: boolean;
}

/**
 * The files of the workspace that edits may not change.
 *
 * By default these are the files the test command names (`check.mjs` in
 * `node check.mjs`, `./run.sh` as the program), and the task file of a task
 * runner (`deno.json`/`deno.jsonc` for `deno task`, `package.json` for
 * `npm`, `pnpm`, `yarn` and `bun`, the makefile for `make`), plus the
 * globs given.
 *
 * @example
 * ```ts
 * import { ProtectedPaths } from "./protected_paths.ts";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${workspace}/check.mjs`, "process.exit(1)\n");
 * const guard = ProtectedPaths.forTest(["node", "check.mjs"], workspace, { globs: ["tests/**"] });
 * assert.equal(guard.matches("check.mjs"), true);
 * assert.equal(guard.matches("tests/a/b.test.mjs"), true);
 * assert.equal(guard.matches("src/add.mjs"), false);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export class ProtectedPaths {
  readonly #patterns: readonly string[];
  readonly #regexps: readonly RegExp[];

  private constructor(patterns: readonly string[]) {
    this.#patterns = [...new Set(patterns)];
    this.#regexps = this.#patterns.map(globToRegExp);
  }

  /**
   * The protected paths of a run.
   *
   * @param command The test command, program first, or `undefined`.
   * @param workspace The workspace (the named files must exist in it).
   * @param options Extra globs, and whether the defaults apply.
   * @returns The protected paths.
   *
   * @example
   * ```ts
   * import { ProtectedPaths } from "./protected_paths.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * const open = ProtectedPaths.forTest(["deno", "task", "test"], workspace, { defaults: false });
   * assert.deepEqual(open.patterns, []);
   * await Deno.remove(workspace);
   * ```
   */
  static forTest(
    command: readonly string[] | undefined,
    workspace: string,
    options: ProtectedPathsOptions = {},
  ): ProtectedPaths {
    const patterns: string[] = [];
    if (command !== undefined && options.defaults !== false) {
      patterns.push(...namedFiles(command, workspace));
    }
    for (const glob of options.globs ?? []) {
      const normal = normalizeRelative(glob);
      if (normal === null) {
        throw new TypeError(
          `Cannot protect ${
            JSON.stringify(glob)
          }: a protected path is relative to the workspace and stays inside it`,
        );
      }
      patterns.push(normal);
    }
    return new ProtectedPaths(patterns);
  }

  /** The normalised patterns, literal paths and globs. */
  get patterns(): readonly string[] {
    return this.#patterns;
  }

  /**
   * Whether a normalised workspace-relative path, or a directory above
   * it, is protected.
   *
   * @param path A path like `src/a.ts` (no `./`, no `..`).
   * @returns `true` when a pattern matches it.
   *
   * @example
   * ```ts
   * import { ProtectedPaths } from "./protected_paths.ts";
   * import assert from "node:assert/strict";
   * const guard = ProtectedPaths.forTest(undefined, ".", { globs: ["*.lock"] });
   * assert.equal(guard.matches("deno.lock"), true);
   * assert.equal(guard.matches("sub/deno.lock"), false);
   * ```
   */
  matches(path: string): boolean {
    // A protected directory protects everything below it.
    const parts = path.split("/");
    for (let end = parts.length; end > 0; end--) {
      const prefix = parts.slice(0, end).join("/");
      if (this.#regexps.some((re) => re.test(prefix))) return true;
    }
    return false;
  }

  /**
   * The existing regular files of the workspace that are protected (not
   * following symlinks; `.git` aside), as workspace-relative paths. Only
   * what a pattern can match is read: a literal path is one `lstat` per
   * segment (a directory, all of it), a glob the directory its literal
   * segments name; a glob that starts with a wildcard walks the tree.
   *
   * @param workspace The workspace's real path.
   * @returns Sorted relative paths.
   *
   * @example
   * ```ts
   * import { ProtectedPaths } from "./protected_paths.ts";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * await Deno.writeTextFile(`${workspace}/check.mjs`, "");
   * const guard = ProtectedPaths.forTest(["node", "check.mjs"], workspace);
   * assert.deepEqual(await guard.existingFiles(workspace), ["check.mjs"]);
   * await Deno.remove(workspace, { recursive: true });
   * ```
   */
  async existingFiles(workspace: string): Promise<string[]> {
    const found = new Set<string>();
    const walk = async (dir: string, prefix: string): Promise<void> => {
      for await (const entry of Deno.readDir(dir)) {
        if (prefix === "" && entry.name === ".git") continue;
        const rel = prefix + entry.name;
        if (entry.isDirectory && !entry.isSymlink) {
          await walk(`${dir}/${entry.name}`, `${rel}/`);
        } else if (entry.isFile && this.matches(rel)) {
          found.add(rel);
        }
      }
    };
    for (const root of walkRoots(this.#patterns)) {
      if (root.length === 0) {
        await walk(workspace, "");
        continue;
      }
      if (root[0] === ".git") continue;
      // Each segment must be what the walk would descend into or find.
      let full = workspace;
      let info: Deno.FileInfo | null = null;
      for (const segment of root) {
        if (info !== null && !info.isDirectory) {
          info = null;
          break;
        }
        full += `/${segment}`;
        info = await lstatOrNull(full);
        if (info === null) break;
      }
      if (info === null) continue;
      const rel = root.join("/");
      if (info.isDirectory) await walk(full, `${rel}/`);
      else if (info.isFile && this.matches(rel)) found.add(rel);
    }
    return [...found].sort();
  }
}

/**
 * The directories (as segments) that hold every path the patterns can
 * match: each pattern's segments before its first wildcard, unescaped,
 * without those below another. `[]` is the whole workspace.
 */
function walkRoots(patterns: readonly string[]): string[][] {
  const roots: string[][] = [];
  for (const pattern of patterns) {
    const root: string[] = [];
    for (const segment of pattern.split("/")) {
      if (/(^|[^\\])(\\\\)*[*?]/.test(segment)) break;
      root.push(segment.replace(/\\(.)/g, "$1"));
    }
    roots.push(root);
  }
  roots.sort((a, b) => a.length - b.length);
  const kept: string[][] = [];
  for (const root of roots) {
    const under = kept.some((other) =>
      other.every((segment, i) => root[i] === segment)
    );
    if (!under) kept.push(root);
  }
  return kept;
}

async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    if (error instanceof Deno.errors.NotADirectory) return null;
    throw error;
  }
}

const TASK_FILES: Readonly<Record<string, readonly string[]>> = {
  npm: ["package.json"],
  pnpm: ["package.json"],
  yarn: ["package.json"],
  bun: ["package.json"],
  make: ["Makefile", "makefile", "GNUmakefile"],
};

function namedFiles(command: readonly string[], workspace: string): string[] {
  const [program = "", ...args] = command;
  const base = program.split("/").at(-1) ?? program;
  const names: string[] = [];
  if (program.includes("/") && !program.startsWith("/")) names.push(program);
  for (const arg of args) {
    if (arg.startsWith("-") || arg.startsWith("/")) continue;
    names.push(arg);
  }
  if (base === "deno" && args[0] === "task") {
    names.push("deno.json", "deno.jsonc", "package.json");
  }
  names.push(...(TASK_FILES[base] ?? []));
  const files: string[] = [];
  for (const name of names) {
    const normal = normalizeRelative(name);
    if (normal === null) continue;
    try {
      const info = Deno.lstatSync(`${workspace}/${normal}`);
      if (info.isFile || info.isSymlink) files.push(escapeGlob(normal));
    } catch {
      // Not a workspace file: an argument of another kind.
    }
  }
  return files;
}

function normalizeRelative(path: string): string | null {
  if (path === "" || path.startsWith("/") || path.includes("\0")) return null;
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.length === 0 ? null : parts.join("/");
}

function escapeGlob(path: string): string {
  return path.replace(/[*?\\[]/g, (c) => `\\${c}`);
}

function globToRegExp(glob: string): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "\\" && i + 1 < glob.length) {
      source += escapeRegExp(glob[++i]!);
    } else if (ch === "*" && glob[i + 1] === "*") {
      i += 1;
      if (glob[i + 1] === "/") {
        i += 1;
        source += "(?:.*/)?";
      } else source += ".*";
    } else if (ch === "*") source += "[^/]*";
    else if (ch === "?") source += "[^/]";
    else source += escapeRegExp(ch);
  }
  return new RegExp(`^${source}$`);
}

function escapeRegExp(ch: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(ch) ? `\\${ch}` : ch;
}
