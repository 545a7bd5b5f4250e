import assert from "node:assert/strict";
import fc from "fast-check";
import {
  INVALID,
  MORE,
  StringUnescaper,
} from "../../lib/reference/json_string.ts";

const encoder = new TextEncoder();

/**
 * JSON text of a string, each character escaped at random (`\uXXXX`, both
 * halves of a pair alike); lone surrogates, which UTF-8 cannot carry raw,
 * always escaped.
 */
function quote(text: string, escape: (k: number) => boolean): string {
  const u = (unit: number) => `\\u${unit.toString(16).padStart(4, "0")}`;
  let out = '"';
  let k = 0;
  for (const c of text) {
    const unit = c.charCodeAt(0);
    const lone = c.length === 1 && unit >= 0xd800 && unit <= 0xdfff;
    if (lone || escape(k++) || unit < 0x20 || unit === 0x22 || unit === 0x5c) {
      out += [...Array(c.length).keys()].map((j) => u(c.charCodeAt(j)))
        .join("");
    } else out += c;
  }
  return out + '"';
}

/**
 * Unescapes a string lexeme's body fed in pieces cut at `cuts`, carrying an
 * escape cut off to the next piece, as the gateway's streaming reader does.
 */
function unescapeInPieces(
  lexeme: Uint8Array,
  cuts: readonly number[],
): { bytes: Uint8Array; end: number; unescaper: StringUnescaper } {
  const unescaper = new StringUnescaper();
  const out: number[] = [];
  let carry = new Uint8Array(0);
  let end = MORE;
  const bounds = [1, ...cuts.filter((c) => c > 1 && c < lexeme.length)]
    .sort((a, b) => a - b);
  bounds.push(lexeme.length);
  for (let k = 0; k + 1 < bounds.length && end === MORE; k++) {
    const piece = lexeme.subarray(bounds[k], bounds[k + 1]);
    const buf = new Uint8Array(carry.length + piece.length + 3 & ~3);
    buf.set(carry);
    buf.set(piece, carry.length);
    const n = carry.length + piece.length;
    end = unescaper.run(buf, new Uint32Array(buf.buffer), n, out.length);
    assert.notEqual(end, INVALID);
    out.push(...buf.subarray(0, unescaper.written));
    carry = unescaper.carry >= 0
      ? buf.slice(unescaper.carry, n)
      : new Uint8Array(0);
  }
  return { bytes: new Uint8Array(out), end, unescaper };
}

Deno.test("StringUnescaper unescapes a string cut anywhere into what JSON.parse gives, as UTF-8", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: "binary", maxLength: 60 }),
      fc.array(fc.boolean(), { maxLength: 60 }),
      fc.array(fc.nat(400), { maxLength: 8 }),
      (value, escapes, cuts) => {
        const lexeme = encoder.encode(quote(value, (k) => escapes[k] ?? false));
        const { bytes, end, unescaper } = unescapeInPieces(lexeme, cuts);
        assert.equal(end >= 0, true, "the closing quote is found");
        assert.deepEqual(
          bytes,
          encoder.encode(JSON.parse(quote(value, () => true))),
        );
        assert.equal(unescaper.newlines, value.split("\n").length - 1);
        // Each lone surrogate is noted with the U+FFFD that stands for it.
        const lone = [...value].filter((c) =>
          c.length === 1 && c.charCodeAt(0) >= 0xd800 &&
          c.charCodeAt(0) <= 0xdfff
        );
        assert.deepEqual(
          unescaper.lone.filter((_, k) => k % 2 === 1),
          lone.map((c) => c.charCodeAt(0)),
        );
      },
    ),
  );
});

Deno.test("StringUnescaper refuses a raw control character and an unknown escape", () => {
  for (const body of ['a\u0001b"', 'a\\xb"', 'a\\u00g0"']) {
    const buf = new Uint8Array(16);
    const n = encoder.encodeInto(body, buf).written;
    assert.equal(
      new StringUnescaper().run(buf, new Uint32Array(buf.buffer), n, 0),
      INVALID,
      body,
    );
  }
});
