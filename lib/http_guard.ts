/**
 * What every Loom HTTP listener checks before it answers: the token
 * (compared in constant time, as digests), and whether the `Host` a
 * request was addressed to is the listener's own — a page that reaches a
 * loopback server through a rebound DNS name (DNS rebinding) sends its own
 * name. Shared by `loom mcp --http` and `loom view`.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Whether a host name or address is a loopback one: `localhost`,
 * `127.0.0.0/8`, `::1` (with or without brackets), `::ffff:127.x.y.z`.
 *
 * @param host A host name or IP address.
 * @returns `true` for a loopback host.
 *
 * @example
 * ```ts
 * import { isLoopback } from "./http_guard.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isLoopback("127.0.0.1"), true);
 * assert.equal(isLoopback("[::1]"), true);
 * assert.equal(isLoopback("0.0.0.0"), false);
 * assert.equal(isLoopback("loom.internal"), false);
 * ```
 */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice("::ffff:".length) : h;
  const parts = v4.split(".");
  return parts.length === 4 && parts[0] === "127" &&
    parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255);
}

/**
 * The host part of a `Host` header (`name`, `name:port`, `[v6]:port`).
 *
 * @param header The header's value.
 * @returns The host, without brackets or port.
 *
 * @example
 * ```ts
 * import { hostOf } from "./http_guard.ts";
 * import assert from "node:assert/strict";
 * assert.equal(hostOf("[::1]:8080"), "::1");
 * assert.equal(hostOf("localhost:8080"), "localhost");
 * ```
 */
export function hostOf(header: string): string {
  const v6 = /^\[([^\]]*)\](?::\d+)?$/.exec(header);
  if (v6 !== null) return v6[1]!;
  return header.replace(/:\d+$/, "");
}

/**
 * Whether an `Origin` header names a loopback web origin.
 *
 * @param origin The header's value.
 * @returns `true` for `http(s)://` on a loopback host.
 *
 * @example
 * ```ts
 * import { isLoopbackOrigin } from "./http_guard.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isLoopbackOrigin("http://127.0.0.1:8080"), true);
 * assert.equal(isLoopbackOrigin("https://evil.example"), false);
 * ```
 */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") &&
      isLoopback(url.hostname);
  } catch {
    return false;
  }
}

/**
 * The token of `Authorization: Bearer <token>`, or `null`.
 *
 * @param header The header's value.
 * @returns The token.
 *
 * @example
 * ```ts
 * import { bearerToken } from "./http_guard.ts";
 * import assert from "node:assert/strict";
 * assert.equal(bearerToken("Bearer abc"), "abc");
 * assert.equal(bearerToken("Basic abc"), null);
 * ```
 */
export function bearerToken(header: string | null): string | null {
  return /^Bearer +(\S+) *$/i.exec(header ?? "")?.[1] ?? null;
}

/**
 * A token kept as its digest, compared in constant time.
 *
 * @example
 * ```ts
 * import { TokenCheck } from "./http_guard.ts";
 * import assert from "node:assert/strict";
 * const check = new TokenCheck("s3cret-token-of-the-team");
 * assert.equal(check.matches("s3cret-token-of-the-team"), true);
 * assert.equal(check.matches("s3cret"), false);
 * assert.equal(check.matches(null), false);
 * ```
 */
export class TokenCheck {
  readonly #expected: Uint8Array;

  /**
   * Keeps the token's digest.
   *
   * @param token The token requests must carry.
   */
  constructor(token: string) {
    this.#expected = digest(token);
  }

  /**
   * Whether a given token is the token.
   *
   * @param given The token a request carried, or `null`.
   * @returns `true` when it matches.
   */
  matches(given: string | null): boolean {
    // Both sides are SHA-256 digests: equal lengths, compared in constant time.
    return timingSafeEqual(digest(given ?? ""), this.#expected) &&
      given !== null;
  }
}

function digest(text: string): Uint8Array {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * A refusal as plain text: the status, one line saying why, and the given
 * headers (a listener's own security headers, `Allow`,
 * `WWW-Authenticate`).
 *
 * @param status The HTTP status.
 * @param text Why, one line.
 * @param headers More headers.
 * @returns The response.
 *
 * @example
 * ```ts
 * import { refusal } from "./http_guard.ts";
 * import assert from "node:assert/strict";
 * const response = refusal(405, "Method not allowed", { Allow: "GET" });
 * assert.equal(response.headers.get("allow"), "GET");
 * assert.equal(await response.text(), "Method not allowed\n");
 * ```
 */
export function refusal(
  status: number,
  text: string,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(`${text}\n`, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", ...headers },
  });
}
