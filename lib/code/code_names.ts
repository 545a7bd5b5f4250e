/**
 * The names upstream tools and servers have inside `run_code`:
 * `tools.<server>.<tool>`. One rule for every face that shows them (the
 * `run_code` description, `search_tools` with `detail: "typescript"`, the
 * sandbox's bridge): each run of characters outside `[A-Za-z0-9_$]` becomes
 * `_`, a name starting with a digit gets a leading `_`, and names that still
 * collide get `_2`, `_3`… in the order given.
 *
 * A name that is already an identifier keeps it: it is numbered only when an
 * identical name came first, never because a rewritten one took it
 * (`get-x` and `get_x` become `get_x_2` and `get_x`), so a tool is always
 * callable by its own name when that name is an identifier.
 *
 * @module
 */

/** The longest code name before a collision suffix (upstream names are hostile). */
export const CODE_NAME_MAX = 128;

/** One upstream tool and its names inside `run_code`. */
export interface CodeName {
  /** The server's entry name in the servers file. */
  readonly server: string;
  /** The upstream's own name for the tool. */
  readonly tool: string;
  /** The server's name in code: `tools.<serverName>` (`""` for a tool without server). */
  readonly serverName: string;
  /** The tool's name in code: `tools.<serverName>.<toolName>`. */
  readonly toolName: string;
}

/**
 * The identifier form of one name, before collisions are resolved.
 *
 * @param name A server or tool name (untrusted).
 * @returns A JavaScript identifier of at most {@linkcode CODE_NAME_MAX}
 *   characters.
 *
 * @example
 * ```ts
 * import { codeIdentifier } from "./code_names.ts";
 * import assert from "node:assert/strict";
 * assert.equal(codeIdentifier("get-tiny-image"), "get_tiny_image");
 * assert.equal(codeIdentifier("3d.render"), "_3d_render");
 * assert.equal(codeIdentifier("a -- b"), "a_b");
 * ```
 */
export function codeIdentifier(name: string): string {
  let id = name.replace(/[^A-Za-z0-9_$]+/g, "_");
  if (id === "") id = "_";
  if (/^[0-9]/.test(id)) id = `_${id}`;
  return id.slice(0, CODE_NAME_MAX);
}

/** Unique identifiers for `names`, in their order (see the module doc). */
function uniqueIdentifiers(names: readonly string[]): string[] {
  const ids = names.map(codeIdentifier);
  const out: string[] = new Array(names.length);
  const taken = new Set<string>();
  const assign = (i: number) => {
    const base = ids[i]!;
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
    taken.add(id);
    out[i] = id;
  };
  // The first of each name that is an identifier as it is keeps it; then
  // repeats and rewritten names are numbered around those, in order (a
  // repeated `x` must not take the `x_2` a tool of that name owns).
  const kept = new Set<number>();
  for (const [i, name] of names.entries()) {
    if (ids[i] === name && !taken.has(name)) {
      assign(i);
      kept.add(i);
    }
  }
  for (const i of names.keys()) if (!kept.has(i)) assign(i);
  return out;
}

/**
 * Code names for tools without servers (the AI SDK's `codeTool`): each
 * becomes `tools.<toolName>`, named by the same rule; `serverName` is `""`.
 *
 * @param names The tools' names, in order.
 * @returns One {@linkcode CodeName} per tool, with `server` and
 *   `serverName` empty.
 *
 * @example
 * ```ts
 * import { flatCodeNames } from "./code_names.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(flatCodeNames(["get-rows", "2x"]).map((n) => n.toolName), ["get_rows", "_2x"]);
 * ```
 */
export function flatCodeNames(names: readonly string[]): CodeName[] {
  const ids = uniqueIdentifiers(names);
  return names.map((tool, i) => ({
    server: "",
    tool,
    serverName: "",
    toolName: ids[i]!,
  }));
}

/**
 * Code names for a whole catalogue: servers in the order they first appear
 * (the servers file's order), each server's tools in the order given (the
 * upstream's listing order). Compute them over every tool the gateway knows,
 * then show or call any subset: a tool's name never depends on which other
 * tools a listing or a search answer shows.
 *
 * @param tools Every tool, as `{server, tool}` pairs in order.
 * @returns One {@linkcode CodeName} per tool, in the same order; a pair
 *   listed twice gets two names.
 *
 * @example
 * ```ts
 * import { codeNames } from "./code_names.ts";
 * import assert from "node:assert/strict";
 * const names = codeNames([
 *   { server: "my-fs", tool: "read-file" },
 *   { server: "my-fs", tool: "read_file" },
 *   { server: "my.fs", tool: "list" },
 * ]);
 * assert.deepEqual(names.map((n) => `${n.serverName}.${n.toolName}`), [
 *   "my_fs.read_file_2",
 *   "my_fs.read_file",
 *   "my_fs_2.list",
 * ]);
 * ```
 */
export function codeNames(
  tools: readonly { readonly server: string; readonly tool: string }[],
): CodeName[] {
  const servers = [...new Set(tools.map((t) => t.server))];
  const serverIds = uniqueIdentifiers(servers);
  const serverName = new Map(servers.map((s, i) => [s, serverIds[i]!]));
  const byServer = new Map<string, number[]>();
  for (const [i, t] of tools.entries()) {
    const list = byServer.get(t.server) ?? [];
    list.push(i);
    byServer.set(t.server, list);
  }
  const toolNames: string[] = new Array(tools.length);
  for (const indexes of byServer.values()) {
    const ids = uniqueIdentifiers(indexes.map((i) => tools[i]!.tool));
    for (const [k, i] of indexes.entries()) toolNames[i] = ids[k]!;
  }
  return tools.map((t, i) => ({
    server: t.server,
    tool: t.tool,
    serverName: serverName.get(t.server)!,
    toolName: toolNames[i]!,
  }));
}
