/**
 * Which upstream a templated resource URI belongs to. An upstream's
 * `resources/templates/list` gives RFC 6570 templates; the host reads a URI
 * it expanded from one, and the gateway must route that read. The SDK's own
 * `UriTemplate.match` builds a regular expression from the template, which
 * an upstream (untrusted) could make backtrack for ever; here a template is
 * reduced to its literal parts, and a URI matches when it holds them in
 * order (each expression standing for any text) — linear, never stuck, and
 * never stricter than the template, so a read reaches the server that
 * offers the template and that server checks the URI itself.
 *
 * @module
 */

/** The longest template considered. */
export const MAX_TEMPLATE_CHARS = 1024;

/**
 * A template's literal parts: the text before its first expression, between
 * expressions, and after the last one.
 *
 * @param template An RFC 6570 URI template (untrusted).
 * @returns The literal parts (one more than the expressions), or `undefined`
 *   for a template that is too long or whose braces do not pair.
 *
 * @example
 * ```ts
 * import { templateLiterals } from "./uri_template.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(templateLiterals("demo://text/{id}{?page}"), ["demo://text/", "", ""]);
 * assert.equal(templateLiterals("demo://{open"), undefined);
 * ```
 */
export function templateLiterals(template: string): string[] | undefined {
  if (typeof template !== "string" || template.length > MAX_TEMPLATE_CHARS) {
    return undefined;
  }
  const literals: string[] = [];
  let at = 0;
  for (;;) {
    const open = template.indexOf("{", at);
    const close = template.indexOf("}", at);
    if (open === -1) {
      if (close !== -1) return undefined;
      literals.push(template.slice(at));
      return literals;
    }
    if (close !== -1 && close < open) return undefined;
    const end = template.indexOf("}", open);
    if (end === -1 || template.slice(open + 1, end).includes("{")) {
      return undefined;
    }
    literals.push(template.slice(at, open));
    at = end + 1;
  }
}

/**
 * Whether a URI could be an expansion of the template whose literal parts
 * are given: it starts with the first, ends with the last, and holds the
 * others in order between them.
 *
 * @param literals What {@linkcode templateLiterals} answered.
 * @param uri The URI a host reads.
 * @returns Whether the URI matches.
 *
 * @example
 * ```ts
 * import { templateLiterals, uriMatches } from "./uri_template.ts";
 * import assert from "node:assert/strict";
 * const literals = templateLiterals("demo://resource/{kind}/item/{id}")!;
 * assert.ok(uriMatches(literals, "demo://resource/text/item/7"));
 * assert.ok(!uriMatches(literals, "demo://other/text/item/7"));
 * ```
 */
export function uriMatches(literals: readonly string[], uri: string): boolean {
  if (literals.length === 1) return uri === literals[0];
  const first = literals[0]!;
  const last = literals.at(-1)!;
  if (
    uri.length < first.length + last.length || !uri.startsWith(first) ||
    !uri.endsWith(last)
  ) return false;
  const end = uri.length - last.length;
  let at = first.length;
  for (const literal of literals.slice(1, -1)) {
    const found = uri.indexOf(literal, at);
    if (found === -1 || found + literal.length > end) return false;
    at = found + literal.length;
  }
  return true;
}
