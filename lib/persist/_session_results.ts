/**
 * Result bodies of a session: how each new result is catalogued on save
 * (persisted file, inline body or re-read source, or left out), and one
 * verifier per source on load.
 *
 * @module
 */
import { join } from "node:path";
import type { SessionSlot } from "../storage/storage.ts";
import { sha256Hex } from "../store/digest.ts";
import type { StoredResult } from "../store/result_store.ts";
import { RESULTS_DIR } from "./_read_session.ts";
import type { CatalogueEntry } from "./_schema.ts";
import { declarationOf, type ResultOrigin } from "./_session_records.ts";
import { messageOf } from "../errors.ts";
import { isCleanRelative, isWithin } from "./_session_util.ts";
import { SessionError } from "./session_error.ts";
import {
  type PersistenceOverrides,
  persistenceThreshold,
  shouldPersist,
} from "./tool_policy.ts";

/** Where a load verifies results: the session's slot, workspace and journal. */
export interface VerifyContext {
  readonly slot: SessionSlot;
  readonly workspace: string;
  readonly file: string;
}

/**
 * A catalogued result with its body read back and verified, or (for a
 * re-read source that changed or disappeared) why it is unavailable.
 *
 * @throws {SessionError} `session_invalid`, `result_missing` or
 *   `result_corrupted`, naming the file.
 */
export async function verifyResult(
  at: VerifyContext,
  id: string,
  entry: CatalogueEntry,
): Promise<StoredResult | string> {
  const bytes = await verifyBody(at, id, entry);
  if (typeof bytes === "string") return bytes;
  const { sha256, origin, capture } = entry;
  return Object.freeze({ id, bytes, sha256, origin, capture });
}

/** The verified body of a catalogued result (see {@linkcode verifyResult}). */
async function verifyBody(
  at: VerifyContext,
  id: string,
  entry: CatalogueEntry,
): Promise<Uint8Array | string> {
  const source = entry.source;
  if ("persisted" in source) {
    const expected = `${RESULTS_DIR}/${entry.sha256}.txt`;
    if (source.persisted !== expected) {
      throw new SessionError(
        "session_invalid",
        `Session journal ${at.file} is invalid: ${id} must be persisted as ${expected}, names come only from digests`,
        { file: at.file },
      );
    }
    return await readPersisted(at.slot, join(at.slot.where, expected), entry);
  }
  if ("inline" in source) {
    const bytes = encoder.encode(source.inline);
    if (!matches(bytes, entry)) {
      throw new SessionError(
        "result_corrupted",
        `Inline result ${id} in ${at.file} does not match its SHA-256 digest ${entry.sha256}`,
        { file: at.file },
      );
    }
    return bytes;
  }
  if ("recall" in source) {
    throw new SessionError(
      "session_invalid",
      `Session journal ${at.file} is invalid: ${id} has no body to verify (it is recalled by the gateway)`,
      { file: at.file },
    );
  }
  if (!isCleanRelative(source.reread.path)) {
    throw new SessionError(
      "session_invalid",
      `Session journal ${at.file} is invalid: ${id} names ${
        JSON.stringify(source.reread.path)
      }, which is not a clean workspace-relative path`,
      { file: at.file },
    );
  }
  return await reread(at, source.reread.path, entry);
}

function matches(bytes: Uint8Array, entry: CatalogueEntry): boolean {
  return bytes.length === entry.utf8_bytes && sha256Hex(bytes) === entry.sha256;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The result as text when it could be kept inline: its bytes must survive
 * a UTF-8 round trip (otherwise only a file keeps them exact). Returns
 * `undefined` when it must go to a file; skips decoding when the size alone
 * proves the result is above the threshold (a UTF-16 code unit takes at most
 * three UTF-8 bytes).
 */
function inlineText(
  bytes: Uint8Array,
  threshold: number,
): string | undefined {
  if (bytes.length > 3 * threshold) return undefined;
  const text = decoder.decode(bytes);
  const again = encoder.encode(text);
  if (again.length !== bytes.length) return undefined;
  for (let i = 0; i < again.length; i += 1) {
    if (again[i] !== bytes[i]) return undefined;
  }
  return text;
}

/** Reads a persisted result body and verifies it against its digest. */
async function readPersisted(
  slot: SessionSlot,
  file: string,
  entry: CatalogueEntry,
): Promise<Uint8Array> {
  let bytes: Uint8Array | undefined;
  try {
    bytes = await slot.bodies.get(entry.sha256);
  } catch (error) {
    if ((error as { name?: unknown })?.name === "StorageError") throw error;
    throw new SessionError(
      "result_corrupted",
      `Cannot read persisted result ${file}: ${messageOf(error)}`,
      { file, cause: error },
    );
  }
  if (bytes === undefined) {
    throw new SessionError(
      "result_missing",
      `Persisted result ${file} is missing: the session cannot be restored without it`,
      { file },
    );
  }
  if (!matches(bytes, entry)) {
    throw new SessionError(
      "result_corrupted",
      `Persisted result ${file} does not match its SHA-256 digest ${entry.sha256}: it was changed or damaged after it was written`,
      { file },
    );
  }
  return bytes;
}

/** Re-reads a self-bounding result from the workspace and verifies it. */
async function reread(
  at: VerifyContext,
  path: string,
  entry: CatalogueEntry,
): Promise<Uint8Array | string> {
  let bytes: Uint8Array;
  try {
    const real = await Deno.realPath(join(at.workspace, path));
    if (
      !isWithin(real, at.workspace) ||
      at.slot.paths.some((path) => isWithin(real, path))
    ) {
      return `Cannot re-read ${path}: it now resolves outside the workspace`;
    }
    bytes = await Deno.readFile(real);
  } catch (error) {
    return `Cannot re-read ${path}: ${
      error instanceof Deno.errors.NotFound
        ? "it no longer exists"
        : messageOf(error)
    }`;
  }
  // The executor reads text: try the raw bytes, then their decoded form.
  for (const candidate of [bytes, encoder.encode(decoder.decode(bytes))]) {
    if (matches(candidate, entry)) return candidate;
  }
  return `${path} changed since it was inspected: its digest no longer matches ${entry.sha256}`;
}

/**
 * Catalogues one result produced by an acknowledged record: `undefined`
 * (left out) when its tool is undeclared or a self-bounding result has no
 * re-readable path. A `persisted` entry's bytes go to a file.
 *
 * @throws {TypeError} When a result to persist has a malformed digest.
 */
export function catalogueResult(
  result: StoredResult,
  origin: ResultOrigin,
  overrides: PersistenceOverrides,
): CatalogueEntry | undefined {
  const declaration = declarationOf(origin.tool);
  if (declaration === undefined) return undefined;
  const threshold = persistenceThreshold(declaration, overrides);
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
      return undefined;
    }
    return { ...base, source: { reread: { path: origin.path } } };
  }
  if (!/^[0-9a-f]{64}$/.test(result.sha256)) {
    throw new TypeError(
      `Cannot persist ${result.id}: its digest is not 64 lowercase hex digits`,
    );
  }
  const text = inlineText(result.bytes, threshold);
  if (
    text === undefined ||
    shouldPersist(declaration, text.length, { owner: true, overrides })
  ) {
    return {
      ...base,
      source: { persisted: `${RESULTS_DIR}/${result.sha256}.txt` },
    };
  }
  // At or below the threshold: the body stays in the catalogue entry.
  return { ...base, source: { inline: text } };
}
