import assert from "node:assert/strict";
import fc from "fast-check";
import {
  arrayIndexOf,
  formatPointer,
  parsePointer,
  PointerError,
} from "../../lib/reference/pointer.ts";
import { scanJson } from "../../lib/reference/json_scanner.ts";
import { testdata } from "../_kit.ts";

const RFC = testdata("rfc6901/");
const SYNTAX = testdata("json-pointer-syntax/");

interface Vector {
  pointer: string;
  expected?: unknown;
  expected_error?: boolean;
  document?: unknown;
}
interface Vectors {
  document: unknown;
  json_string_representation_section5: Vector[];
  uri_fragment_representation_section6: Vector[];
  derived_from_rfc_prose_not_verbatim_examples: Vector[];
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof PointerError, String(error));
    assert.ok(error instanceof SyntaxError);
    return error.code;
  }
  return "ok";
}

/** Resolve `pointer` in `bytes` and parse the lexeme it addresses. */
function lookup(bytes: Uint8Array, pointer: string): unknown {
  const span = scanJson(bytes).resolve(parsePointer(pointer));
  return JSON.parse(decoder.decode(bytes.subarray(span.start, span.end)));
}

Deno.test("parsePointer() accepts and rejects every json-pointer-syntax case", async () => {
  const { cases }: { cases: { pointer: string; valid_syntax: boolean }[] } =
    JSON.parse(
      await Deno.readTextFile(SYNTAX + "derived_pointer_syntax_cases.json"),
    );
  assert.equal(cases.length, 34);
  const wrong = cases.filter(({ pointer, valid_syntax }) =>
    (codeOf(() => parsePointer(pointer)) === "ok") !== valid_syntax
  ).map(({ pointer }) => JSON.stringify(pointer));
  assert.deepEqual(wrong, [], `misclassified: ${wrong.join(", ")}`);
  for (const { pointer, valid_syntax } of cases) {
    if (!valid_syntax) {
      assert.equal(codeOf(() => parsePointer(pointer)), "invalid_pointer");
    }
  }
});

Deno.test("pointers resolve every RFC 6901 vector", async (t) => {
  const vectors: Vectors = JSON.parse(
    await Deno.readTextFile(RFC + "rfc6901_vectors.json"),
  );
  const bytes = await Deno.readFile(RFC + "rfc6901_example_document.json");
  assert.deepEqual(JSON.parse(decoder.decode(bytes)), vectors.document);

  await t.step(
    "section 5 string-form pointers give the expected values",
    () => {
      for (const vector of vectors.json_string_representation_section5) {
        assert.deepEqual(
          lookup(bytes, vector.pointer),
          vector.expected,
          vector.pointer,
        );
      }
    },
  );

  await t.step("section 6 URI fragments are refused as invalid_pointer", () => {
    for (const vector of vectors.uri_fragment_representation_section6) {
      assert.equal(
        codeOf(() => parsePointer(vector.pointer)),
        "invalid_pointer",
        vector.pointer,
      );
    }
  });

  await t.step(
    "the RFC's error conditions are errors, and ~01 decodes to ~1",
    () => {
      const expectedCodes: Record<string, string> = {
        "/foo/-": "invalid_pointer",
        "/foo/2": "pointer_not_found",
        "/foo/01": "invalid_pointer",
        "/foo/00": "invalid_pointer",
        "/foo/+1": "invalid_pointer",
        "/foo/bar": "invalid_pointer",
        "/nope": "pointer_not_found",
        "/foo/0/x": "pointer_not_found",
        "foo": "invalid_pointer",
        "/m~2n": "invalid_pointer",
        "/m~": "invalid_pointer",
      };
      for (
        const vector of vectors.derived_from_rfc_prose_not_verbatim_examples
      ) {
        const doc = vector.document === undefined
          ? bytes
          : encoder.encode(JSON.stringify(vector.document));
        if (vector.expected_error) {
          assert.equal(
            codeOf(() => lookup(doc, vector.pointer)),
            expectedCodes[vector.pointer],
            vector.pointer,
          );
        } else {
          assert.deepEqual(
            lookup(doc, vector.pointer),
            vector.expected,
            vector.pointer,
          );
        }
      }
    },
  );
});

Deno.test("parsePointer() decodes tokens strictly", async (t) => {
  await t.step("the empty pointer is the whole document", () => {
    assert.deepEqual(parsePointer(""), []);
  });
  await t.step("empty tokens are kept", () => {
    assert.deepEqual(parsePointer("/"), [""]);
    assert.deepEqual(parsePointer("//a/"), ["", "a", ""]);
  });
  await t.step("~1 and ~0 decode in that order", () => {
    assert.deepEqual(parsePointer("/~01/~10/a~1b~0c"), ["~1", "/0", "a/b~c"]);
  });
  await t.step("any other ~ is invalid_pointer", () => {
    for (const bad of ["/~", "/~2", "/a~", "/~~", "/~/", "/~a", "#/a", "a"]) {
      assert.equal(codeOf(() => parsePointer(bad)), "invalid_pointer", bad);
    }
  });
  await t.step("formatPointer() inverts parsePointer() for any tokens", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" })), (tokens) => {
        assert.deepEqual(parsePointer(formatPointer(tokens)), tokens);
      }),
    );
  });
});

Deno.test("arrayIndexOf() accepts only canonical array indices", () => {
  assert.equal(arrayIndexOf("0"), 0);
  assert.equal(arrayIndexOf("7"), 7);
  assert.equal(arrayIndexOf("120"), 120);
  assert.equal(arrayIndexOf("99999999999999999999"), Number.MAX_SAFE_INTEGER);
  for (
    const bad of ["", "-", "01", "00", "+1", "1e3", " 1", "1 ", "0x1", "-1"]
  ) {
    assert.equal(arrayIndexOf(bad), -1, bad);
  }
  fc.assert(
    fc.property(fc.nat(), (n) => arrayIndexOf(String(n)) === n),
  );
});
