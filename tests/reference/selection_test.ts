import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type ResultReference,
  ResultStore,
} from "../../lib/store/result_store.ts";
import {
  jsonIndex,
  lineEnds,
  ReferenceFailureError,
  select,
  type SelectableRecord,
} from "../../lib/reference/selection.ts";
import { testdata } from "../_kit.ts";

const encoder = new TextEncoder();

async function stored(content: string | Uint8Array): Promise<SelectableRecord> {
  const store = new ResultStore();
  const d = await store.put(content, { origin: "test", capture: "complete" });
  return store.get(d.result!)!;
}

function ref(
  record: SelectableRecord,
  select: ResultReference["select"],
  rendering?: "text" | "json",
): ResultReference {
  return {
    result: record.id,
    sha256: record.sha256,
    select,
    ...(rendering === undefined ? {} : { rendering }),
  };
}

function failure(f: () => unknown): string {
  try {
    f();
  } catch (error) {
    assert.ok(
      error instanceof ReferenceFailureError,
      `not a ReferenceFailureError: ${error}`,
    );
    assert.ok(error instanceof RangeError);
    assert.doesNotMatch(error.message, /\.$/);
    return error.code;
  }
  assert.fail("expected a ReferenceFailureError");
}

Deno.test("select() returns the whole content with text rendering", async () => {
  const r = await stored("héllo\r\nworld");
  assert.deepEqual(select(r, ref(r, { kind: "whole" })), {
    text: "héllo\r\nworld",
  });
  assert.deepEqual(select(r, ref(r, { kind: "whole" }, "text")), {
    text: "héllo\r\nworld",
  });
});

Deno.test("select() checks the reference before resolving it", async (t) => {
  const r = await stored("abc");
  await t.step("a wrong digest is digest_mismatch", () => {
    assert.equal(
      failure(() =>
        select(r, { ...ref(r, { kind: "whole" }), sha256: "0".repeat(64) })
      ),
      "digest_mismatch",
    );
  });
  await t.step("whole, bytes and lines need text rendering", () => {
    for (
      const s of [
        { kind: "whole" },
        { kind: "bytes", start: 0, end: 1 },
        { kind: "lines", start: 1, end: 1 },
      ] as const
    ) {
      assert.equal(
        failure(() => select(r, ref(r, s, "json"))),
        "invalid_reference",
      );
    }
  });
  await t.step("malformed references are invalid_reference", () => {
    const good = ref(r, { kind: "whole" });
    const bad: unknown[] = [
      null,
      "result-1",
      { ...good, extra: 1 },
      { ...good, select: { kind: "whole", extra: 1 } },
      { ...good, select: { kind: "everything" } },
      { ...good, select: { kind: "bytes", start: 0 } },
      { ...good, select: { kind: "bytes", start: 0.5, end: 1 } },
      { ...good, select: { kind: "bytes", start: "0", end: 1 } },
      { ...good, select: { kind: "json_pointer", pointer: 1 } },
      { ...good, rendering: "html" },
      { ...good, sha256: good.sha256.toUpperCase() },
      { ...good, sha256: "abc" },
      { result: "result-1", select: { kind: "whole" } },
    ];
    for (const value of bad) {
      assert.equal(
        failure(() => select(r, value)),
        "invalid_reference",
        JSON.stringify(value),
      );
    }
  });
  await t.step("a reference naming another record is unknown_result", () => {
    assert.equal(
      failure(() =>
        select(r, { ...ref(r, { kind: "whole" }), result: "result-9" })
      ),
      "unknown_result",
    );
  });
});

Deno.test("select() picks half-open byte ranges on character boundaries", async (t) => {
  const r = await stored("a€b"); // a=0, €=1..4, b=4
  await t.step("ranges on boundaries", () => {
    assert.deepEqual(select(r, ref(r, { kind: "bytes", start: 0, end: 1 })), {
      text: "a",
    });
    assert.deepEqual(select(r, ref(r, { kind: "bytes", start: 1, end: 4 })), {
      text: "€",
    });
    assert.deepEqual(select(r, ref(r, { kind: "bytes", start: 4, end: 5 })), {
      text: "b",
    });
    assert.deepEqual(select(r, ref(r, { kind: "bytes", start: 5, end: 5 })), {
      text: "",
    });
    assert.deepEqual(select(r, ref(r, { kind: "bytes", start: 0, end: 5 })), {
      text: "a€b",
    });
  });
  await t.step("an end inside a character is not_char_boundary", () => {
    for (const [start, end] of [[0, 2], [2, 4], [1, 3], [3, 5]]) {
      assert.equal(
        failure(() =>
          select(r, ref(r, { kind: "bytes", start: start!, end: end! }))
        ),
        "not_char_boundary",
      );
    }
  });
  await t.step("out-of-range or reversed ranges are invalid_range", () => {
    for (const [start, end] of [[0, 6], [-1, 2], [3, 1], [6, 6], [2, 1]]) {
      assert.equal(
        failure(() =>
          select(r, ref(r, { kind: "bytes", start: start!, end: end! }))
        ),
        "invalid_range",
      );
    }
  });
  await t.step("the message says what and why", () => {
    try {
      select(r, ref(r, { kind: "bytes", start: 2, end: 4 }));
    } catch (error) {
      assert.equal(
        (error as Error).message,
        `Cannot select bytes 2..4 of ${r.id}: 2 is inside a UTF-8 character`,
      );
    }
  });
});

Deno.test("select() picks inclusive lines with their original endings", async (t) => {
  await t.step("LF, CRLF and an unterminated last line", async () => {
    const r = await stored("one\r\ntwo\nthree");
    const lines = (start: number, end: number) =>
      select(r, ref(r, { kind: "lines", start, end }));
    assert.deepEqual(lines(1, 1), { text: "one\r\n" });
    assert.deepEqual(lines(2, 2), { text: "two\n" });
    assert.deepEqual(lines(3, 3), { text: "three" });
    assert.deepEqual(lines(1, 3), { text: "one\r\ntwo\nthree" });
    assert.deepEqual(lines(2, 3), { text: "two\nthree" });
    assert.equal(failure(() => lines(4, 4)), "invalid_range");
    assert.equal(failure(() => lines(0, 1)), "invalid_range");
    assert.equal(failure(() => lines(3, 2)), "invalid_range");
  });
  await t.step("the last line keeps its terminator", async () => {
    const r = await stored("a\nb\r\n");
    assert.equal(lineEnds(r.bytes).length, 2);
    assert.deepEqual(select(r, ref(r, { kind: "lines", start: 2, end: 2 })), {
      text: "b\r\n",
    });
    assert.equal(
      failure(() => select(r, ref(r, { kind: "lines", start: 3, end: 3 }))),
      "invalid_range",
    );
  });
  await t.step("empty lines count and empty content has no lines", async () => {
    const r = await stored("\n\nx");
    assert.deepEqual(select(r, ref(r, { kind: "lines", start: 2, end: 2 })), {
      text: "\n",
    });
    const empty = await stored("");
    assert.equal(lineEnds(empty.bytes).length, 0);
    assert.equal(
      failure(() =>
        select(empty, ref(empty, { kind: "lines", start: 1, end: 1 }))
      ),
      "invalid_range",
    );
  });
});

Deno.test("select() resolves JSON pointers", async (t) => {
  const doc =
    '{"a": [1, 2.50, "x\\u00e9\\n"], "b": {"c/d": 12345678901234567890, "~": null}, "s": "plain"}';
  const r = await stored(doc);
  const pointer = (p: string, rendering?: "text" | "json") =>
    select(r, ref(r, { kind: "json_pointer", pointer: p }, rendering));
  await t.step("json rendering returns the original lexeme", () => {
    assert.deepEqual(pointer("/a/1", "json"), { json: "2.50" });
    assert.deepEqual(pointer("/b/c~1d", "json"), {
      json: "12345678901234567890",
    });
    assert.deepEqual(pointer("/a/2", "json"), { json: '"x\\u00e9\\n"' });
    assert.deepEqual(pointer("/b/~0", "json"), { json: "null" });
    assert.deepEqual(pointer("", "json"), { json: doc });
  });
  await t.step("text rendering decodes a string and is the default", () => {
    assert.deepEqual(pointer("/a/2", "text"), { text: "xé\n" });
    assert.deepEqual(pointer("/s"), { text: "plain" });
  });
  await t.step("text rendering of anything else is not_a_string", () => {
    for (const p of ["/a/0", "/a", "/b", "/b/~0", ""]) {
      assert.equal(failure(() => pointer(p)), "not_a_string", p);
    }
  });
  await t.step("missing members and indices are pointer_not_found", () => {
    for (const p of ["/z", "/a/3", "/s/0", "/b/c~1d/x"]) {
      assert.equal(failure(() => pointer(p, "json")), "pointer_not_found", p);
    }
  });
  await t.step(
    "bad pointer syntax and non-canonical indices are invalid_pointer",
    () => {
      for (const p of ["a", "/a/01", "/a/-", "/~2"]) {
        assert.equal(failure(() => pointer(p, "json")), "invalid_pointer", p);
      }
    },
  );
  await t.step("the document must be strict JSON", async () => {
    const bad = await stored('{"a": 1,}');
    const dup = await stored('{"a": 1, "b": {"x": 1, "x": 2}}');
    const p = (rec: SelectableRecord) =>
      select(rec, ref(rec, { kind: "json_pointer", pointer: "/a" }, "json"));
    assert.equal(failure(() => p(bad)), "invalid_json");
    assert.equal(failure(() => p(dup)), "ambiguous_json");
    assert.equal(
      failure(() => p(dup)),
      "ambiguous_json",
      "the cached failure repeats",
    );
  });
  await t.step("each content is scanned once and the index reused", () => {
    pointer("/s");
    const index = jsonIndex(r.bytes);
    pointer("/a/0", "json");
    assert.equal(jsonIndex(r.bytes), index);
  });
});

Deno.test("select() enforces maxBytes with answer_too_large", async () => {
  const r = await stored(
    '{"s": "' + "a".repeat(100) + '", "e": "' + "\\n".repeat(60) + '"}\n',
  );
  const big = (s: ResultReference["select"], rendering?: "text" | "json") =>
    failure(() => select(r, ref(r, s, rendering), { maxBytes: 50 }));
  assert.equal(big({ kind: "whole" }), "answer_too_large");
  assert.equal(big({ kind: "bytes", start: 0, end: 51 }), "answer_too_large");
  assert.equal(big({ kind: "lines", start: 1, end: 1 }), "answer_too_large");
  assert.equal(
    big({ kind: "json_pointer", pointer: "/s" }),
    "answer_too_large",
  );
  assert.equal(
    big({ kind: "json_pointer", pointer: "/s" }, "json"),
    "answer_too_large",
  );
  // 120 bytes of lexeme decode to 60 bytes of text: measured after decoding.
  assert.equal(
    big({ kind: "json_pointer", pointer: "/e" }),
    "answer_too_large",
  );
  assert.deepEqual(
    select(r, ref(r, { kind: "json_pointer", pointer: "/e" }), {
      maxBytes: 60,
    }),
    { text: "\n".repeat(60) },
  );
  assert.deepEqual(
    select(r, ref(r, { kind: "bytes", start: 0, end: 50 }), { maxBytes: 50 })
      .constructor,
    Object,
  );
});

Deno.test("Adjacent selections concatenate to the whole (property)", async (t) => {
  await t.step("byte selections split at character boundaries", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "grapheme", maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (text, cuts) => {
          const r = await stored(text);
          const chars = [...text];
          const bounds = [
            0,
            ...cuts.map((c) => c % (chars.length + 1)).sort((a, b) => a - b),
            chars.length,
          ];
          const offsets = bounds.map((n) =>
            encoder.encode(chars.slice(0, n).join("")).length
          );
          let joined = "";
          for (let i = 0; i + 1 < offsets.length; i++) {
            const s = select(
              r,
              ref(r, {
                kind: "bytes",
                start: offsets[i]!,
                end: offsets[i + 1]!,
              }),
            );
            joined += (s as { text: string }).text;
          }
          assert.equal(joined, text);
        },
      ),
      { numRuns: 200 },
    );
  });
  await t.step("line selections split between lines", async () => {
    const line = fc.tuple(
      fc.string({ unit: "grapheme", maxLength: 8 }).map((s) =>
        s.replace(/[\r\n]/g, "")
      ),
      fc.constantFrom("\n", "\r\n"),
    ).map(([body, end]) => body + end);
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (lines, dropLast, cuts) => {
          if (dropLast) {
            lines[lines.length - 1] = lines.at(-1)!.replace(/\r?\n$/, "");
          }
          if (lines.at(-1) === "") lines.pop();
          const text = lines.join("");
          const r = await stored(text);
          const count = lineEnds(r.bytes).length;
          assert.equal(count, lines.length);
          if (count === 0) return;
          const starts = [...new Set([1, ...cuts.map((c) => 1 + (c % count))])]
            .sort((a, b) => a - b);
          let joined = "";
          for (let i = 0; i < starts.length; i++) {
            const end = i + 1 < starts.length ? starts[i + 1]! - 1 : count;
            const s = select(
              r,
              ref(r, { kind: "lines", start: starts[i]!, end }),
            );
            joined += (s as { text: string }).text;
          }
          assert.equal(joined, text);
        },
      ),
      { numRuns: 200 },
    );
  });
});

interface KuhnLine {
  line: number;
  start: number;
  end_excl_newline: number;
  valid_utf8: boolean;
}

Deno.test("Kuhn's UTF-8 stress test: every line stored or refused, and selected exactly", async (t) => {
  const dir = testdata("kuhn_UTF-8-test");
  const file = await Deno.readFile(`${dir}/UTF-8-test.txt`);
  const index = JSON.parse(
    await Deno.readTextFile(`${dir}/derived/kuhn_lines.json`),
  ) as {
    line_count: number;
    all_lines: KuhnLine[];
  };
  assert.equal(index.all_lines.length, 300);

  await t.step("the file as a whole is refused", async () => {
    const store = new ResultStore();
    await assert.rejects(
      store.put(file, { origin: "kuhn", capture: "complete" }),
      (error: unknown) => (error as { code?: string }).code === "invalid_utf8",
    );
    assert.equal(store.count, 0);
  });

  await t.step(
    "each line alone is accepted or refused as the index says",
    async () => {
      const wrong: string[] = [];
      let valid = 0;
      for (const entry of index.all_lines) {
        const end = Math.min(entry.end_excl_newline + 1, file.length);
        const bytes = file.subarray(entry.start, end);
        const content = bytes.subarray(0, entry.end_excl_newline - entry.start);
        const store = new ResultStore();
        let accepted = true;
        let d;
        try {
          d = await store.put(bytes, {
            origin: `kuhn line ${entry.line}`,
            capture: "complete",
          });
        } catch (error) {
          assert.equal((error as { code?: string }).code, "invalid_utf8");
          accepted = false;
        }
        if (accepted !== entry.valid_utf8) {
          wrong.push(
            `line ${entry.line}: expected ${
              entry.valid_utf8 ? "accept" : "refuse"
            }`,
          );
          continue;
        }
        if (!accepted) {
          assert.equal(store.count, 0);
          continue;
        }
        valid++;
        const r = store.get(d!.result!)!;
        const expected = new TextDecoder("utf-8", { fatal: true }).decode(
          content,
        );
        const bytesSel = select(
          r,
          ref(r, { kind: "bytes", start: 0, end: content.length }),
        );
        const lineSel = select(r, ref(r, { kind: "lines", start: 1, end: 1 }));
        const whole = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        if ((bytesSel as { text: string }).text !== expected) {
          wrong.push(
            `line ${entry.line}: bytes`,
          );
        }
        if ((lineSel as { text: string }).text !== whole) {
          wrong.push(
            `line ${entry.line}: lines`,
          );
        }
      }
      assert.deepEqual(wrong, []);
      assert.ok(valid > 200 && valid < 300, `valid lines: ${valid}`);
    },
  );
});

Deno.test("select() returns a byte-order mark exactly as stored", async (t) => {
  const bom = "\ufeff";
  await t.step("a whole selection keeps a leading BOM", async () => {
    const r = await stored(`${bom}{}`);
    assert.deepEqual(select(r, ref(r, { kind: "whole" })), {
      text: `${bom}{}`,
    });
  });
  await t.step(
    "byte and line selections starting at a BOM keep it",
    async () => {
      const r = await stored(`a\n${bom}b\n`);
      assert.deepEqual(select(r, ref(r, { kind: "bytes", start: 2, end: 6 })), {
        text: `${bom}b`,
      });
      assert.deepEqual(select(r, ref(r, { kind: "lines", start: 2, end: 2 })), {
        text: `${bom}b\n`,
      });
    },
  );
  await t.step(
    "a JSON string value beginning with a BOM decodes with it",
    async () => {
      const r = await stored(`{"s": "${bom}x", "t": "\\n${bom}y"}`);
      const pointer = (p: string) => ({
        kind: "json_pointer" as const,
        pointer: p,
      });
      assert.deepEqual(select(r, ref(r, pointer("/s"))), { text: `${bom}x` });
      assert.deepEqual(select(r, ref(r, pointer("/t"))), { text: `\n${bom}y` });
      assert.deepEqual(select(r, ref(r, pointer("/s"), "json")), {
        json: `"${bom}x"`,
      });
    },
  );
  await t.step(
    "a document that starts with a BOM is not strict JSON",
    async () => {
      const r = await stored(`${bom}{"a": 1}`);
      assert.equal(
        failure(() =>
          select(r, ref(r, { kind: "json_pointer", pointer: "/a" }))
        ),
        "invalid_json",
      );
    },
  );
});
