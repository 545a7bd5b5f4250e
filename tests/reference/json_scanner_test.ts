import assert from "node:assert/strict";
import fc from "fast-check";
import jsonpointer from "jsonpointer";
import {
  type JsonIndex,
  JsonScanError,
  scanJson,
} from "../../lib/reference/json_scanner.ts";
import { decodeJsonString } from "../../lib/reference/json_string.ts";
import {
  formatPointer,
  parsePointer,
  PointerError,
} from "../../lib/reference/pointer.ts";
import { generated, wide } from "./generated_json.ts";
import { rng, testdata } from "../_kit.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const SUITE = testdata("JSONTestSuite/");
const NATIVE = testdata("nativejson-benchmark/data/");

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** jsonpointer is untyped: this is the one place its `any` is handled. */
function oracleGet(document: Json, pointer: string): Json | undefined {
  // jsonpointer refuses scalar documents even for the whole-document pointer.
  if (pointer === "") return document;
  return jsonpointer.get(document as object, pointer) as Json | undefined;
}

function scan(text: string): JsonIndex {
  return scanJson(encoder.encode(text));
}

function lexeme(index: JsonIndex, pointer: string): string {
  const span = index.resolve(parsePointer(pointer));
  return decoder.decode(index.bytes.subarray(span.start, span.end));
}

function scanError(input: string | Uint8Array): JsonScanError {
  try {
    scanJson(typeof input === "string" ? encoder.encode(input) : input);
  } catch (error) {
    assert.ok(error instanceof JsonScanError, String(error));
    assert.ok(error instanceof SyntaxError);
    return error;
  }
  assert.fail(`expected a scan error for ${String(input).slice(0, 80)}`);
}

function resolveCode(index: JsonIndex, pointer: string): string {
  try {
    index.resolve(parsePointer(pointer));
  } catch (error) {
    assert.ok(error instanceof PointerError, String(error));
    return error.code;
  }
  return "ok";
}

/** Every canonical pointer into a parsed value, the root first. */
function pointersOf(value: Json, prefix: string[] = []): string[][] {
  const out: string[][] = [prefix];
  // An explicit stack keeps deep generated values safe too.
  const stack: [Json, string[]][] = [[value, prefix]];
  out.length = 0;
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    out.push(path);
    if (Array.isArray(node)) {
      node.forEach((child, i) => stack.push([child, [...path, String(i)]]));
    } else if (node !== null && typeof node === "object") {
      for (const [key, child] of Object.entries(node)) {
        stack.push([child, [...path, key]]);
      }
    }
  }
  return out;
}

Deno.test("scanJson() accepts and rejects every JSONTestSuite file as strict_expectations.json says", async (t) => {
  const { cases }: {
    cases: Record<string, { upstream: string; strict_expectation: string }>;
  } = JSON.parse(
    await Deno.readTextFile(SUITE + "derived/strict_expectations.json"),
  );
  const files: string[] = [];
  for await (const entry of Deno.readDir(SUITE + "test_parsing")) {
    files.push(entry.name);
  }
  files.sort();

  await t.step("the corpus has 318 files, each with an expectation", () => {
    assert.equal(files.length, 318);
    assert.deepEqual(Object.keys(cases).sort(), files);
  });

  await t.step("every file gets its expected outcome", async () => {
    const wrong: string[] = [];
    for (const name of files) {
      const bytes = await Deno.readFile(SUITE + "test_parsing/" + name);
      let outcome = "accept";
      try {
        scanJson(bytes);
      } catch (error) {
        if (!(error instanceof JsonScanError)) {
          wrong.push(`${name} (threw ${String(error)})`);
          continue;
        }
        outcome = "reject";
      }
      if (outcome !== cases[name]!.strict_expectation) {
        wrong.push(`${name} (${outcome}ed)`);
      }
    }
    assert.deepEqual(wrong, [], `wrong outcome for:\n${wrong.join("\n")}`);
  });

  await t.step(
    "duplicate member names are ambiguous_json, everything else invalid_json",
    async () => {
      for (
        const name of files.filter((f) =>
          f.startsWith("y_object_duplicated_key")
        )
      ) {
        const bytes = await Deno.readFile(SUITE + "test_parsing/" + name);
        assert.equal(scanError(bytes).code, "ambiguous_json", name);
      }
      for (
        const name of [
          "n_structure_UTF8_BOM_no_data.json",
          "n_array_extra_comma.json",
        ]
      ) {
        const bytes = await Deno.readFile(SUITE + "test_parsing/" + name);
        assert.equal(scanError(bytes).code, "invalid_json", name);
      }
    },
  );

  await t.step(
    "100,000 opening arrays are rejected cleanly and 500 nested arrays accepted",
    async () => {
      const deep = await Deno.readFile(
        SUITE + "test_parsing/n_structure_100000_opening_arrays.json",
      );
      const error = scanError(deep);
      assert.equal(error.code, "invalid_json");
      assert.equal(error.offset, deep.length);
      const nested = scanJson(
        await Deno.readFile(
          SUITE + "test_parsing/i_structure_500_nested_arrays.json",
        ),
      );
      assert.equal(nested.valueCount, 500);
      assert.equal(lexeme(nested, "/0".repeat(499)), "[]");
    },
  );
});

Deno.test("scanJson() keeps every number lexeme byte for byte", async (t) => {
  const { cases }: {
    cases: { file: string; bytes_hex: string; upstream: string }[];
  } = JSON.parse(await Deno.readTextFile(SUITE + "derived/number_cases.json"));
  const { cases: expectations }: {
    cases: Record<string, { strict_expectation: string }>;
  } = JSON.parse(
    await Deno.readTextFile(SUITE + "derived/strict_expectations.json"),
  );

  await t.step("each accepted number case resolves to its exact bytes", () => {
    let checked = 0;
    for (const { file, bytes_hex } of cases) {
      const name = file.replace(/^test_(parsing|transform)\//, "");
      // test_transform cases are all valid JSON.
      const expectation = file.startsWith("test_transform/")
        ? "accept"
        : expectations[name]!.strict_expectation;
      if (expectation !== "accept") {
        assert.throws(
          () =>
            scanJson(Uint8Array.from(
              bytes_hex.match(/../g)!,
              (pair) => Number.parseInt(pair, 16),
            )),
          JsonScanError,
          name,
        );
        continue;
      }
      const bytes = Uint8Array.from(
        bytes_hex.match(/../g)!,
        (pair) => Number.parseInt(pair, 16),
      );
      const text = decoder.decode(bytes);
      const index = scanJson(bytes);
      // Every number value's span, in document order ...
      const spans = pointersOf(JSON.parse(text) as Json)
        .map((tokens) => index.resolve(tokens))
        .filter((span) => span.kind === "number")
        .sort((x, y) => x.start - y.start);
      const found = spans.map((span) =>
        decoder.decode(bytes.subarray(span.start, span.end))
      );
      // ... is exactly the number tokens of the text, outside strings.
      const expected = text.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(
        /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/g,
      ) ?? [];
      assert.ok(expected.length > 0, name);
      assert.deepEqual(found, expected, name);
      checked++;
    }
    assert.ok(checked >= 20, `only ${checked} number cases checked`);
  });

  await t.step(
    "integers beyond 2^53 and long fractions keep every digit",
    () => {
      fc.assert(
        fc.property(
          fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
          fc.option(fc.stringMatching(/^\.[0-9]{1,30}$/)),
          fc.option(fc.stringMatching(/^[eE][+-]?[0-9]{1,5}$/)),
          (integer, fraction, exponent) => {
            const number = `${integer}${fraction ?? ""}${exponent ?? ""}`;
            const index = scan(`{"n": ${number}, "a": [ ${number} ]}`);
            assert.equal(lexeme(index, "/n"), number);
            assert.equal(lexeme(index, "/a/0"), number);
            assert.equal(index.resolve(["n"]).kind, "number");
          },
        ),
      );
      const big = "123456789012345678901234567890";
      assert.equal(lexeme(scan(`[${big}]`), "/0"), big);
      assert.notEqual(String(JSON.parse(big)), big);
    },
  );
});

Deno.test("scanJson() agrees with the nativejson-benchmark checker and round-trip files", async (t) => {
  await t.step(
    "jsonchecker: fail files are rejected, pass files accepted",
    async () => {
      const wrong: string[] = [];
      for await (const entry of Deno.readDir(NATIVE + "jsonchecker")) {
        if (!entry.name.endsWith(".json")) continue;
        const bytes = await Deno.readFile(NATIVE + "jsonchecker/" + entry.name);
        // fail01 (a scalar document) and fail18 (depth 20) are valid RFC 8259.
        const accept = entry.name.startsWith("pass") ||
          entry.name.includes("EXCLUDE");
        let accepted = true;
        try {
          scanJson(bytes);
        } catch (error) {
          assert.ok(error instanceof JsonScanError);
          accepted = false;
        }
        if (accepted !== accept) wrong.push(entry.name);
      }
      assert.deepEqual(wrong, []);
    },
  );
  await t.step("roundtrip: the root lexeme is the whole document", async () => {
    for await (const entry of Deno.readDir(NATIVE + "roundtrip")) {
      const bytes = await Deno.readFile(NATIVE + "roundtrip/" + entry.name);
      const index = scanJson(bytes);
      const span = index.resolve([]);
      assert.equal(
        decoder.decode(bytes.subarray(span.start, span.end)),
        decoder.decode(bytes).trim(),
        entry.name,
      );
    }
  });
  await t.step(
    "the large benchmark files scan and every pointer matches jsonpointer",
    async () => {
      for (const name of ["canada.json", "citm_catalog.json", "twitter.json"]) {
        const bytes = await Deno.readFile(NATIVE + name);
        const index = scanJson(bytes);
        const document = JSON.parse(decoder.decode(bytes)) as Json;
        const pointers = pointersOf(document);
        assert.equal(index.valueCount, pointers.length, name);
        // Every 97th pointer keeps the test quick and still covers each file.
        for (let p = 0; p < pointers.length; p += 97) {
          const pointer = formatPointer(pointers[p]!);
          assert.deepEqual(
            JSON.parse(lexeme(index, pointer)),
            oracleGet(document, pointer),
            `${name} ${pointer}`,
          );
        }
      }
    },
  );
});

Deno.test("scanJson() rejects duplicate member names anywhere", async (t) => {
  const cases: [string, string][] = [
    ["two equal names", `{"a":1,"a":2}`],
    ["a nested object", `[0,{"x":{"b":1,"c":2,"b":3}}]`],
    ["an escaped duplicate", `{"a":1,"\\u0061":2}`],
    ["an escaped non-ASCII duplicate", `{"é":1,"\\u00e9":2}`],
    ["a solidus escape", `{"a/b":1,"a\\/b":2}`],
    ["a surrogate pair escape", `{"😀":1,"\\ud83d\\ude00":2}`],
    ["empty names", `{"":1,"":2}`],
  ];
  for (const [name, text] of cases) {
    await t.step(`${name} is ambiguous_json`, () => {
      const error = scanError(text);
      assert.equal(error.code, "ambiguous_json");
      assert.match(error.message, /Duplicate member name/);
    });
  }
  await t.step(
    "a duplicate among many members is found, wherever it is",
    () => {
      for (const size of [2, 8, 9, 13, 100, 1000]) {
        const names = Array.from({ length: size }, (_, i) => `"k${i}"`);
        const unique = `{${names.map((n) => `${n}:0`).join(",")}}`;
        assert.equal(scan(unique).valueCount, size + 1);
        for (const at of [0, size >> 1, size - 1]) {
          const text = `{${names.map((n) => `${n}:0`).join(",")},${
            names[at]
          }:1}`;
          assert.equal(scanError(text).code, "ambiguous_json", `${size}/${at}`);
        }
      }
    },
  );
  await t.step("100,000 counter-like names are told apart", () => {
    const names = Array.from({ length: 100_000 }, (_, i) => `"member-${i}"`);
    const members = names.map((n) => `${n}:0`).join(",");
    assert.equal(scan(`{${members}}`).valueCount, 100_001);
    assert.equal(
      scanError(`{${members},"member-99999":1}`).code,
      "ambiguous_json",
    );
  });
  await t.step(
    "names that differ only in the middle are not duplicates",
    () => {
      const names = Array.from(
        { length: 64 },
        (_, i) => `"aaaa${String.fromCharCode(0x41 + (i % 26))}${i}zzzz"`,
      );
      scan(`{${names.map((n) => `${n}:0`).join(",")}}`);
    },
  );
  await t.step(
    "random objects are ambiguous exactly when a decoded name repeats",
    () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.tuple(fc.stringMatching(/^[abé\/]{0,3}$/), fc.boolean()),
            { maxLength: 40 },
          ),
          (members) => {
            const text = `{${
              members.map(([name, escape]) =>
                `${escape ? escapeAll(name) : JSON.stringify(name)}:0`
              ).join(",")
            }}`;
            const unique = new Set(members.map(([name]) => name)).size ===
              members.length;
            if (unique) scan(text);
            else assert.equal(scanError(text).code, "ambiguous_json");
          },
        ),
      );
    },
  );
});

/** A JSON string literal with every code unit written as a \u escape. */
function escapeAll(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    out += "\\u" + text.charCodeAt(i).toString(16).padStart(4, "0");
  }
  return out + '"';
}

Deno.test("scanJson() refuses what strict JSON forbids", async (t) => {
  const cases: Record<string, [string | Uint8Array, number]> = {
    "a byte order mark": [new Uint8Array([0xef, 0xbb, 0xbf, 0x5b, 0x5d]), 0],
    "an escaped lone high surrogate": [`["\\ud800"]`, 2],
    "an escaped lone low surrogate": [`["\\udc00"]`, 2],
    "a high surrogate followed by a high surrogate": [`["\\ud800\\ud800"]`, 2],
    "a raw UTF-8 surrogate": [
      new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22]),
      1,
    ],
    "an overlong in a string": [new Uint8Array([0x22, 0xc0, 0xaf, 0x22]), 1],
    "a truncated sequence in a string": [
      new Uint8Array([0x22, 0xe2, 0x82, 0x22]),
      1,
    ],
    "a non-ASCII byte outside a string": [
      new Uint8Array([0x5b, 0xc3, 0xa9, 0x5d]),
      1,
    ],
    "a trailing comma": ["[1,]", 3],
    "a leading zero": ["[01]", 2],
    "a bare minus": ["[-]", 2],
    "a missing fraction": ["[1.]", 3],
    "a missing exponent": ["[1e+]", 4],
    "a raw control character": ['["a\tb"]', 3],
    "an unknown escape": ['["\\x"]', 2],
    "a short \\u escape": ['["\\u12"]', 4],
    "a second top-level value": ["1 2", 2],
    "an empty document": ["", 0],
    "only whitespace": [" \n", 2],
    "a single quote": ["['a']", 1],
    "a comment": ["[1 /* c */]", 3],
    "an unclosed object": ['{"a":1', 6],
    "a mismatched close": ["[1}", 2],
    "a missing colon": ['{"a" 1}', 5],
    "a non-string name": ["{1:2}", 1],
    "True with a capital": ["[True]", 1],
    "a truncated literal": ["[nul", 1],
    "a non-JSON whitespace": ["[\u00a01]", 1],
    "a vertical tab": ["[\v1]", 1],
  };
  for (const [name, [input, offset]] of Object.entries(cases)) {
    await t.step(`${name} is invalid_json at byte ${offset}`, () => {
      const error = scanError(input);
      assert.equal(error.code, "invalid_json");
      assert.equal(error.offset, offset);
      assert.match(error.message, /^Invalid JSON at byte \d+: [a-z]/);
    });
  }
});

Deno.test("JsonIndex.resolve() returns spans of original lexemes", async (t) => {
  const text =
    ` { "s" : "a\\"b\\u00e9" , "n":-1.50e+3,"t":true,"f":false,"z":null,` +
    `"o":{"":{"":[]}},"a":[ 1 , [ ] , { } ],"a\\/b":1,"\\u00e9":2,"e\\u0301":3 } `;
  const index = scan(text);

  await t.step("each kind is reported with its exact bytes", () => {
    const expected: [string, string, string][] = [
      ["", text.trim(), "object"],
      ["/s", `"a\\"b\\u00e9"`, "string"],
      ["/n", "-1.50e+3", "number"],
      ["/t", "true", "true"],
      ["/f", "false", "false"],
      ["/z", "null", "null"],
      ["/o", `{"":{"":[]}}`, "object"],
      ["/o/", `{"":[]}`, "object"],
      ["/o//", "[]", "array"],
      ["/a", "[ 1 , [ ] , { } ]", "array"],
      ["/a/0", "1", "number"],
      ["/a/1", "[ ]", "array"],
      ["/a/2", "{ }", "object"],
    ];
    for (const [pointer, lexemeText, kind] of expected) {
      assert.equal(lexeme(index, pointer), lexemeText, pointer);
      assert.equal(index.resolve(parsePointer(pointer)).kind, kind, pointer);
    }
  });

  await t.step("names written with escapes match their decoded tokens", () => {
    const names = [["/a~1b", "1"], ["/é", "2"], ["/e\u0301", "3"]] as const;
    for (const [pointer, text] of names) {
      assert.equal(lexeme(index, pointer), text, pointer);
    }
    assert.equal(resolveCode(index, "/\\u00e9"), "pointer_not_found");
  });

  await t.step(
    "missing members, indices out of range and steps into scalars are pointer_not_found",
    () => {
      for (
        const pointer of [
          "/x",
          "/a/3",
          "/a/99999999999999999999",
          "/s/0",
          "/n/x",
          "/o/a",
          "/o///0",
          "/\ud800",
        ]
      ) {
        assert.equal(resolveCode(index, pointer), "pointer_not_found", pointer);
      }
    },
  );

  await t.step("non-canonical array tokens are invalid_pointer", () => {
    for (const pointer of ["/a/01", "/a/-", "/a/+1", "/a/x", "/a/", "/a/ 1"]) {
      assert.equal(resolveCode(index, pointer), "invalid_pointer", pointer);
    }
  });

  await t.step("objects of any width find every member, escaped or not", () => {
    for (const size of [3, 40, 256, 257, 5000]) {
      for (const escaped of [false, true]) {
        const names = Array.from({ length: size }, (_, i) => `m/${i}~é`);
        const text = `{${
          names.map((name, i) =>
            `${
              escaped && i % 3 === 0 ? escapeAll(name) : JSON.stringify(name)
            }:${i}`
          ).join(",")
        }}`;
        const index = scan(text);
        for (let i = 0; i < size; i += Math.max(1, size >> 6)) {
          assert.equal(lexeme(index, formatPointer([names[i]!])), String(i));
        }
        assert.equal(
          lexeme(index, formatPointer([names[size - 1]!])),
          String(size - 1),
        );
        for (const missing of ["m/", `m/${size}~é`, "m/1~e", ""]) {
          assert.equal(
            resolveCode(index, formatPointer([missing])),
            "pointer_not_found",
            `${size} ${missing}`,
          );
        }
      }
    }
  });

  await t.step("a scalar document has only the root", () => {
    const scalar = scan(' "x" ');
    assert.deepEqual(scalar.resolve([]), { start: 1, end: 4, kind: "string" });
    assert.equal(resolveCode(scalar, "/0"), "pointer_not_found");
  });
});

Deno.test("decodeJsonString() decodes string values like JSON.parse", async (t) => {
  await t.step("every escape", () => {
    const text =
      `["\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\\ud83d\\ude00 plain é€😀"]`;
    const index = scan(text);
    assert.equal(
      decodeJsonString(index.bytes, index.resolve(["0"])),
      JSON.parse(text)[0],
    );
  });
  await t.step("a span that is not a string is a TypeError", () => {
    const index = scan("[1]");
    assert.throws(
      () => decodeJsonString(index.bytes, index.resolve(["0"])),
      TypeError,
    );
  });
  await t.step("random well-formed strings, escaped or not", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 40 }),
        fc.boolean(),
        (value, escape) => {
          const literal = escape ? escapeAll(value) : JSON.stringify(value);
          const index = scan(`{"k":${literal}}`);
          assert.equal(
            decodeJsonString(index.bytes, index.resolve(["k"])),
            value,
          );
          assert.equal(lexeme(index, "/k"), literal);
        },
      ),
    );
  });
});

Deno.test("scanJson() handles any depth without recursion", async (t) => {
  for (const depth of [1, 10_000, 1_000_000]) {
    await t.step(`${depth.toLocaleString("en")} nested arrays`, () => {
      const text = "[".repeat(depth) + "]".repeat(depth);
      const index = scan(text);
      assert.equal(index.valueCount, depth);
      if (depth <= 10_000) {
        assert.equal(lexeme(index, "/0".repeat(depth - 1)), "[]");
      }
      assert.equal(scanError("[".repeat(depth)).code, "invalid_json");
    });
  }
  await t.step("1,000,000 nested objects", () => {
    const depth = 1_000_000;
    const index = scan('{"a":'.repeat(depth) + "1" + "}".repeat(depth));
    assert.equal(index.valueCount, depth + 1);
  });
});

const SPACE = [" ", "\n", "\r\n", "\t", "  "];

/** Serialize with random whitespace and randomly escaped string contents. */
function layout(value: Json, next: () => number): string {
  const ws = () =>
    next() < 0.3 ? SPACE[Math.floor(next() * SPACE.length)]! : "";
  const str = (s: string) => next() < 0.2 ? escapeAll(s) : JSON.stringify(s);
  if (Array.isArray(value)) {
    return "[" + ws() + value.map((v) =>
      layout(v, next) + ws()
    ).join("," + ws()) + "]";
  }
  if (value !== null && typeof value === "object") {
    return "{" + ws() + Object.entries(value).map(([k, v]) =>
      str(k) + ws() + ":" + ws() + layout(v, next) + ws()
    ).join("," + ws()) + "}";
  }
  if (typeof value === "string") return str(value);
  return JSON.stringify(value);
}

Deno.test("every pointer into random documents agrees with JSON.parse and jsonpointer", () => {
  // Lone surrogates are refused by design (JSON.stringify escapes them as
  // \udXXX, its only \u escapes in that range), so they are left out here.
  const value = fc.jsonValue({ maxDepth: 5 }).filter((v) =>
    !/\\ud[89a-f]/i.test(JSON.stringify(v))
  ) as fc.Arbitrary<Json>;
  fc.assert(
    fc.property(value, fc.integer(), (generated, seed) => {
      const text = layout(generated, rng(seed));
      const index = scan(text);
      const document = JSON.parse(text) as Json;
      const pointers = pointersOf(document);
      assert.equal(index.valueCount, pointers.length);
      for (const tokens of pointers) {
        const pointer = formatPointer(tokens);
        assert.deepEqual(
          JSON.parse(lexeme(index, pointer)),
          oracleGet(document, pointer),
          pointer,
        );
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("scanJson() never accepts what JSON.parse refuses, and only throws JsonScanError", () => {
  const mutated = fc.tuple(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc.array(
      fc.tuple(
        fc.nat(),
        fc.constantFrom(
          "",
          "[",
          "]",
          "{",
          "}",
          ",",
          ":",
          '"',
          "\\",
          "0",
          "-",
          "e",
          ".",
          " ",
          "\u00e9",
          "\ud800",
          "t",
        ),
      ),
      { maxLength: 4 },
    ),
  ).map(([text, edits]) => {
    let out = text;
    for (const [at, insert] of edits) {
      const i = at % (out.length + 1);
      out = out.slice(0, i) + insert + out.slice(i + (insert === "" ? 1 : 0));
    }
    return out;
  });
  fc.assert(
    fc.property(fc.oneof(mutated, fc.string({ unit: "binary" })), (text) => {
      let accepted = true;
      try {
        scan(text);
      } catch (error) {
        assert.ok(error instanceof JsonScanError, String(error));
        accepted = false;
      }
      if (accepted) JSON.parse(text);
    }),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      try {
        scanJson(bytes);
      } catch (error) {
        assert.ok(error instanceof JsonScanError, String(error));
      }
    }),
  );
});

Deno.test("scanJson()'s index is at most 1.5× its document", async (t) => {
  await t.step("a generated 16 MiB document of 1.29 M values", () => {
    const bytes = generated();
    const index = scanJson(bytes);
    assert.ok(index.valueCount > 1_200_000, String(index.valueCount));
    assert.ok(
      index.byteLength <= 1.5 * bytes.length,
      `${index.byteLength} bytes of index for ${bytes.length} of JSON`,
    );
    // It still resolves across the whole document.
    const last = JSON.parse(decoder.decode(bytes)).length - 1;
    assert.equal(lexeme(index, `/${last}/id`), String(last));
  });
  await t.step(
    "a 16 MiB object of 740,000 members, name table included",
    () => {
      const bytes = wide();
      const index = scanJson(bytes);
      assert.equal(lexeme(index, "/member-739000"), "739000");
      assert.ok(
        index.byteLength <= 1.5 * bytes.length,
        String(index.byteLength),
      );
    },
  );
  await t.step("the nativejson-benchmark documents", async () => {
    for (const name of ["canada.json", "citm_catalog.json", "twitter.json"]) {
      const bytes = await Deno.readFile(NATIVE + name);
      const index = scanJson(bytes);
      assert.ok(
        index.byteLength <= 1.5 * bytes.length,
        `${name}: ${index.byteLength} for ${bytes.length}`,
      );
    }
  });
  await t.step("the count follows the typed arrays, not a guess", () => {
    const small = scan('[1, [2, 3], {"a": 4}]');
    // 3 containers × 12 bytes, child lists [3,·,·,·] [2,·,·] [1,·] × 4 bytes.
    assert.equal(small.byteLength, 3 * 12 + 9 * 4);
  });
});
