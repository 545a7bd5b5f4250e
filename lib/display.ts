/**
 * Text for the terminal: model-provided strings (action names, paths,
 * summaries, refusal reasons) with control characters escaped and a length
 * bound, so nothing a model says can move the cursor, clear the screen or
 * forge a progress line; and short human durations.
 *
 * @module
 */

/**
 * C0 and C1 controls, DEL, line and paragraph separators, and the bidi
 * embedding, override and isolate marks (which can reorder what is shown).
 */
// deno-lint-ignore no-control-regex
const UNSAFE = new RegExp(
  "[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]",
  "g",
);

/** Default bound of {@linkcode displayText}, in UTF-16 code units. */
export const DISPLAY_MAX_CHARS = 200;

/**
 * Escapes control characters as `\n`, `\r`, `\t` or `\u{1b}`-style
 * `\uXXXX`, and clips the result to `max` characters with `…`.
 *
 * @param text Untrusted text.
 * @param max Most characters kept (default {@linkcode DISPLAY_MAX_CHARS}).
 * @returns One line that is safe to print on a terminal.
 *
 * @example
 * ```ts
 * import { displayText } from "./display.ts";
 * import assert from "node:assert/strict";
 * assert.equal(displayText("tests.run\r\x1b[2Kstep 9/9"), "tests.run\\r\\u001b[2Kstep 9/9");
 * assert.equal(displayText("x".repeat(10), 4), "xxx…");
 * ```
 */
export function displayText(
  text: string,
  max: number = DISPLAY_MAX_CHARS,
): string {
  // Clip first so a huge string costs only `max` escapes.
  const head = text.length > max ? text.slice(0, max) : text;
  const escaped = head.replace(UNSAFE, escapeChar);
  if (escaped.length <= max && head.length === text.length) return escaped;
  let clipped = escaped.slice(0, Math.max(0, max - 1));
  if (/[\uD800-\uDBFF]$/.test(clipped)) clipped = clipped.slice(0, -1);
  return `${clipped}…`;
}

function escapeChar(ch: string): string {
  switch (ch) {
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
    default:
      return `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
  }
}

/**
 * A short human duration: `300 ms`, `1.5 s`, `2 min`.
 *
 * @param ms Milliseconds.
 * @returns The duration in the largest unit below which it stays readable.
 *
 * @example
 * ```ts
 * import { formatDuration } from "./display.ts";
 * import assert from "node:assert/strict";
 * assert.equal(formatDuration(300), "300 ms");
 * assert.equal(formatDuration(59_000), "59 s");
 * assert.equal(formatDuration(120_000), "2 min");
 * ```
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Number((ms / 1000).toFixed(1))} s`;
  return `${Number((ms / 60_000).toFixed(1))} min`;
}
