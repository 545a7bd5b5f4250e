/**
 * Result bodies of a session: inline text, and reading and verifying
 * persisted or re-read results on load.
 *
 * @module
 */
import { join } from "node:path";
import { sha256Hex } from "../store/digest.ts";
import { isWithin } from "./_paths.ts";
import type { CatalogueEntry } from "./_schema.ts";
import { messageOf } from "./_session_util.ts";
import { SessionError } from "./session_error.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The result as text when it could be kept inline: its bytes must survive
 * a UTF-8 round trip (otherwise only a file keeps them exact). Returns
 * `undefined` when it must go to a file; skips decoding when the size alone
 * proves the result is above the threshold (a UTF-16 code unit takes at most
 * three UTF-8 bytes).
 */
export function inlineText(
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
export async function readPersisted(
  root: string,
  relative: string,
  entry: CatalogueEntry,
): Promise<Uint8Array> {
  const file = join(root, relative);
  let bytes: Uint8Array;
  try {
    const info = await Deno.lstat(file);
    if (!info.isFile) {
      throw new SessionError(
        "result_corrupted",
        `Persisted result ${file} is not a regular file`,
        { file },
      );
    }
    bytes = await Deno.readFile(file);
  } catch (error) {
    if (error instanceof SessionError) throw error;
    if (error instanceof Deno.errors.NotFound) {
      throw new SessionError(
        "result_missing",
        `Persisted result ${file} is missing: the session cannot be restored without it`,
        { file, cause: error },
      );
    }
    throw new SessionError(
      "result_corrupted",
      `Cannot read persisted result ${file}: ${messageOf(error)}`,
      { file, cause: error },
    );
  }
  if (bytes.length !== entry.utf8_bytes || sha256Hex(bytes) !== entry.sha256) {
    throw new SessionError(
      "result_corrupted",
      `Persisted result ${file} does not match its SHA-256 digest ${entry.sha256}: it was changed or damaged after it was written`,
      { file },
    );
  }
  return bytes;
}

/** Re-reads a self-bounding result from the workspace and verifies it. */
export async function rereadSource(
  workspace: string,
  root: string,
  path: string,
  entry: CatalogueEntry,
): Promise<{ bytes?: Uint8Array; detail: string }> {
  const full = join(workspace, path);
  let bytes: Uint8Array;
  try {
    const real = await Deno.realPath(full);
    if (!isWithin(real, workspace) || isWithin(real, root)) {
      return {
        detail: `Cannot re-read ${path}: it now resolves outside the workspace`,
      };
    }
    bytes = await Deno.readFile(real);
  } catch (error) {
    return {
      detail: `Cannot re-read ${path}: ${
        error instanceof Deno.errors.NotFound
          ? "it no longer exists"
          : messageOf(error)
      }`,
    };
  }
  // The executor reads text: try the raw bytes, then their decoded form.
  for (const candidate of [bytes, encoder.encode(decoder.decode(bytes))]) {
    if (
      candidate.length === entry.utf8_bytes &&
      sha256Hex(candidate) === entry.sha256
    ) {
      return { bytes: candidate, detail: "" };
    }
  }
  return {
    detail:
      `${path} changed since it was inspected: its digest no longer matches ${entry.sha256}`,
  };
}
