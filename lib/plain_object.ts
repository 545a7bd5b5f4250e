/**
 * The one guard for a JSON object: a non-null object that is not an array.
 *
 * @module
 */

/**
 * Whether `value` is a plain object (not `null`, not an array).
 *
 * @param value Anything, typically parsed JSON.
 * @returns Whether its keys can be read as a record.
 *
 * @example
 * ```ts
 * import { isPlainObject } from "./plain_object.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isPlainObject({ a: 1 }), true);
 * assert.equal(isPlainObject([1]), false);
 * assert.equal(isPlainObject(null), false);
 * ```
 */
export function isPlainObject(
  value: unknown,
): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
