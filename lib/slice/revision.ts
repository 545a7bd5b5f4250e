/**
 * Workspace revision ids: every admitted edit produces a new revision
 * (DESIGN.md "Revisions"), named after the workspace tree it left, and test
 * results carry the revision whose tree they ran on.
 *
 * @module
 */

/**
 * The id of a revision: `rev-<n>-<first 12 hex of the tree digest>`, where
 * `n` counts admitted edits from 1 and the digest is the executor's survey
 * of the whole workspace tree after the edit (every path, type, executable
 * bit and contents, `.git` aside). Two revisions with the same tree carry
 * the same digest part.
 *
 * @param n The ordinal of the admitted edit, 1 for the first.
 * @param treeDigest The tree's SHA-256, 64 lowercase hex.
 * @returns The revision id.
 * @throws {RangeError} When `n` is not a positive safe integer or the
 *   digest is not 64 lowercase hex.
 *
 * @example
 * ```ts
 * import { revisionId } from "./revision.ts";
 * import assert from "node:assert/strict";
 * const rev = revisionId(1, "3f2a9c0d1e4b".padEnd(64, "0"));
 * assert.equal(rev, "rev-1-3f2a9c0d1e4b");
 * ```
 */
export function revisionId(n: number, treeDigest: string): string {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new RangeError(
      `Cannot make revision ${n}: revisions are numbered from 1`,
    );
  }
  if (!/^[0-9a-f]{64}$/.test(treeDigest)) {
    throw new RangeError(
      `Cannot make revision ${n}: the tree digest must be 64 lowercase hex`,
    );
  }
  return `rev-${n}-${treeDigest.slice(0, 12)}`;
}

/**
 * Whether a revision id names the given tree.
 *
 * @param revision A revision id, or `null` for the unedited workspace.
 * @param treeDigest A tree digest, 64 lowercase hex.
 * @returns `true` when the id's digest part matches the tree.
 *
 * @example
 * ```ts
 * import { revisionNamesTree } from "./revision.ts";
 * import assert from "node:assert/strict";
 * assert.equal(revisionNamesTree("rev-2-abcdefabcdef", "abcdefabcdef".padEnd(64, "1")), true);
 * assert.equal(revisionNamesTree("rev-2-abcdefabcdef", "0".repeat(64)), false);
 * ```
 */
export function revisionNamesTree(
  revision: string,
  treeDigest: string,
): boolean {
  return revision.endsWith(`-${treeDigest.slice(0, 12)}`);
}
