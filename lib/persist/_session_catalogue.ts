/**
 * The result catalogue: how each result is kept (persisted file, inline
 * body or re-read source), or why it is left out.
 *
 * @module
 */
import type { StoredResult } from "../store/result_store.ts";
import { isDigest } from "./_digest.ts";
import { isCleanRelative } from "./_paths.ts";
import type { CatalogueEntry } from "./_schema.ts";
import { declarationOf, type ResultOrigin } from "./_session_records.ts";
import { inlineText } from "./_session_results.ts";
import {
  type PersistenceOverrides,
  persistenceThreshold,
  shouldPersist,
} from "./tool_policy.ts";

/** How one result is kept. */
export type Catalogued =
  | { readonly entry: CatalogueEntry; readonly file?: Uint8Array }
  | { readonly skipped: true };

/**
 * Catalogues one result: skipped when no acknowledged record produced it,
 * its tool is undeclared, or a self-bounding result has no re-readable path.
 *
 * @param result The stored result.
 * @param origin The tool (and path) behind it, if an acknowledged record names it.
 * @param overrides Threshold overrides in force.
 * @param resultsDir Directory of persisted bodies, relative to the root.
 * @throws {TypeError} When a result to persist has a malformed digest.
 */
export function catalogueResult(
  result: StoredResult,
  origin: ResultOrigin | undefined,
  overrides: PersistenceOverrides,
  resultsDir: string,
): Catalogued {
  const declaration = origin === undefined
    ? undefined
    : declarationOf(origin.tool);
  const threshold = declaration === undefined
    ? undefined
    : persistenceThreshold(declaration, overrides);
  if (
    origin === undefined || declaration === undefined ||
    threshold === undefined
  ) return { skipped: true };
  const base = {
    sha256: result.sha256,
    origin: result.origin,
    capture: result.capture,
    utf8_bytes: result.bytes.length,
    tool: origin.tool,
  };
  if (!Number.isFinite(threshold)) {
    // Self-bounding: never written; re-read from its source on load.
    if (origin.path === undefined || !isCleanRelative(origin.path)) {
      return { skipped: true };
    }
    return { entry: { ...base, source: { reread: { path: origin.path } } } };
  }
  if (!isDigest(result.sha256)) {
    throw new TypeError(
      `Cannot persist ${result.id}: its digest is not 64 lowercase hex digits`,
    );
  }
  const text = inlineText(result.bytes, threshold);
  if (
    text === undefined ||
    shouldPersist(declaration, text.length, { owner: true, overrides })
  ) {
    const path = `${resultsDir}/${result.sha256}.txt`;
    return {
      entry: { ...base, source: { persisted: path } },
      file: result.bytes,
    };
  }
  // At or below the threshold: the body stays in the catalogue entry.
  return { entry: { ...base, source: { inline: text } } };
}
