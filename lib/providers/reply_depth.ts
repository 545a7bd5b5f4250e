/**
 * The nesting bound on model-provided values: a reply's arguments (actions
 * and lookups alike) deeper than {@linkcode MAX_REPLY_DEPTH} are refused
 * before anything recursive walks them.
 *
 * @module
 */

/**
 * Arrays and objects nested deeper than this in a reply's arguments are
 * refused (`provider_protocol`, problem `too_deep`): no action or lookup
 * needs more than a handful of levels.
 */
export const MAX_REPLY_DEPTH = 64;

/**
 * Tells whether arrays and objects in `value` nest deeper than `limit`,
 * without recursion (a reply nested 100,000 deep is answered in linear time
 * and constant stack). A scalar has depth 0, `[]` and `{}` depth 1.
 *
 * @param value A parsed JSON value.
 * @param limit The deepest nesting allowed (default {@linkcode MAX_REPLY_DEPTH}).
 * @returns `true` when some container sits deeper than `limit`.
 *
 * @example
 * ```ts
 * import { nestsDeeperThan } from "./reply_depth.ts";
 * import assert from "node:assert/strict";
 * const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000));
 * assert.equal(nestsDeeperThan(deep), true);
 * assert.equal(nestsDeeperThan({ paths: ["a.ts"] }), false);
 * assert.equal(nestsDeeperThan([[1]], 1), true);
 * ```
 */
export function nestsDeeperThan(
  value: unknown,
  limit: number = MAX_REPLY_DEPTH,
): boolean {
  const stack: { readonly value: unknown; readonly depth: number }[] = [{
    value,
    depth: 0,
  }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > limit) return true;
    const members = Array.isArray(current) ? current : Object.values(current);
    for (const member of members) {
      if (member !== null && typeof member === "object") {
        stack.push({ value: member, depth: depth + 1 });
      }
    }
  }
  return false;
}
