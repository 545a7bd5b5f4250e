/**
 * Path checks of the MCP server against its root, before the executor sees a
 * path: the path is normalised to root-relative POSIX form (an absolute path
 * is accepted only when it lies inside the root), every symlink on it is
 * resolved and must stay inside the root, writes into `.git` are refused, and
 * anything that is not a regular file (a FIFO, a socket, a device) is refused
 * before it is opened, so that reading it can never block the server. The
 * executor's scoped worker checks the same boundary again.
 *
 * @module
 */
import { McpToolError } from "./mcp_tool_error.ts";

/** Whether a path is read or written. */
export type PathUse = "read" | "write";

/**
 * The root-relative form of `raw` after the checks above.
 *
 * @param root The root's real path.
 * @param raw The path as the host sent it.
 * @param use Whether it is read or written.
 * @param aliases Other absolute spellings of the root (the path it was
 *   given as, when that leads through a symlink).
 * @returns The normalised root-relative path.
 * @throws {McpToolError} `invalid_path`, `outside_root`, `symlink_escape`,
 *   `git_write`, `not_a_file` or `not_regular_file`.
 */
export async function rootPath(
  root: string,
  raw: string,
  use: PathUse,
  aliases: readonly string[] = [],
): Promise<string> {
  const parts = lexicalParts([root, ...aliases], raw);
  const relative = parts.join("/");
  if (use === "write" && parts.some(isGitName)) {
    throw new McpToolError(
      "git_write",
      `Cannot write ${show(relative)}: writes into .git are refused`,
    );
  }
  const real = await follow(root, parts, relative);
  if (use === "write") {
    const inside = real.slice(root.length + 1).split("/");
    if (inside.some(isGitName)) {
      throw new McpToolError(
        "git_write",
        `Cannot write ${show(relative)}: it leads through a symlink into .git`,
      );
    }
  }
  let info: Deno.FileInfo | null = null;
  try {
    info = await Deno.lstat(real);
  } catch {
    // Missing: reading says not_found (the executor), writing creates it.
  }
  if (info?.isDirectory) {
    throw new McpToolError(
      "not_a_file",
      `Cannot ${use} ${show(relative)}: it is a directory`,
    );
  }
  if (info !== null && !info.isFile) {
    throw new McpToolError(
      "not_regular_file",
      `Cannot ${use} ${
        show(relative)
      }: it is not a regular file (a FIFO, socket or device), which could block or never end`,
    );
  }
  return relative;
}

/** Splits `raw` into root-relative parts, refusing what leaves the root. */
function lexicalParts(roots: readonly string[], raw: string): string[] {
  if (raw === "") throw new McpToolError("invalid_path", "A path is empty");
  if (raw.includes("\0")) {
    throw new McpToolError(
      "invalid_path",
      `The path ${show(raw)} contains NUL`,
    );
  }
  if (raw.includes("\\")) {
    throw new McpToolError(
      "invalid_path",
      `The path ${show(raw)} contains a backslash: use POSIX separators`,
    );
  }
  let rest = raw;
  if (raw.startsWith("/")) {
    const root = roots.find((r) => raw === r || raw.startsWith(`${r}/`));
    if (root === undefined) {
      throw new McpToolError(
        "outside_root",
        `The path ${
          show(raw)
        } lies outside the server's root: give a path relative to the root, or an absolute one inside it`,
      );
    }
    rest = raw.slice(root.length);
  }
  const parts: string[] = [];
  for (const part of rest.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) {
        throw new McpToolError(
          "outside_root",
          `The path ${show(raw)} leaves the server's root through ".."`,
        );
      }
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  if (parts.length === 0) {
    throw new McpToolError(
      "invalid_path",
      `The path ${show(raw)} names the root itself, not a file in it`,
    );
  }
  return parts;
}

/**
 * Walks the existing components and resolves each symlink met: the real
 * path of the deepest existing component joined with the ones not there yet.
 */
async function follow(
  root: string,
  parts: readonly string[],
  relative: string,
): Promise<string> {
  let current = root;
  for (const [index, part] of parts.entries()) {
    const next = `${current}/${part}`;
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(next);
    } catch {
      return [current, ...parts.slice(index)].join("/");
    }
    if (!info.isSymlink) {
      current = next;
      continue;
    }
    const link = show(parts.slice(0, index + 1).join("/"));
    let target: string;
    try {
      target = await Deno.realPath(next);
    } catch {
      throw new McpToolError(
        "symlink_escape",
        `The path ${
          show(relative)
        } leads through the symlink ${link}, which does not resolve`,
      );
    }
    if (target !== root && !target.startsWith(`${root}/`)) {
      throw new McpToolError(
        "symlink_escape",
        `The path ${
          show(relative)
        } leads through the symlink ${link} to outside the server's root`,
      );
    }
    current = target;
  }
  return current;
}

function isGitName(part: string): boolean {
  return part.toLowerCase() === ".git";
}

function show(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}
