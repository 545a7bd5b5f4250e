/**
 * Workspace revision ids: every admitted edit produces a new revision
 * (DESIGN.md "Revisions"), and test results carry the revision they ran on.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** One file as an admitted edit wrote it. */
export interface RevisionFile {
  /** Workspace-relative path, as commissioned. */
  readonly path: string;
  /** The expanded contents written. */
  readonly contents: string;
}

/**
 * The id of the revision an admitted edit produces:
 * `rev-<n>-<first 12 hex of SHA-256>`, where `n` counts admitted edits from 1
 * and the digest runs over the edited files in argument order, each as the
 * decimal UTF-8 byte length of its path, `:`, the path, the decimal UTF-8 byte
 * length of its contents, `:`, and the contents. The length prefixes make the
 * encoding unambiguous whatever bytes paths and contents hold.
 *
 * @param n The ordinal of the admitted edit, 1 for the first.
 * @param files The edited paths and their expanded contents.
 * @returns The revision id.
 * @throws {RangeError} When `n` is not a positive safe integer or no file is given.
 *
 * @example
 * ```ts
 * import { revisionId } from "./revision.ts";
 * import assert from "node:assert/strict";
 * const rev = revisionId(1, [{ path: "a.txt", contents: "hello\n" }]);
 * assert.match(rev, /^rev-1-[0-9a-f]{12}$/);
 * assert.notEqual(rev, revisionId(1, [{ path: "b.txt", contents: "hello\n" }]));
 * ```
 */
export function revisionId(n: number, files: readonly RevisionFile[]): string {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new RangeError(
      `Cannot make revision ${n}: revisions are numbered from 1`,
    );
  }
  if (files.length === 0) {
    throw new RangeError(
      `Cannot make revision ${n}: an edit writes at least one file`,
    );
  }
  const hash = createHash("sha256");
  for (const file of files) {
    const path = encoder.encode(file.path);
    const contents = encoder.encode(file.contents);
    hash.update(`${path.byteLength}:`);
    hash.update(path);
    hash.update(`${contents.byteLength}:`);
    hash.update(contents);
  }
  return `rev-${n}-${hash.digest("hex").slice(0, 12)}`;
}

const encoder = new TextEncoder();
