import assert from "node:assert/strict";
import fc from "fast-check";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import {
  MAX_TEMPLATE_CHARS,
  templateLiterals,
  uriMatches,
} from "../../../lib/mcp/gateway/uri_template.ts";

Deno.test("templateLiterals() splits a template at its expressions, or refuses it", () => {
  assert.deepEqual(templateLiterals("file:///{+path}"), ["file:///", ""]);
  assert.deepEqual(templateLiterals("a{b}c{d}e"), ["a", "c", "e"]);
  assert.deepEqual(templateLiterals("plain://uri"), ["plain://uri"]);
  for (
    const bad of [
      "a{b",
      "a}b",
      "a{b{c}}",
      "}{",
      "x".repeat(MAX_TEMPLATE_CHARS + 1),
    ]
  ) {
    assert.equal(templateLiterals(bad), undefined, bad);
  }
});

Deno.test("uriMatches() accepts every expansion of a template, as the SDK expands it (property)", () => {
  const name = fc.stringMatching(/^[a-z]{1,6}$/);
  const literal = fc.string({ maxLength: 6 }).map((s) =>
    s.replace(/[{}]/g, "")
  );
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          literal,
          name,
          fc.constantFrom("", "+", "#", ".", "/", ";", "?"),
        ),
        {
          minLength: 1,
          maxLength: 4,
        },
      ),
      literal,
      fc.dictionary(name, fc.string({ maxLength: 8 })),
      (parts, tail, values) => {
        const template = parts.map(([l, n, op]) => `${l}{${op}${n}}`).join("") +
          tail;
        const uri = new UriTemplate(template).expand(values);
        assert.ok(
          uriMatches(templateLiterals(template)!, uri),
          `${template} ${uri}`,
        );
      },
    ),
  );
});

Deno.test("uriMatches() refuses a URI without the template's literals in order", () => {
  const literals = templateLiterals("demo://resource/{kind}/item/{id}.json")!;
  assert.ok(uriMatches(literals, "demo://resource/text/item/7.json"));
  assert.ok(!uriMatches(literals, "demo://resource/text/7.json"));
  assert.ok(!uriMatches(literals, "demo://resource/text/item/7.txt"));
  assert.ok(!uriMatches(literals, "other://resource/text/item/7.json"));
  // The literals may not overlap the prefix and suffix.
  assert.ok(!uriMatches(templateLiterals("ab{x}ba")!, "aba"));
  assert.ok(uriMatches(templateLiterals("ab{x}ba")!, "abba"));
});

Deno.test("uriMatches() stays linear on a template made to make a regular expression backtrack", () => {
  // As a regular expression, (.+)x repeated backtracks for ever on a URI
  // without the last literal; here it is a few scans.
  const template = "s://" + "{a}x".repeat(200) + "end";
  const literals = templateLiterals(template)!;
  assert.ok(!uriMatches(literals, "s://" + "x".repeat(4000)));
  assert.ok(uriMatches(literals, "s://" + "x".repeat(200) + "end"));
});
