import assert from "node:assert/strict";
import fc from "fast-check";
import {
  countLines,
  DESCRIPTOR_MAX_BYTES,
  fitDescriptor,
  summarizeContent,
} from "../../lib/reference/descriptor_fields.ts";
import { lineEnds } from "../../lib/reference/selection.ts";

const encoder = new TextEncoder();
const size = (value: unknown) => encoder.encode(JSON.stringify(value)).length;

Deno.test("countLines() counts the lines a lines selection can name", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), (text) => {
      const bytes = encoder.encode(text);
      assert.equal(countLines(bytes), lineEnds(bytes).length);
    }),
  );
});

Deno.test("summarizeContent() names JSON by its outline and previews 1,024 bytes on a character boundary", () => {
  const text = summarizeContent(encoder.encode("é".repeat(1000)));
  assert.equal(text.media_type, "text/plain");
  assert.equal(text.outline, undefined);
  assert.equal(text.preview, "é".repeat(512));
  assert.equal(text.preview_truncated, true);
  assert.equal(summarizeContent(encoder.encode("{}"), { lines: 9 }).lines, 9);
});

Deno.test("fitDescriptor() keeps a descriptor within 2 KiB: the outline shrinks first, then the preview", () => {
  const wide = {
    result: "result-1",
    preview: "p".repeat(1024),
    preview_truncated: false,
    outline: "o".repeat(1020),
  };
  const fitted = fitDescriptor({ ...wide });
  assert.ok(size(fitted) <= DESCRIPTOR_MAX_BYTES);
  assert.equal(fitted.preview, wide.preview, "the preview stays whole");
  assert.ok((fitted.outline as string).endsWith("…"));
  const long = fitDescriptor({
    result: "result-1",
    reference: { note: "n".repeat(1500) },
    preview: "€".repeat(341),
    preview_truncated: false,
  });
  assert.ok(size(long) <= DESCRIPTOR_MAX_BYTES);
  assert.equal(long.preview_truncated, true);
  assert.ok(long.preview.isWellFormed());
  const small = { preview: "x", preview_truncated: false };
  assert.deepEqual(fitDescriptor({ ...small }), small);
});
