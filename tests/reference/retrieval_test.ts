import assert from "node:assert/strict";
import fc from "fast-check";
import { ResultStore } from "../../lib/store/result_store.ts";
import {
  MAX_READ_BYTES,
  Retrieval,
  type RetrievalAnswer,
} from "../../lib/reference/retrieval.ts";

type Reference = {
  result: string;
  sha256: string;
  select: Record<string, unknown>;
  rendering?: "text" | "json";
};

function ok(answer: RetrievalAnswer): Record<string, unknown> {
  assert.ok(answer.ok, answer.ok ? "" : `${answer.code}: ${answer.message}`);
  return answer.structured;
}

function code(answer: RetrievalAnswer): string {
  return answer.ok ? "ok" : answer.code;
}

async function storeOf(text: string): Promise<[Retrieval, Reference]> {
  const store = new ResultStore();
  const d = await store.put(text, { origin: "t", capture: "complete" });
  return [new Retrieval(store), d.reference as Reference];
}

/** Reads a reference and every `next` after it; returns the pieces. */
function readAll(retrieval: Retrieval, reference: Reference): string[] {
  const parts: string[] = [];
  let next: Reference | undefined = reference;
  while (next !== undefined) {
    const answer = ok(retrieval.read({ reference: next }));
    parts.push(
      (answer.selected_text ?? answer.selected_json) as string,
    );
    next = answer.next as Reference | undefined;
    if (next !== undefined) assert.equal(answer.truncated, true);
  }
  return parts;
}

Deno.test("Retrieval.read() answers a long selection in 8 KiB parts whose next references return every byte once", () => {
  fc.assert(
    fc.asyncProperty(
      fc.string({ unit: "binary", minLength: 0, maxLength: 30_000 }),
      async (text) => {
        const [retrieval, reference] = await storeOf(text);
        const parts = readAll(retrieval, reference);
        assert.equal(parts.join(""), text);
        for (const part of parts) {
          assert.ok(new TextEncoder().encode(part).length <= MAX_READ_BYTES);
        }
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("Retrieval.read() cuts on a character boundary and says the selection's size", async () => {
  const text = "€".repeat(5000); // 15,000 bytes, 3 per character
  const [retrieval, reference] = await storeOf(text);
  const first = ok(retrieval.read({ reference }));
  assert.equal(first.total_bytes, 15_000);
  assert.equal((first.selected_text as string).length, 2730); // 8,190 bytes
  assert.deepEqual((first.next as Reference).select, {
    kind: "bytes",
    start: 8190,
    end: 15_000,
  });
  const lines = ok(retrieval.read({
    reference: { ...reference, select: { kind: "bytes", start: 3, end: 9 } },
  }));
  assert.deepEqual(lines, { selected_text: "€€" });
});

Deno.test("Retrieval.read() continues a long JSON string decoded, never splitting an escape", async () => {
  const value = 'a\\\n\u00e9\ud83d\ude00"'.repeat(2000);
  const [retrieval, reference] = await storeOf(JSON.stringify({ v: value }));
  const first = ok(retrieval.read({
    reference: {
      ...reference,
      select: { kind: "json_pointer", pointer: "/v" },
    },
  }));
  assert.equal(first.truncated, true);
  const head = first.selected_text as string;
  assert.ok(value.startsWith(head), "the first part is the decoded head");
  assert.ok(head.isWellFormed(), "no surrogate pair is split");
  // The rest continues in the stored (escaped) bytes, up to the closing quote.
  const rest = readAll(retrieval, first.next as Reference).join("");
  assert.equal(JSON.parse(`"${rest}"`), value.slice(head.length));
});

Deno.test("Retrieval.find() answers lines, byte ranges and the innermost pointer, which reads back the value JSON.parse gives", async () => {
  const doc = {
    tree: [
      { name: "src", children: [{ name: "main.ts" }, { name: "util.ts" }] },
      { name: "README.md", "size~/": 12 },
    ],
  };
  const text = JSON.stringify(doc, null, 2);
  const [retrieval, reference] = await storeOf(text);
  const found = ok(retrieval.find({ reference, pattern: "util" }));
  assert.equal(found.total_matches, 1);
  const [hit] = found.matches as {
    line: number;
    start_byte: number;
    end_byte: number;
    pointer: string;
    text: string;
  }[];
  assert.equal(hit!.pointer, "/tree/0/children/1/name");
  assert.equal(
    hit!.line,
    text.slice(0, text.indexOf("util")).split("\n").length,
  );
  assert.equal(hit!.text.trim(), '"name": "util.ts"');
  assert.equal(
    text.slice(hit!.start_byte, hit!.end_byte),
    "util",
  );
  const value = ok(retrieval.read({
    reference: {
      ...reference,
      select: { kind: "json_pointer", pointer: hit!.pointer },
    },
  }));
  assert.equal(value.selected_text, doc.tree[0]!.children![1]!.name);

  // A match in a member name points at the member's value; escapes in names
  // come back escaped as RFC 6901 says.
  const key = ok(retrieval.find({ reference, pattern: "size~" }));
  assert.deepEqual(
    (key.matches as { pointer: string }[]).map((m) => m.pointer),
    ["/tree/1/size~0~1"],
  );
  // Between values: the container holding both.
  const both = ok(retrieval.find({
    reference,
    pattern: '"main.ts"\\s*},\\s*\\{',
    regex: true,
  }));
  assert.deepEqual(
    (both.matches as { pointer: string }[]).map((m) => m.pointer),
    ["/tree/0/children"],
  );
});

Deno.test("Retrieval.find() counts every match, answers max_matches of them, and runs hostile regexes in linear time", async () => {
  const text = "ab\n".repeat(1000);
  const [retrieval, reference] = await storeOf(text);
  const found = ok(retrieval.find({ reference, pattern: "b", max_matches: 3 }));
  assert.equal(found.total_matches, 1000);
  assert.equal(found.truncated, true);
  assert.deepEqual(
    (found.matches as { line: number; start_byte: number }[]).map((
      m,
    ) => [m.line, m.start_byte]),
    [[1, 1], [2, 4], [3, 7]],
  );
  // Catastrophic backtracking under a backtracking engine; RE2 is linear.
  const [evil, evilRef] = await storeOf("a".repeat(50_000) + "!");
  const none = ok(
    evil.find({ reference: evilRef, pattern: "(a+)+$", regex: true }),
  );
  assert.equal(none.total_matches, 0);
  // Text-only: a match never has a pointer.
  assert.equal(
    (found.matches as Record<string, unknown>[])[0]!.pointer,
    undefined,
  );
});

Deno.test("Retrieval.find() searches only the referenced selection, with offsets into the whole result", async () => {
  const text = "one x\ntwo x\nthree x\n";
  const [retrieval, reference] = await storeOf(text);
  const found = ok(retrieval.find({
    reference: { ...reference, select: { kind: "lines", start: 2, end: 3 } },
    pattern: "x",
  }));
  assert.deepEqual(
    (found.matches as { line: number; start_byte: number }[]).map((
      m,
    ) => [m.line, m.start_byte]),
    [[2, 10], [3, 18]],
  );
});

Deno.test("Retrieval refuses bad input with its code and changes nothing", async (t) => {
  const [retrieval, reference] = await storeOf('{"a": 1}');
  const cases: [string, RetrievalAnswer, string][] = [
    [
      "a wrong digest",
      retrieval.read({ reference: { ...reference, sha256: "0".repeat(64) } }),
      "digest_mismatch",
    ],
    [
      "an unknown id",
      retrieval.read({ reference: { ...reference, result: "result-9" } }),
      "unknown_result",
    ],
    [
      "an extra argument",
      retrieval.read({ reference, extra: 1 }),
      "invalid_arguments",
    ],
    ["no arguments", retrieval.read(undefined), "invalid_arguments"],
    [
      "a malformed reference",
      retrieval.read({ reference: { result: "x" } }),
      "invalid_reference",
    ],
    [
      "an empty pattern",
      retrieval.find({ reference, pattern: "" }),
      "invalid_pattern",
    ],
    [
      "a regex that does not parse",
      retrieval.find({ reference, pattern: "(a", regex: true }),
      "invalid_pattern",
    ],
    [
      "max_matches over 200",
      retrieval.find({ reference, pattern: "a", max_matches: 201 }),
      "invalid_arguments",
    ],
    [
      "a search with a wrong digest",
      retrieval.find({
        reference: { ...reference, sha256: "f".repeat(64) },
        pattern: "a",
      }),
      "digest_mismatch",
    ],
    ["a negative offset", retrieval.list({ offset: -1 }), "invalid_range"],
  ];
  for (const [name, answer, expected] of cases) {
    await t.step(name, () => assert.equal(code(answer), expected));
  }
  assert.deepEqual(ok(retrieval.read({ reference })), {
    selected_text: '{"a": 1}',
  });
});

Deno.test("Retrieval names an evicted result as evicted when its source says so", () => {
  const retrieval = new Retrieval({
    get: () => undefined,
    list: () => ({ results: [], next_offset: null }),
    evicted: (id) => id === "result-1",
  });
  const reference = {
    result: "result-1",
    sha256: "a".repeat(64),
    select: { kind: "whole" },
  };
  assert.equal(code(retrieval.read({ reference })), "result_evicted");
  assert.equal(
    code(retrieval.read({ reference: { ...reference, result: "result-2" } })),
    "unknown_result",
  );
});

Deno.test("Retrieval.value() answers the whole selection, digest-checked: text, or the JSON value a pointer selects", async () => {
  const store = new ResultStore();
  const rows = Array.from({ length: 3000 }, (_, i) => ({ i, s: "é" }));
  const d = await store.put(JSON.stringify({ rows }), {
    origin: "t",
    capture: "complete",
  });
  const retrieval = new Retrieval(store);
  const whole = retrieval.value({ result: d.result, sha256: d.sha256 });
  assert.ok(whole.ok);
  assert.equal(whole.value, JSON.stringify({ rows }));
  assert.ok(new TextEncoder().encode(whole.value as string).length > 8192);
  assert.deepEqual(
    retrieval.value({
      ...d.reference!,
      select: { kind: "json_pointer", pointer: "/rows" },
    }),
    { ok: true, value: rows },
  );
  assert.deepEqual(
    retrieval.value({
      ...d.reference!,
      select: { kind: "json_pointer", pointer: "/rows/7/s" },
    }),
    { ok: true, value: "é" },
  );
  const wrong = retrieval.value({ ...d.reference!, sha256: "0".repeat(64) });
  assert.equal(wrong.ok, false);
  assert.equal((wrong as { code: string }).code, "digest_mismatch");
});
