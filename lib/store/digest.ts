/**
 * SHA-256 digests of stored bytes, as lowercase hex.
 *
 * @module
 */
import { createHash } from "node:crypto";

/**
 * The SHA-256 digest of `bytes` as 64 lowercase hex digits, computed
 * synchronously with `node:crypto`.
 *
 * @param bytes The bytes to hash.
 * @returns The digest in lowercase hex.
 *
 * @example Digest of some content, as a result reference carries it
 * ```ts
 * import { sha256Hex } from "./digest.ts";
 * import assert from "node:assert/strict";
 *
 * const digest = sha256Hex(new TextEncoder().encode("abc"));
 * assert.equal(
 *   digest,
 *   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
 * );
 * ```
 */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The SHA-256 digest of `bytes` as 64 lowercase hex digits, computed with
 * Web Crypto (`crypto.subtle.digest`).
 *
 * @param bytes The bytes to hash.
 * @returns The digest in lowercase hex.
 */
export async function sha256HexAsync(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
