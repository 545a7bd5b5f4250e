// The static module graph of a file, from `deno info --json`: what loads
// before any of its code runs (dynamic imports are left out).
import { deno } from "../_kit.ts";

interface GraphModule {
  specifier: string;
  dependencies?: {
    code?: { specifier: string };
    isDynamic?: boolean;
  }[];
}

/**
 * The modules `root` loads before running any code: static imports only.
 *
 * @param root A file, relative to the repository root.
 * @returns The specifiers, `root` included.
 */
export async function staticClosure(root: string): Promise<string[]> {
  const graph = JSON.parse(await deno("info", "--json", root)) as {
    roots: string[];
    modules: GraphModule[];
    redirects: Record<string, string>;
  };
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...graph.roots];
  while (stack.length > 0) {
    let next = stack.pop()!;
    next = graph.redirects[next] ?? next;
    if (seen.has(next)) continue;
    seen.add(next);
    for (const dep of bySpecifier.get(next)?.dependencies ?? []) {
      if (dep.isDynamic !== true && dep.code !== undefined) {
        stack.push(dep.code.specifier);
      }
    }
  }
  return [...seen];
}
