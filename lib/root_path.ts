/**
 * One path check for every place that takes a hostile, root-relative path:
 * the slice's commission (against its workspace) and the MCP server (against
 * its root). The path is normalised lexically (no NUL, no backslash, no `..`
 * past the root, not the root itself), every symlink on it is resolved and
 * must stay inside the root, and a write may not reach `.git` by name or
 * through a link. Callers add what only they know (absolute paths, protected
 * files) and turn a {@linkcode RootPathProblem} into their own error codes.
 *
 * @module
 */

/** Why a root-relative path was refused; the caller picks the code. */
export type RootPathProblem =
  | "invalid_path"
  | "dot_dot_escape"
  | "git_write"
  | "symlink_escape";

/** The outcome of {@linkcode resolveInRoot}. */
export type RootPath =
  | {
    readonly ok: true;
    /** The lexically normalised root-relative path (`a/b.txt`). */
    readonly relative: string;
    /** Where it really leads: the real path of its deepest existing part
     * joined with the parts not there yet. */
    readonly real: string;
  }
  | {
    readonly ok: false;
    readonly problem: RootPathProblem;
    /** What is wrong and why, for the caller's error. */
    readonly message: string;
  };

/** How {@linkcode resolveInRoot} words its refusals. */
export interface RootPathWords {
  /** The root as the reader knows it: `the workspace`, `the server's root`. */
  readonly place: string;
  /** Shows a hostile path in a message (quoted, clipped). */
  readonly show: (path: string) => string;
}

/**
 * Checks `raw`, a path relative to `root`, and resolves where it leads.
 *
 * @param root The root's real path (no trailing slash).
 * @param raw The path as given; the caller has refused empty and absolute ones.
 * @param write Whether the path is written (then `.git` is refused).
 * @param words How refusals name the root and show paths.
 * @returns The normalised path and its real location, or the problem.
 */
export function resolveInRoot(
  root: string,
  raw: string,
  write: boolean,
  words: RootPathWords,
): RootPath {
  const { place, show } = words;
  if (raw.includes("\0")) {
    return refuse("invalid_path", `The path ${show(raw)} contains NUL`);
  }
  if (raw.includes("\\")) {
    return refuse(
      "invalid_path",
      `The path ${show(raw)} contains a backslash: use POSIX separators`,
    );
  }
  const parts: string[] = [];
  for (const part of raw.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) {
        return refuse(
          "dot_dot_escape",
          `The path ${show(raw)} leaves ${place} through ".."`,
        );
      }
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  if (parts.length === 0) {
    return refuse(
      "invalid_path",
      `The path ${show(raw)} names ${place} itself, not a file in it`,
    );
  }
  const relative = parts.join("/");
  if (write && parts.some(isGitName)) {
    return refuse(
      "git_write",
      `Cannot write ${show(relative)}: writes into .git are refused`,
    );
  }
  const real = follow(root, parts, relative, words);
  if (!real.ok) return real;
  if (write && real.real.slice(root.length + 1).split("/").some(isGitName)) {
    return refuse(
      "git_write",
      `Cannot write ${show(relative)}: it leads through a symlink into .git`,
    );
  }
  return { ok: true, relative, real: real.real };
}

/**
 * Whether `path` is `root` or lies below it.
 *
 * @param path An absolute path.
 * @param root An absolute directory path.
 * @returns Whether `path` is inside `root`.
 */
export function isWithin(path: string, root: string): boolean {
  return path === root ||
    path.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** Walks the existing parts and resolves every symlink met on the way. */
function follow(
  root: string,
  parts: readonly string[],
  relative: string,
  { place, show }: RootPathWords,
): RootPath {
  let current = root;
  for (const [index, part] of parts.entries()) {
    const next = `${current}/${part}`;
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(next);
    } catch {
      // Not there (yet): the rest is created inside `current`.
      const real = [current, ...parts.slice(index)].join("/");
      return { ok: true, relative, real };
    }
    if (!info.isSymlink) {
      current = next;
      continue;
    }
    const link = show(parts.slice(0, index + 1).join("/"));
    let target: string;
    try {
      target = Deno.realPathSync(next);
    } catch {
      return refuse(
        "symlink_escape",
        `The path ${
          show(relative)
        } leads through the symlink ${link}, which does not resolve`,
      );
    }
    if (!isWithin(target, root)) {
      return refuse(
        "symlink_escape",
        `The path ${
          show(relative)
        } leads through the symlink ${link} to outside ${place}`,
      );
    }
    current = target;
  }
  return { ok: true, relative, real: current };
}

function isGitName(part: string): boolean {
  return part.toLowerCase() === ".git";
}

function refuse(problem: RootPathProblem, message: string): RootPath {
  return { ok: false, problem, message };
}
