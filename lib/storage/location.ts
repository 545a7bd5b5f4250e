/**
 * Store URLs as they may be shown: the password and every query value
 * except a few harmless settings replaced by `***`, so no message, log line
 * or report ever carries a secret of the URL.
 *
 * @module
 */

/** Query keys whose values are shown as given (nothing secret in them). */
const SHOWN_QUERY = new Set([
  "sslmode",
  "application_name",
  "connect_timeout",
  "schema",
  "search_path",
  "target_session_attrs",
]);

/**
 * A store URL with its secrets masked: the password, and the value of
 * every query key but `sslmode`, `application_name`, `connect_timeout`,
 * `schema`, `search_path` and `target_session_attrs`. Text that does not
 * parse as a URL shows its scheme only.
 *
 * @param url A store URL (`file:DIR`, `sqlite:PATH`, `postgres://…`).
 * @returns The URL safe to print.
 *
 * @example
 * ```ts
 * import { redactUrl } from "./location.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   redactUrl("postgres://loom:hunter2@db.internal:5432/loom?sslmode=require&password=x"),
 *   "postgres://loom:***@db.internal:5432/loom?sslmode=require&password=***",
 * );
 * assert.equal(redactUrl("sqlite:/var/lib/loom/s.db"), "sqlite:/var/lib/loom/s.db");
 * ```
 */
export function redactUrl(url: string): string {
  if (url.startsWith("file:") || url.startsWith("sqlite:")) {
    const scheme = url.slice(0, url.indexOf(":") + 1);
    const rest = url.slice(scheme.length);
    // A local path: nothing secret unless it looks like a URL after all.
    return /[@?]/.test(rest) && rest.startsWith("//") ? `${scheme}***` : url;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Unparsable: show the scheme only.
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(url)?.[0] ?? "";
    return `${scheme}***`;
  }
  if (parsed.password !== "") parsed.password = "***";
  const query: string[] = [];
  for (const [key, value] of parsed.searchParams) {
    query.push(
      `${encodeURIComponent(key)}=${
        SHOWN_QUERY.has(key.toLowerCase()) ? encodeURIComponent(value) : "***"
      }`,
    );
  }
  parsed.search = "";
  parsed.hash = "";
  const base = parsed.href.replace("%2A%2A%2A@", "***@");
  return query.length === 0 ? base : `${base}?${query.join("&")}`;
}

/**
 * Removes every secret of `url` from a text (an error message of a
 * database client, say): the password and the secret query values, raw
 * and URL-decoded.
 *
 * @param text The text to clean.
 * @param url The store URL whose secrets must not appear.
 * @returns The text with each secret replaced by `***`.
 *
 * @example
 * ```ts
 * import { scrubSecrets } from "./location.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   scrubSecrets("auth failed with pw s3cret", "postgres://u:s3cret@h/db"),
 *   "auth failed with pw ***",
 * );
 * ```
 */
export function scrubSecrets(text: string, url: string): string {
  let out = text;
  for (const secret of secretsOf(url)) out = out.split(secret).join("***");
  return out;
}

function secretsOf(url: string): string[] {
  const out = new Set<string>();
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") {
      out.add(parsed.password);
      out.add(decodeURIComponent(parsed.password));
    }
    for (const [key, value] of parsed.searchParams) {
      if (!SHOWN_QUERY.has(key.toLowerCase()) && value !== "") {
        out.add(value);
        out.add(encodeURIComponent(value));
      }
    }
  } catch {
    // Not a URL: no structured secrets to find.
  }
  // Never scrub tiny strings that would mangle the whole text.
  return [...out].filter((s) => s.length >= 3).sort((a, b) =>
    b.length - a.length
  );
}
