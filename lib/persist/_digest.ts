import { createHmac } from "node:crypto";

/** Lowercase hex HMAC-SHA-256 of `previous`, a newline and `body`. */
export function chainMac(
  key: Uint8Array,
  previous: string,
  body: string,
): string {
  return createHmac("sha256", key).update(`${previous}\n${body}`).digest(
    "hex",
  );
}

const DIGEST = /^[0-9a-f]{64}$/;

/** Whether a string is 64 lowercase hex digits. */
export function isDigest(value: unknown): value is string {
  return typeof value === "string" && DIGEST.test(value);
}
