/**
 * What a store shared with other processes does before a tool call is
 * answered from it: a list takes in what the others stored; a call that
 * names results (the `reference` of a read or a search, each reference
 * among the `contents` of a write) loads them, since their bodies may live
 * only in the shared store. Nothing else needs the others' results, so
 * nothing else pays for reading them.
 *
 * @module
 */
import type { ResultStore } from "../store/result_store.ts";

/**
 * Prepares `store` for a call of `tool` (see the module doc); a no-op for
 * a store without a backing.
 *
 * @param store The store the call is answered from.
 * @param tool The tool's name.
 * @param args Its arguments (untrusted).
 * @throws {LoomError} What the store's backing throws: the store cannot be
 *   reached, a body does not match its digest.
 *
 * @example
 * ```ts
 * import { takeInFor } from "./referenced_results.ts";
 * import { ResultStore } from "../store/result_store.ts";
 * await takeInFor(new ResultStore(), "list_results", {});
 * ```
 */
export async function takeInFor(
  store: Pick<ResultStore, "refresh" | "load">,
  tool: string,
  args: unknown,
): Promise<void> {
  if (tool === "list_results") {
    await store.refresh();
    return;
  }
  for (const id of referencedResults(args)) await store.load(id);
}

/**
 * The result ids a call's arguments reference: `reference.result`, and the
 * `result` of each object among `contents`. The arguments are untrusted:
 * anything else is ignored, and at most 256 ids are answered.
 *
 * @param args A tool call's arguments.
 * @returns The ids, each once.
 *
 * @example
 * ```ts
 * import { referencedResults } from "./referenced_results.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   referencedResults({ reference: { result: "result-3", sha256: "…" } }),
 *   ["result-3"],
 * );
 * assert.deepEqual(
 *   referencedResults({ path: "a", contents: ["x", { result: "result-1" }, { result: "result-1" }] }),
 *   ["result-1"],
 * );
 * assert.deepEqual(referencedResults("nonsense"), []);
 * ```
 */
export function referencedResults(args: unknown): string[] {
  const ids = new Set<string>();
  const take = (value: unknown) => {
    const id = (value as { result?: unknown } | null)?.result;
    if (typeof id === "string" && id.length <= 64) ids.add(id);
  };
  if (typeof args !== "object" || args === null) return [];
  const { reference, contents } = args as Record<string, unknown>;
  take(reference);
  if (Array.isArray(contents)) {
    for (const item of contents.slice(0, 256)) {
      if (typeof item === "object") take(item);
    }
  }
  return [...ids];
}
