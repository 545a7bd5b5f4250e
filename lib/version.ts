/**
 * The package version, kept equal to `version` in deno.json.
 *
 * @example
 * ```ts
 * import { VERSION } from "@loom/loom";
 * import assert from "node:assert/strict";
 * assert.equal(typeof VERSION, "string");
 * ```
 */
export const VERSION: string = "0.1.0";
