/**
 * The result catalogue of a save: how each result is kept (persisted file,
 * inline body or re-read source) and which results are skipped.
 *
 * @module
 */
import type { ActionRecord } from "../briefing/report.ts";
import type { StoredResult } from "../store/result_store.ts";
import { isDigest } from "./_digest.ts";
import { isCleanRelative } from "./_paths.ts";
import {
  type CatalogueEntry,
  classify,
  declarationOf,
} from "./_session_records.ts";
import { inlineText } from "./_session_results.ts";
import {
  type PersistenceOverrides,
  persistenceThreshold,
  shouldPersist,
  type ToolDeclaration,
} from "./tool_policy.ts";

/** What the catalogue is built from. */
export interface CatalogueInput {
  /** The records of the run, naming the tool behind each result. */
  readonly records: readonly ActionRecord[];
  /** The stored results. */
  readonly results: Iterable<StoredResult>;
  /** Extra tool declarations. */
  readonly tools: Readonly<Record<string, ToolDeclaration>> | undefined;
  /** Threshold overrides in force. */
  readonly overrides: PersistenceOverrides;
  /** Whether the session owns a stable storage root. */
  readonly owner: boolean;
  /** Directory of persisted bodies, relative to the session root. */
  readonly resultsDir: string;
}

/** A built catalogue and the files it needs written. */
export interface Catalogue {
  /** Catalogue entries by result id. */
  readonly catalogue: Record<string, CatalogueEntry>;
  /** Result bodies to write under the session root. */
  readonly files: { path: string; sha256: string; bytes: Uint8Array }[];
  /** Ids of results that are not catalogued. */
  readonly skipped: string[];
  /** Results catalogued as re-read sources. */
  readonly reread: number;
  /** Results catalogued as persisted files. */
  readonly persisted: number;
  /** Results catalogued with an inline body. */
  readonly inline: number;
}

/**
 * Builds the result catalogue of a save.
 *
 * @param input The records, results, declarations and overrides.
 * @returns The catalogue, the files to write and the counts.
 * @throws {TypeError} When a result's digest is malformed.
 */
export function buildCatalogue(input: CatalogueInput): Catalogue {
  const origins = classify(input.records);
  const overrides = input.overrides;
  const catalogue: Record<string, CatalogueEntry> = {};
  const files: { path: string; sha256: string; bytes: Uint8Array }[] = [];
  const skipped: string[] = [];
  let reread = 0;
  let persisted = 0;
  let inline = 0;
  for (const result of input.results) {
    const origin = origins.get(result.id);
    const declaration = origin === undefined
      ? undefined
      : declarationOf(origin.tool, input.tools);
    const threshold = declaration === undefined
      ? undefined
      : persistenceThreshold(declaration, overrides);
    if (
      origin === undefined || declaration === undefined ||
      threshold === undefined
    ) {
      skipped.push(result.id);
      continue;
    }
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
        skipped.push(result.id);
        continue;
      }
      catalogue[result.id] = {
        ...base,
        source: { reread: { path: origin.path } },
      };
      reread += 1;
      continue;
    }
    if (!isDigest(result.sha256)) {
      throw new TypeError(
        `Cannot persist ${result.id}: its digest is not 64 lowercase hex digits`,
      );
    }
    const text = inlineText(result.bytes, threshold);
    if (
      text === undefined ||
      shouldPersist(declaration, text.length, {
        owner: input.owner,
        overrides,
      })
    ) {
      const path = `${input.resultsDir}/${result.sha256}.txt`;
      catalogue[result.id] = { ...base, source: { persisted: path } };
      files.push({ path, sha256: result.sha256, bytes: result.bytes });
      persisted += 1;
    } else {
      // At or below the threshold: the body stays in the catalogue.
      catalogue[result.id] = { ...base, source: { inline: text } };
      inline += 1;
    }
  }
  return { catalogue, files, skipped, reread, persisted, inline };
}
