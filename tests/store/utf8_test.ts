import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ceilCharBoundary,
  firstInvalidUtf8,
  floorCharBoundary,
  isCharBoundary,
  isValidUtf8,
} from "../../lib/store/utf8.ts";
import { testdata } from "../_kit.ts";

const KUHN = testdata("kuhn_UTF-8-test/");

interface KuhnLine {
  line: number;
  start: number;
  end_excl_newline: number;
  valid_utf8: boolean;
}
interface KuhnPayload {
  section: string;
  payload_offset: number;
  payload_end_excl: number;
  payload_hex: string;
  payload_valid_strict_utf8: boolean;
}
interface KuhnLines {
  file_size: number;
  line_count: number;
  first_invalid_offset: number;
  all_lines: KuhnLine[];
  test_payloads: KuhnPayload[];
}

const fatal = new TextDecoder("utf-8", { fatal: true });

function nativeValid(bytes: Uint8Array): boolean {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function hex(text: string): Uint8Array {
  return Uint8Array.from(
    text.match(/../g) ?? [],
    (pair) => Number.parseInt(pair, 16),
  );
}

Deno.test("UTF-8 validation classifies every line of Kuhn's stress test", async (t) => {
  const bytes = await Deno.readFile(KUHN + "UTF-8-test.txt");
  const kuhn: KuhnLines = JSON.parse(
    await Deno.readTextFile(KUHN + "derived/kuhn_lines.json"),
  );
  assert.equal(bytes.length, kuhn.file_size);

  await t.step(
    "the whole file's first invalid byte is where Kuhn's data says",
    () => {
      assert.equal(isValidUtf8(bytes), false);
      assert.equal(firstInvalidUtf8(bytes), kuhn.first_invalid_offset);
    },
  );

  await t.step("every line is valid or invalid as annotated", () => {
    assert.equal(kuhn.all_lines.length, kuhn.line_count);
    const wrong: number[] = [];
    for (const line of kuhn.all_lines) {
      const slice = bytes.subarray(line.start, line.end_excl_newline);
      const first = firstInvalidUtf8(slice);
      if (
        isValidUtf8(slice) !== line.valid_utf8 ||
        (first === -1) !== line.valid_utf8
      ) wrong.push(line.line);
    }
    assert.deepEqual(wrong, [], `misclassified lines: ${wrong.join(", ")}`);
  });

  await t.step("every test payload is valid or invalid as annotated", () => {
    const wrong: string[] = [];
    for (const payload of kuhn.test_payloads) {
      const slice = bytes.subarray(
        payload.payload_offset,
        payload.payload_end_excl,
      );
      assert.deepEqual(slice, hex(payload.payload_hex), payload.section);
      if (isValidUtf8(slice) !== payload.payload_valid_strict_utf8) {
        wrong.push(payload.section);
      }
      if (
        (firstInvalidUtf8(slice) === -1) !== payload.payload_valid_strict_utf8
      ) {
        wrong.push(payload.section);
      }
    }
    assert.deepEqual(wrong, [], `misclassified payloads: ${wrong.join(", ")}`);
  });

  await t.step("the valid prefix before each invalid offset decodes", () => {
    let rest = bytes;
    let at = 0;
    let found = 0;
    for (;;) {
      const bad = firstInvalidUtf8(rest);
      if (bad === -1) break;
      assert.ok(nativeValid(rest.subarray(0, bad)), `prefix at ${at}`);
      found++;
      at += bad + 1;
      rest = rest.subarray(bad + 1);
    }
    assert.ok(found > 100);
  });
});

Deno.test("UTF-8 validation rejects each kind of ill-formed sequence", async (t) => {
  const cases: [string, string, number][] = [
    ["a stray continuation byte", "61 80", 1],
    ["an overlong two-byte NUL", "c0 80", 0],
    ["an overlong two-byte '/'", "c1 af", 0],
    ["an overlong three-byte form", "e0 80 af", 0],
    ["an overlong three-byte form at the E0 edge", "e0 9f bf", 0],
    ["an overlong four-byte form", "f0 8f bf bf", 0],
    ["a high surrogate", "ed a0 80", 0],
    ["a low surrogate", "ed bf bf", 0],
    ["a code point above U+10FFFF", "f4 90 80 80", 0],
    ["a five-byte form", "f8 88 80 80 80", 0],
    ["an FF byte", "41 ff", 1],
    ["a truncated two-byte sequence", "41 c3", 1],
    ["a truncated three-byte sequence", "e2 82", 0],
    ["a truncated four-byte sequence", "f0 9f 98", 0],
    ["a lead byte followed by ASCII", "e2 41 41", 0],
  ];
  for (const [name, bytes, offset] of cases) {
    await t.step(`${name} is invalid at byte ${offset}`, () => {
      const input = hex(bytes.replaceAll(" ", ""));
      assert.equal(isValidUtf8(input), false);
      assert.equal(firstInvalidUtf8(input), offset);
    });
  }
  await t.step("the edges of every range are valid", () => {
    for (
      const ok of [
        "",
        "00",
        "7f",
        "c2 80",
        "df bf",
        "e0 a0 80",
        "ed 9f bf",
        "ee 80 80",
        "ef bf bf",
        "f0 90 80 80",
        "f4 8f bf bf",
      ]
    ) {
      const input = hex(ok.replaceAll(" ", ""));
      assert.equal(isValidUtf8(input), true, ok);
      assert.equal(firstInvalidUtf8(input), -1, ok);
    }
  });
});

Deno.test("firstInvalidUtf8() agrees with the native fatal decoder on random bytes", () => {
  const byte = fc.oneof(
    fc.integer({ min: 0x00, max: 0x7f }),
    fc.integer({ min: 0x80, max: 0xbf }),
    fc.integer({ min: 0xc0, max: 0xff }),
    fc.constantFrom(0xe0, 0xed, 0xf0, 0xf4, 0xa0, 0x9f, 0x90, 0x8f),
  );
  fc.assert(
    fc.property(
      fc.array(byte, { maxLength: 64 }),
      fc.array(fc.integer({ min: 0, max: 0x7f }), { maxLength: 40 }),
      fc.nat(7),
      (tail, ascii, shift) => {
        // An ASCII run first exercises the word-at-a-time path, and the
        // shift misaligns the view.
        const buffer = new Uint8Array(shift + ascii.length + tail.length);
        buffer.set(ascii, shift);
        buffer.set(tail, shift + ascii.length);
        const bytes = buffer.subarray(shift);
        const valid = nativeValid(bytes);
        const first = firstInvalidUtf8(bytes);
        assert.equal(isValidUtf8(bytes), valid);
        assert.equal(first === -1, valid);
        if (first >= 0) {
          assert.ok(nativeValid(bytes.subarray(0, first)));
          // The sequence at `first` is bad: no extension of the prefix by
          // one whole character from there decodes.
          for (let k = 1; k <= 4 && first + k <= bytes.length; k++) {
            assert.equal(nativeValid(bytes.subarray(first, first + k)), false);
          }
        }
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("character boundaries fall between characters", async (t) => {
  // a(1) é(2) €(3) 😀(4) b(1)
  const bytes = new TextEncoder().encode("aé€😀b");
  const boundaries = [0, 1, 3, 6, 10, 11];

  await t.step("isCharBoundary() is true exactly at the boundaries", () => {
    for (let offset = -1; offset <= bytes.length + 1; offset++) {
      assert.equal(
        isCharBoundary(bytes, offset),
        boundaries.includes(offset),
        String(offset),
      );
    }
    assert.equal(isCharBoundary(bytes, 1.5), false);
    assert.equal(isCharBoundary(new Uint8Array(), 0), true);
  });

  await t.step(
    "floorCharBoundary() and ceilCharBoundary() round to the nearest boundary",
    () => {
      for (let offset = 0; offset <= bytes.length; offset++) {
        const floor = floorCharBoundary(bytes, offset);
        const ceil = ceilCharBoundary(bytes, offset);
        assert.equal(floor, Math.max(...boundaries.filter((b) => b <= offset)));
        assert.equal(ceil, Math.min(...boundaries.filter((b) => b >= offset)));
      }
    },
  );

  await t.step("offsets outside the bytes are clamped", () => {
    assert.equal(floorCharBoundary(bytes, -5), 0);
    assert.equal(ceilCharBoundary(bytes, -5), 0);
    assert.equal(floorCharBoundary(bytes, 99), bytes.length);
    assert.equal(ceilCharBoundary(bytes, 99), bytes.length);
    assert.equal(floorCharBoundary(bytes, Number.NaN), 0);
  });
});
