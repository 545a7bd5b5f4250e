/**
 * The gateway's names for upstream tools (and prompts and resources):
 * `<server>__<tool>`, fitting `^[a-zA-Z0-9_-]{1,64}$` as the Anthropic and
 * OpenAI APIs require. A name that does not fit as it is has its other
 * characters replaced by `_` and, when that changed it or it is too long, a
 * short hash of the original pair appended, so the shortening is
 * deterministic. Names that still collide (upstream names are hostile) are
 * all hashed, and any left colliding after that are dropped.
 *
 * @module
 */
import { sha256Hex } from "../../store/digest.ts";

/** The pattern every listed name fits. */
export const TOOL_NAME_PATTERN: RegExp = /^[a-zA-Z0-9_-]{1,64}$/;

const HASH_CHARS = 10;
const MAX = 64;

/** One upstream name and the gateway's name for it. */
export interface NamedTool {
  /** The upstream server's entry name. */
  readonly server: string;
  /** The upstream's own name for the tool. */
  readonly tool: string;
  /** The name the host sees. */
  readonly name: string;
}

function hashed(server: string, tool: string, plain: string): string {
  const hash = sha256Hex(new TextEncoder().encode(`${server}\u0000${tool}`))
    .slice(0, HASH_CHARS);
  return `${plain.slice(0, MAX - HASH_CHARS - 1)}_${hash}`;
}

function plainName(server: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, "_");
  return `${clean(server)}__${clean(tool)}`;
}

/**
 * The gateway's name for one upstream tool, before collisions are resolved.
 *
 * @param server The server's entry name.
 * @param tool The upstream tool name (untrusted).
 * @returns `<server>__<tool>`, or its shortened, hashed form.
 *
 * @example
 * ```ts
 * import { namespacedName, TOOL_NAME_PATTERN } from "./tool_names.ts";
 * import assert from "node:assert/strict";
 * assert.equal(namespacedName("fs", "read_file"), "fs__read_file");
 * const long = namespacedName("github.com", "x".repeat(80));
 * assert.match(long, TOOL_NAME_PATTERN);
 * assert.equal(long, namespacedName("github.com", "x".repeat(80)));
 * ```
 */
export function namespacedName(server: string, tool: string): string {
  const raw = `${server}__${tool}`;
  const plain = plainName(server, tool);
  if (plain === raw && plain.length <= MAX) return plain;
  return hashed(server, tool, plain);
}

/**
 * Names for every upstream tool: unique, fitting the pattern. Colliding
 * names are all replaced by their hashed forms; any still colliding are
 * left out (and reported).
 *
 * @param tools The upstream tools, in listing order.
 * @returns The named tools, and the ones left out.
 *
 * @example
 * ```ts
 * import { nameTools } from "./tool_names.ts";
 * import assert from "node:assert/strict";
 * const { named } = nameTools([
 *   { server: "a", tool: "b__c" },
 *   { server: "a__b", tool: "c" },
 * ]);
 * assert.equal(new Set(named.map((t) => t.name)).size, 2);
 * ```
 */
export function nameTools(
  tools: readonly { readonly server: string; readonly tool: string }[],
): { readonly named: NamedTool[]; readonly dropped: NamedTool[] } {
  const first = tools.map((t) => namespacedName(t.server, t.tool));
  const counts = new Map<string, number>();
  for (const name of first) counts.set(name, (counts.get(name) ?? 0) + 1);
  const named: NamedTool[] = [];
  const dropped: NamedTool[] = [];
  const taken = new Set<string>();
  for (const [i, t] of tools.entries()) {
    let name = first[i]!;
    if (counts.get(name)! > 1) {
      name = hashed(t.server, t.tool, plainName(t.server, t.tool));
    }
    const entry = { server: t.server, tool: t.tool, name };
    if (taken.has(name) || !TOOL_NAME_PATTERN.test(name)) {
      dropped.push(entry);
      continue;
    }
    taken.add(name);
    named.push(entry);
  }
  return { named, dropped };
}
