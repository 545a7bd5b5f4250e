import assert from "node:assert/strict";
import { LargeText, shapeOf } from "../../../lib/mcp/gateway/large_text.ts";
import { Utf8Builder } from "../../../lib/store/utf8_builder.ts";

function largeText(text: string, lines = 0): LargeText {
  const builder = new Utf8Builder(1 << 20);
  // The builder holds UTF-8: a lone surrogate becomes U+FFFD, remembered.
  const lone: number[] = [];
  let bytes = 0;
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      lone.push(bytes, unit);
    }
    bytes += new TextEncoder().encode(char.toWellFormed()).length;
  }
  builder.append(new TextEncoder().encode(text.toWellFormed()));
  return new LargeText(builder.finish(), lines, lone);
}

Deno.test("LargeText gives back its string exactly, lone surrogates included", () => {
  for (
    const text of [
      "",
      "plain",
      "é😀\n",
      "a\ud800b",
      "\udc00",
      "x\ud83dy\ude00z",
    ]
  ) {
    const large = largeText(text);
    assert.equal(large.text(), text);
    assert.equal(JSON.stringify({ large }), JSON.stringify({ large: text }));
    assert.equal(
      large.byteLength,
      new TextEncoder().encode(text.toWellFormed()).length,
    );
  }
});

Deno.test("shapeOf() shows a schema empty strings where large texts stand, and changes nothing", () => {
  const large = largeText("big");
  const result = {
    content: [{ type: "text", text: large }, { type: "text", text: "small" }],
    structuredContent: { content: large },
    isError: false,
  };
  const shape = shapeOf(result);
  assert.deepEqual(shape, {
    content: [{ type: "text", text: "" }, { type: "text", text: "small" }],
    structuredContent: { content: large },
    isError: false,
  });
  assert.equal(result.content[0]!.text, large);
  const plain = { content: [{ type: "text", text: "small" }] };
  assert.equal(shapeOf(plain), plain);
});
