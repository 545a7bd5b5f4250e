const DIGEST = /^[0-9a-f]{64}$/;

/** Whether a string is 64 lowercase hex digits. */
export function isDigest(value: unknown): value is string {
  return typeof value === "string" && DIGEST.test(value);
}
