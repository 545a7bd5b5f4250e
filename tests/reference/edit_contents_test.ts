import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type ResultReference,
  ResultStore,
} from "../../lib/store/result_store.ts";
import {
  EditExpansionError,
  expandEditContents,
} from "../../lib/reference/edit_contents.ts";
import { storeWith } from "../_kit.ts";

const encoder = new TextEncoder();

async function expansionError(
  promise: Promise<unknown>,
): Promise<{ code: string; segment: number | null }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof EditExpansionError, String(error));
    assert.ok(error instanceof RangeError);
    return { code: error.code, segment: error.segment };
  }
  assert.fail("expected an EditExpansionError");
}

async function setup() {
  const { results, descriptors: [d, j] } = await storeWith(
    ["one\ntwo\nthree\n", "a.txt"],
    ['{"name": "loom", "n": 1.50}', "p.json"],
  );
  return { results, text: d.reference!, json: j.reference! };
}

function lines(
  ref: ResultReference,
  start: number,
  end: number,
): ResultReference {
  return { ...ref, select: { kind: "lines", start, end } };
}

Deno.test("expandEditContents() passes a literal string through", async () => {
  const { results } = await setup();
  assert.equal(await expandEditContents("plain\n", { results }), "plain\n");
  assert.equal(await expandEditContents("", { results }), "");
});

Deno.test("expandEditContents() joins literals and references", async () => {
  const { results, text, json } = await setup();
  const body = await expandEditContents({
    segments: [
      { ref: lines(text, 1, 1) },
      { literal: "TWO\n" },
      { ref: lines(text, 3, 3) },
      { ref: { ...json, select: { kind: "json_pointer", pointer: "/name" } } },
      { literal: " " },
      {
        ref: {
          ...json,
          select: { kind: "json_pointer", pointer: "/n" },
          rendering: "json",
        },
      },
      { ref: text },
    ],
  }, { results });
  assert.equal(body, "one\nTWO\nthree\nloom 1.50one\ntwo\nthree\n");
  assert.equal(await expandEditContents({ segments: [] }, { results }), "");
});

Deno.test("expandEditContents() names the failing segment and its code", async (t) => {
  const { results, text, json } = await setup();
  const cases: [string, unknown, number | null][] = [
    ["unknown_result", { ...text, result: "result-9" }, 1],
    ["digest_mismatch", { ...text, sha256: "0".repeat(64) }, 1],
    ["invalid_range", lines(text, 2, 9), 1],
    ["not_char_boundary", null, 1],
    ["pointer_not_found", {
      ...json,
      select: { kind: "json_pointer", pointer: "/x" },
    }, 1],
    ["not_a_string", {
      ...json,
      select: { kind: "json_pointer", pointer: "/n" },
    }, 1],
    [
      "invalid_json",
      { ...text, select: { kind: "json_pointer", pointer: "" } },
      1,
    ],
    ["invalid_reference", {
      ...text,
      select: { kind: "whole" },
      rendering: "json",
    }, 1],
    ["invalid_reference", { ...text, extra: 1 }, 1],
  ];
  const euro = (await results.put("€", { origin: "e", capture: "complete" }))
    .reference!;
  for (const [code, ref, segment] of cases) {
    await t.step(code, async () => {
      const bad = ref ??
        { ...euro, select: { kind: "bytes", start: 0, end: 1 } };
      assert.deepEqual(
        await expansionError(
          expandEditContents({ segments: [{ literal: "x" }, { ref: bad }] }, {
            results,
          }),
        ),
        { code, segment },
      );
    });
  }
  await t.step(
    "malformed segments are invalid_reference at their index",
    async () => {
      for (
        const seg of [
          {},
          { literal: 1 },
          { literal: "a", ref: text },
          { text: "a" },
          "a",
          null,
        ]
      ) {
        assert.deepEqual(
          await expansionError(
            expandEditContents({
              segments: [{ literal: "ok" }, { literal: "" }, seg],
            }, { results }),
          ),
          { code: "invalid_reference", segment: 2 },
          JSON.stringify(seg),
        );
      }
    },
  );
  await t.step(
    "malformed contents are invalid_contents with no segment",
    async () => {
      for (
        const contents of [null, 1, [], {}, { segments: "x" }, {
          segments: [],
          extra: 1,
        }]
      ) {
        assert.deepEqual(
          await expansionError(expandEditContents(contents, { results })),
          { code: "invalid_contents", segment: null },
          JSON.stringify(contents),
        );
      }
    },
  );
  await t.step("history references do not resolve in edits", async () => {
    assert.deepEqual(
      await expansionError(
        expandEditContents({
          segments: [{ ref: { ...text, result: "event-1" } }],
        }, { results }),
      ),
      { code: "unknown_result", segment: 0 },
    );
  });
});

Deno.test("expandEditContents() enforces 256 segments and 16 MiB", async (t) => {
  const { results, text } = await setup();
  await t.step("256 segments expand, 257 do not", async () => {
    const segments = Array.from(
      { length: 256 },
      (_, i) => ({ literal: String(i % 10) }),
    );
    assert.equal(
      (await expandEditContents({ segments }, { results })).length,
      256,
    );
    assert.deepEqual(
      await expansionError(
        expandEditContents({ segments: [...segments, { literal: "" }] }, {
          results,
        }),
      ),
      { code: "too_many_segments", segment: 256 },
    );
  });
  await t.step(
    "the expanded size may not pass maxBytes (16 MiB by default)",
    async () => {
      const options = { results, maxBytes: 20 };
      assert.equal(
        await expandEditContents({
          segments: [{ ref: text }, { literal: "123456" }],
        }, options),
        "one\ntwo\nthree\n123456",
      );
      assert.deepEqual(
        await expansionError(
          expandEditContents({
            segments: [{ ref: text }, { literal: "1234567" }],
          }, options),
        ),
        { code: "too_large", segment: 1 },
      );
      assert.deepEqual(
        await expansionError(
          expandEditContents({
            segments: [{ literal: "1234567" }, { ref: text }],
          }, options),
        ),
        { code: "too_large", segment: 1 },
      );
      assert.deepEqual(
        await expansionError(expandEditContents("é".repeat(11), options)),
        { code: "too_large", segment: null },
      );
      const mib = "x".repeat(1024 * 1024);
      const big =
        (await results.put(mib, { origin: "big", capture: "complete" }))
          .reference!;
      const sixteen = Array.from({ length: 16 }, () => ({ ref: big }));
      assert.equal(
        (await expandEditContents({ segments: sixteen }, { results })).length,
        16 * 1024 * 1024,
      );
      assert.deepEqual(
        await expansionError(
          expandEditContents({ segments: [...sixteen, { literal: "!" }] }, {
            results,
          }),
        ),
        { code: "too_large", segment: 16 },
      );
    },
  );
});

Deno.test("Edit expansion round trips: any split of a stored file expands back to it (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.string({ unit: "grapheme", maxLength: 60 }),
      fc.array(fc.tuple(fc.nat(), fc.boolean(), fc.string({ maxLength: 5 })), {
        maxLength: 8,
      }),
      async (text, cuts) => {
        const results = new ResultStore();
        const d = await results.put(text, { origin: "f", capture: "complete" });
        const chars = [...text];
        const points = [
          ...new Set([
            0,
            ...cuts.map(([c]) => c % (chars.length + 1)),
            chars.length,
          ]),
        ]
          .sort((a, b) => a - b);
        const offsets = points.map((n) =>
          encoder.encode(chars.slice(0, n).join("")).length
        );
        const segments: unknown[] = [];
        let expected = "";
        for (let i = 0; i + 1 < offsets.length; i++) {
          const [, literal, extra] = cuts[i] ?? [0, false, ""];
          const piece = chars.slice(points[i], points[i + 1]).join("");
          segments.push(
            literal ? { literal: piece } : {
              ref: {
                ...d.reference!,
                select: {
                  kind: "bytes",
                  start: offsets[i],
                  end: offsets[i + 1],
                },
              },
            },
          );
          expected += piece;
          if (extra !== "") {
            segments.push({ literal: extra });
            expected += extra;
          }
        }
        assert.equal(
          await expandEditContents({ segments }, { results }),
          expected,
        );
        if (!cuts.some(([, , extra]) => extra !== "")) {
          assert.equal(expected, text);
        }
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("expandEditContents() keeps a byte-order mark of a whole selection", async () => {
  const results = new ResultStore();
  const d = await results.put("\ufeffline\n", {
    origin: "bom.txt",
    capture: "complete",
  });
  const text = await expandEditContents({ segments: [{ ref: d.reference! }] }, {
    results,
  });
  assert.deepEqual(encoder.encode(text), encoder.encode("\ufeffline\n"));
});
