import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import {
  type ResultReference,
  ResultStore,
} from "../../lib/store/result_store.ts";
import {
  failureAnswer,
  type HistoryItem,
  type HistorySource,
  isLookupRequest,
  type LookupAnswer,
  LookupBudgetError,
  LookupSession,
} from "../../lib/reference/lookup_session.ts";
import type { SelectableRecord } from "../../lib/reference/selection.ts";

const encoder = new TextEncoder();
const opts = { origin: "repository.inspect f", capture: "complete" } as const;

function escapedBytes(answer: unknown): number {
  return encoder.encode(JSON.stringify(answer)).length;
}

/** The data an answer returns: an escaped string without quotes, a whole page, nothing for a failure. */
function escapedData(answer: LookupAnswer): number {
  if ("lookup_failed" in answer) return 0;
  if ("selected_text" in answer) return escapedBytes(answer.selected_text) - 2;
  if ("selected_json" in answer) return escapedBytes(answer.selected_json) - 2;
  return escapedBytes(answer);
}

function failed(answer: LookupAnswer): string {
  assert.ok(
    "lookup_failed" in answer,
    `expected a failure, got ${JSON.stringify(answer).slice(0, 200)}`,
  );
  const code = answer.lookup_failed.split(":")[0]!;
  return code;
}

async function setup(
  contents: string[] = ["alpha\nbeta\n", '{"k": [1, "two"]}'],
) {
  const results = new ResultStore();
  const refs: ResultReference[] = [];
  for (const c of contents) refs.push((await results.put(c, opts)).reference!);
  return { results, refs };
}

Deno.test("isLookupRequest() recognises exactly the four one-key shapes", () => {
  for (
    const key of [
      "$read_result",
      "$list_results",
      "$read_history",
      "$list_history",
    ]
  ) {
    assert.equal(isLookupRequest({ [key]: 0 }), true, key);
  }
  for (
    const value of [
      null,
      undefined,
      0,
      "x",
      [],
      [{ $list_results: 0 }],
      {},
      { paths: [] },
      {
        $list_results: 0,
        $read_result: {},
      },
      { $list_results: 0, extra: 1 },
      { $other: 0 },
    ]
  ) {
    assert.equal(isLookupRequest(value), false, JSON.stringify(value));
  }
});

Deno.test("LookupSession answers reads with selected text or JSON", async (t) => {
  const { results, refs } = await setup();
  const session = new LookupSession({ results, stage: "arguments" });
  await t.step("$read_result with text rendering", async () => {
    assert.deepEqual(
      await session.answer({
        $read_result: {
          ...refs[0]!,
          select: { kind: "lines", start: 2, end: 2 },
        },
      }),
      { selected_text: "beta\n" },
    );
  });
  await t.step(
    "$read_result with json rendering returns the lexeme as a string",
    async () => {
      const answer = await session.answer({
        $read_result: {
          ...refs[1]!,
          select: { kind: "json_pointer", pointer: "/k" },
          rendering: "json",
        },
      });
      assert.deepEqual(answer, { selected_json: '[1, "two"]' });
    },
  );
  await t.step("counters track lookups, retrievals and answer bytes", () => {
    assert.equal(session.used, 2);
    assert.equal(session.retrievals, 2);
    assert.equal(
      session.dataBytes,
      // `beta\n` escapes to 6 bytes, `[1, \"two\"]` to 12; quotes and wrappers do not count.
      6 + 12,
    );
    assert.equal(session.stage, "arguments");
  });
});

Deno.test("LookupSession answers failures with their wire-format codes, and they count", async (t) => {
  const { results, refs } = await setup([
    "a€b\nline two\n",
    '{"a": 1, "a": 2}',
    "[1, 2]",
  ]);
  const [text, dup, arr] = refs as [
    ResultReference,
    ResultReference,
    ResultReference,
  ];
  const cases: [string, unknown][] = [
    ["unknown_result", { $read_result: { ...text, result: "result-99" } }],
    ["digest_mismatch", { $read_result: { ...text, sha256: "f".repeat(64) } }],
    ["invalid_reference", { $read_result: { ...text, extra: true } }],
    ["invalid_range", {
      $read_result: { ...text, select: { kind: "bytes", start: 0, end: 99 } },
    }],
    ["not_char_boundary", {
      $read_result: { ...text, select: { kind: "bytes", start: 0, end: 2 } },
    }],
    ["invalid_pointer", {
      $read_result: {
        ...arr,
        select: { kind: "json_pointer", pointer: "/01" },
      },
    }],
    ["pointer_not_found", {
      $read_result: { ...arr, select: { kind: "json_pointer", pointer: "/2" } },
    }],
    ["invalid_json", {
      $read_result: { ...text, select: { kind: "json_pointer", pointer: "" } },
    }],
    ["ambiguous_json", {
      $read_result: { ...dup, select: { kind: "json_pointer", pointer: "/a" } },
    }],
    ["not_a_string", {
      $read_result: { ...arr, select: { kind: "json_pointer", pointer: "/0" } },
    }],
    ["request_too_large", {
      $read_result: { ...text, result: "x".repeat(5000) },
    }],
    ["not_available", { $read_history: text }],
    ["not_available", { $list_history: 0 }],
    ["invalid_reference", { $list_results: "0" }],
    ["invalid_range", { $list_results: -1 }],
    ["invalid_reference", { $list_results: 0, more: 1 }],
    ["invalid_reference", "not an object"],
  ];
  for (const [code, request] of cases) {
    await t.step(
      `${code}: ${JSON.stringify(request).slice(0, 70)}`,
      async () => {
        const session = new LookupSession({ results, stage: "selection" });
        const answer = await session.answer(request);
        assert.equal(failed(answer), code);
        assert.deepEqual(Object.keys(answer), ["lookup_failed"]);
        assert.match(
          (answer as { lookup_failed: string }).lookup_failed,
          /^[a-z_]+: [A-Z]/,
        );
        assert.equal(session.used, 1);
        assert.equal(session.retrievals, 0);
        assert.equal(session.dataBytes, 0);
      },
    );
  }
  await t.step(
    "a request of exactly 4,096 bytes is still answered",
    async () => {
      const session = new LookupSession({ results, stage: "selection" });
      const base = JSON.stringify({ $read_result: { ...text, result: "" } });
      const request = {
        $read_result: { ...text, result: "r".repeat(4096 - base.length) },
      };
      assert.equal(encoder.encode(JSON.stringify(request)).length, 4096);
      assert.equal(failed(await session.answer(request)), "unknown_result");
    },
  );
});

Deno.test("LookupSession limits each answer to 8 KiB of raw selected data", async () => {
  const body = "x".repeat(8192) + "y";
  const { results, refs } = await setup([
    body,
    JSON.stringify({ s: "é".repeat(4097) }),
  ]);
  const session = new LookupSession({ results, stage: "arguments" });
  const whole = await session.answer({ $read_result: refs[0] });
  assert.equal(failed(whole), "answer_too_large");
  assert.deepEqual(
    await session.answer({
      $read_result: {
        ...refs[0]!,
        select: { kind: "bytes", start: 1, end: 8193 },
      },
    }),
    { selected_text: "x".repeat(8191) + "y" },
  );
  // 4,097 × "é" is 8,194 bytes of text: one byte too many after decoding.
  assert.equal(
    failed(
      await session.answer({
        $read_result: {
          ...refs[1]!,
          select: { kind: "json_pointer", pointer: "/s" },
        },
      }),
    ),
    "answer_too_large",
  );
  assert.equal(session.used, 3);
  assert.equal(session.retrievals, 1);
});

Deno.test("LookupSession caps all answers of a stage at 64 KiB after JSON escaping", async (t) => {
  await t.step(
    "eight plain 8,192-byte reads fit exactly: only the escaped data counts",
    async () => {
      const { results, refs } = await setup(["a".repeat(8192)]);
      const session = new LookupSession({ results, stage: "arguments" });
      for (let i = 0; i < 8; i++) {
        const answer = await session.answer({ $read_result: refs[0] });
        assert.ok(
          "selected_text" in answer,
          JSON.stringify(answer).slice(0, 80),
        );
      }
      assert.equal(session.retrievals, 8);
      assert.equal(session.dataBytes, 65536);
    },
  );
  await t.step(
    "a read past 64 KiB of data fails with budget_exhausted and still counts",
    async () => {
      const { results, refs } = await setup(["a".repeat(8192), "b"]);
      const session = new LookupSession({ results, stage: "arguments" });
      for (let i = 0; i < 7; i++) {
        await session.answer({ $read_result: refs[0] });
      }
      // Failures return no data, so they leave the budget as it was.
      failed(
        await session.answer({ $read_result: { ...refs[0]!, result: "x" } }),
      );
      assert.equal(session.dataBytes, 7 * 8192);
      assert.equal(session.used, 8);
      const { results: more, refs: moreRefs } = await setup([
        "a".repeat(8192),
        "\u0001".repeat(1366),
      ]);
      const heavy = new LookupSession({ results: more, stage: "selection" });
      for (let i = 0; i < 7; i++) {
        await heavy.answer({ $read_result: moreRefs[0] });
      }
      // 1,366 control characters escape to 8,196 bytes: 4 too many.
      assert.equal(
        failed(await heavy.answer({ $read_result: moreRefs[1] })),
        "budget_exhausted",
      );
      assert.equal(heavy.dataBytes, 7 * 8192);
    },
  );
  await t.step(
    "escape-heavy answers run out before eight lookups",
    async () => {
      // 8,000 control characters escape to 48,000 bytes each.
      const { results, refs } = await setup(["\u0001".repeat(8000)]);
      const session = new LookupSession({ results, stage: "arguments" });
      const first = await session.answer({ $read_result: refs[0] });
      assert.ok("selected_text" in first);
      const second = await session.answer({ $read_result: refs[0] });
      assert.equal(failed(second), "budget_exhausted");
      const small = await session.answer({
        $read_result: {
          ...refs[0]!,
          select: { kind: "bytes", start: 0, end: 100 },
        },
      });
      assert.ok("selected_text" in small);
      assert.ok(session.dataBytes <= 65536);
    },
  );
  await t.step("the total never passes 64 KiB, whatever the mix", async () => {
    const { results, refs } = await setup([
      "\u0001".repeat(8192),
      "a".repeat(8192),
      "é".repeat(4096),
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(2), fc.nat(8192), fc.boolean()), {
          minLength: 8,
          maxLength: 8,
        }),
        async (picks) => {
          const session = new LookupSession({ results, stage: "selection" });
          let total = 0;
          for (const [which, size, bad] of picks) {
            const r = refs[which]!;
            const end = which === 2 ? 2 * Math.floor(size / 2) : size;
            const answer = await session.answer({
              $read_result: bad
                ? { ...r, result: "nope" }
                : { ...r, select: { kind: "bytes", start: 0, end } },
            });
            total += escapedData(answer);
          }
          assert.equal(session.dataBytes, total);
          assert.ok(total <= 65536, `total ${total}`);
        },
      ),
      { numRuns: 60 },
    );
  });
  await t.step("failure answers stay short", () => {
    const answer = failureAnswer("invalid_reference", "\u0000".repeat(1000));
    assert.ok(escapedBytes(answer) <= 320);
    assert.match(answer.lookup_failed, /^invalid_reference: .*…$/);
    assert.equal(
      failureAnswer("unknown_result", "Short").lookup_failed,
      "unknown_result: Short",
    );
  });
});

Deno.test("LookupSession refuses the ninth lookup with LookupBudgetError", async (t) => {
  for (const stage of ["selection", "arguments"] as const) {
    await t.step(stage, async () => {
      const { results, refs } = await setup();
      const session = new LookupSession({ results, stage });
      for (let i = 0; i < 8; i++) {
        await session.answer(
          i % 2 === 0 ? { $read_result: refs[0] } : { $bogus: i },
        );
      }
      assert.equal(session.used, 8);
      await assert.rejects(
        session.answer({ $list_results: 0 }),
        (error: unknown) => {
          assert.ok(error instanceof LookupBudgetError);
          assert.ok(error instanceof RangeError);
          assert.equal(error.code, "budget_exhausted");
          assert.equal(error.stage, stage);
          assert.match(
            error.message,
            stage === "arguments" ? /step is refused/ : /run is suspended/,
          );
          return true;
        },
      );
      assert.equal(session.used, 8);
    });
  }
});

Deno.test("LookupSession pages the result catalogue with $list_results", async () => {
  const results = new ResultStore();
  for (let i = 0; i < 10; i++) {
    await results.put(`r${i}`, { origin: `o${i}`, capture: "complete" });
  }
  const session = new LookupSession({ results, stage: "selection" });
  const first = await session.answer({ $list_results: 0 });
  assert.deepEqual(first, results.list(0));
  assert.equal((first as { next_offset: number }).next_offset, 8);
  const second = await session.answer({ $list_results: 8 }) as {
    results: unknown[];
    next_offset: null;
  };
  assert.equal(second.results.length, 2);
  assert.equal(second.next_offset, null);
  assert.equal(session.retrievals, 2);
});

class FakeHistory implements HistorySource {
  records = new Map<string, SelectableRecord>();
  items: HistoryItem[] = [];
  add(sequence: number, event: unknown): ResultReference {
    const bytes = encoder.encode(JSON.stringify(event));
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const id = `event-${sequence}`;
    this.records.set(id, { id, bytes, sha256 });
    const reference = {
      result: id,
      sha256,
      select: { kind: "whole" as const },
      rendering: "text" as const,
    };
    this.items.push({
      event: id,
      action: "tests.run",
      utf8_bytes: bytes.length,
      reference,
    });
    return reference;
  }
  record(id: string): SelectableRecord | undefined {
    return this.records.get(id);
  }
  list(offset: number) {
    const events = this.items.slice(offset, offset + 8);
    return {
      events,
      next_offset: offset + 8 < this.items.length ? offset + 8 : null,
    };
  }
}

Deno.test("LookupSession reads and lists history when a source is given", async () => {
  const history = new FakeHistory();
  const ref = history.add(7, {
    sequence: 7,
    action: "tests.run",
    report: { kind: "tests_run", exit_code: 1 },
  });
  for (let i = 8; i < 17; i++) history.add(i, { sequence: i });
  const session = new LookupSession({
    results: new ResultStore(),
    history,
    stage: "arguments",
  });
  assert.deepEqual(
    await session.answer({
      $read_history: {
        ...ref,
        select: { kind: "json_pointer", pointer: "/report/exit_code" },
        rendering: "json",
      },
    }),
    { selected_json: "1" },
  );
  assert.deepEqual(
    await session.answer({
      $read_history: {
        ...ref,
        select: { kind: "json_pointer", pointer: "/action" },
      },
    }),
    { selected_text: "tests.run" },
  );
  assert.equal(
    failed(
      await session.answer({ $read_history: { ...ref, result: "event-99" } }),
    ),
    "unknown_result",
  );
  assert.equal(
    failed(
      await session.answer({
        $read_history: { ...ref, sha256: "0".repeat(64) },
      }),
    ),
    "digest_mismatch",
  );
  const page = await session.answer({ $list_history: 0 });
  assert.deepEqual(page, history.list(0));
  assert.equal((page as { next_offset: number }).next_offset, 8);
  assert.equal(
    failed(await session.answer({ $read_result: ref })),
    "unknown_result",
  );
});

Deno.test("Random garbage requests only ever produce answers or LookupBudgetError (property)", async () => {
  const { results, refs } = await setup([
    "text\nmore\n",
    '{"a": {"b": ["c"]}}',
  ]);
  const history = new FakeHistory();
  history.add(1, { x: 1 });
  const fuzzRef = fc.record({
    result: fc.oneof(
      fc.constantFrom("result-1", "result-2", "event-1"),
      fc.string(),
    ),
    sha256: fc.oneof(
      fc.constantFrom(refs[0]!.sha256, refs[1]!.sha256),
      fc.string(),
    ),
    select: fc.oneof(
      fc.record({
        kind: fc.constantFrom("whole", "bytes", "lines", "json_pointer", "x"),
      }),
      fc.record({
        kind: fc.constantFrom("bytes", "lines"),
        start: fc.integer({ min: -3, max: 20 }),
        end: fc.integer({ min: -3, max: 20 }),
      }),
      fc.record({
        kind: fc.constant("json_pointer"),
        pointer: fc.oneof(
          fc.constantFrom("", "/a", "/a/b/0", "/a/b/01", "/~"),
          fc.string(),
        ),
      }),
      fc.anything(),
    ),
    rendering: fc.oneof(fc.constantFrom("text", "json"), fc.anything()),
  }, { requiredKeys: [] });
  const request = fc.oneof(
    fc.anything(),
    fc.record({ $read_result: fc.oneof(fuzzRef, fc.anything()) }),
    fc.record({ $read_history: fc.oneof(fuzzRef, fc.anything()) }),
    fc.record({
      $list_results: fc.oneof(fc.integer({ min: -2, max: 20 }), fc.anything()),
    }),
    fc.record({ $list_history: fc.oneof(fc.integer(), fc.anything()) }),
    fc.dictionary(
      fc.constantFrom("$read_result", "$list_results", "$x"),
      fc.anything(),
    ),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(request, { minLength: 1, maxLength: 12 }),
      fc.boolean(),
      async (requests, withHistory) => {
        const session = new LookupSession({
          results,
          stage: "arguments",
          ...(withHistory ? { history } : {}),
        });
        let total = 0;
        for (const [i, r] of requests.entries()) {
          try {
            const answer = await session.answer(r);
            assert.ok(i < 8);
            const keys = Object.keys(answer).sort().join(",");
            assert.ok(
              [
                "lookup_failed",
                "selected_text",
                "selected_json",
                "next_offset,results",
                "events,next_offset",
              ].includes(keys),
              keys,
            );
            total += escapedData(answer);
          } catch (error) {
            assert.ok(error instanceof LookupBudgetError, String(error));
            assert.equal(i, 8);
            break;
          }
        }
        assert.equal(session.dataBytes, total);
        assert.ok(total <= 65536);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("LookupSession refuses bad options", () => {
  assert.throws(
    () =>
      new LookupSession({
        results: new ResultStore(),
        stage: "other" as unknown as "selection",
      }),
    TypeError,
  );
});

Deno.test("LookupSession refuses a history page over 8 KiB with answer_too_large", async () => {
  const history = new FakeHistory();
  for (let i = 1; i <= 8; i++) history.add(i, { sequence: i });
  for (const item of history.items) item.action = "x".repeat(1100);
  const session = new LookupSession({
    results: new ResultStore(),
    history,
    stage: "selection",
  });
  assert.equal(
    failed(await session.answer({ $list_history: 0 })),
    "answer_too_large",
  );
  assert.equal(session.used, 1);
});
