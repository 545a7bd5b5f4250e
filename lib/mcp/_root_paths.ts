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
import { resolveInRoot } from "../root_path.ts";
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
export function rootPath(
  root: string,
  raw: string,
  use: PathUse,
  aliases: readonly string[] = [],
): string {
  const path = resolveInRoot(
    root,
    withinRoot([root, ...aliases], raw),
    use === "write",
    {
      place: "the server's root",
      show,
    },
  );
  if (!path.ok) {
    throw new McpToolError(
      path.problem === "dot_dot_escape" ? "outside_root" : path.problem,
      path.message,
    );
  }
  const relative = path.relative;
  let info: Deno.FileInfo | null = null;
  try {
    info = Deno.lstatSync(path.real);
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

/**
 * `raw` relative to the root: an absolute path only when it lies inside the
 * root (as one of its spellings).
 */
function withinRoot(roots: readonly string[], raw: string): string {
  if (raw === "") throw new McpToolError("invalid_path", "A path is empty");
  if (!raw.startsWith("/")) return raw;
  const root = roots.find((r) => raw === r || raw.startsWith(`${r}/`));
  if (root === undefined) {
    throw new McpToolError(
      "outside_root",
      `The path ${
        show(raw)
      } lies outside the server's root: give a path relative to the root, or an absolute one inside it`,
    );
  }
  return raw.slice(root.length);
}

function show(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}
