/**
 * YAML frontmatter of context files.
 *
 * @module
 */
import { parseYaml } from "./_yaml.ts";

/** A document split into its frontmatter and body. */
export interface Frontmatter {
  /** The frontmatter mapping; empty when there is none. */
  readonly data: Readonly<Record<string, unknown>>;
  /** The text after the closing delimiter, leading newlines removed. */
  readonly body: string;
}

const OPEN = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*$/m;

/**
 * Splits a leading YAML frontmatter block (`---` line, YAML mapping, `---`
 * or `...` line) from a document, parsing it with a real YAML parser. Text
 * without a complete block, or whose block is not a YAML mapping, comes back
 * unchanged with empty data: this function never throws.
 *
 * @param text The document.
 * @returns The frontmatter data and the body.
 *
 * @example
 * ```ts
 * import { parseFrontmatter } from "./frontmatter.ts";
 * import assert from "node:assert/strict";
 * const { data, body } = parseFrontmatter("---\nrole: 'assistant'\n---\n\nHello");
 * assert.deepEqual(data, { role: "assistant" });
 * assert.equal(body, "Hello");
 * ```
 */
export function parseFrontmatter(text: string): Frontmatter {
  const open = OPEN.exec(text);
  if (open === null) return { data: {}, body: text };
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (close === null) return { data: {}, body: text };
  const yamlText = rest.slice(0, close.index);
  let after = rest.slice(close.index + close[0].length);
  after = after.replace(/^(?:\r?\n)+/, "");
  let data: unknown;
  try {
    data = yamlText.trim() === "" ? {} : parseYaml(yamlText);
  } catch {
    return { data: {}, body: text };
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data)) {
    return { data: {}, body: text };
  }
  return { data: data as Record<string, unknown>, body: after };
}
