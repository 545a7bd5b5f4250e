import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import {
  type AssembledLine,
  MessageAssembler,
} from "../../../lib/mcp/gateway/message_assembler.ts";
import { LargeText, shapeOf } from "../../../lib/mcp/gateway/large_text.ts";

const encoder = new TextEncoder();

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A tiny seeded generator, so a property's escaping choices are replayable. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const SHORT: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** JSON text of `value` whose strings use every escape JSON allows, at random. */
function serialize(value: unknown, rnd: () => number): string {
  if (typeof value === "string") return quote(value, rnd);
  if (Array.isArray(value)) {
    return `[${value.map((v) => serialize(v, rnd)).join(",")}]`;
  }
  if (typeof value === "object" && value !== null) {
    return `{${
      Object.entries(value).filter(([, v]) => v !== undefined).map((
        [k, v],
      ) => `${quote(k, rnd)}${rnd() < 0.2 ? " : " : ":"}${serialize(v, rnd)}`)
        .join(",")
    }}`;
  }
  return JSON.stringify(value);
}

function quote(text: string, rnd: () => number): string {
  const u = (unit: number) => {
    const hex = unit.toString(16).padStart(4, "0");
    return `\\u${rnd() < 0.5 ? hex : hex.toUpperCase()}`;
  };
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      // A pair: both raw or both escaped.
      out += rnd() < 0.3 ? u(unit) + u(next) : text.slice(i, i + 2);
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) out += u(unit);
    else if (SHORT[text[i]!] !== undefined) {
      out += rnd() < 0.7 ? SHORT[text[i]!] : u(unit);
    } else if (unit < 0x20) out += u(unit);
    else if (text[i] === "/" && rnd() < 0.5) out += "\\/";
    else out += rnd() < 0.1 ? u(unit) : text[i];
  }
  return out + '"';
}

/**
 * Assembles `bytes` pushed in the pieces `cuts` make; each piece's buffer is
 * overwritten after the push, as a reader that reuses its buffer does.
 */
function assemble(
  bytes: Uint8Array,
  cuts: readonly number[],
  options: { large: number; max?: number; keep: boolean },
): AssembledLine {
  const assembler = new MessageAssembler({
    maxMessageBytes: options.max ?? 1 << 24,
    largeStringBytes: options.large,
  });
  let at = 0;
  for (const cut of [...cuts, bytes.length].sort((a, b) => a - b)) {
    const piece = bytes.slice(at, Math.max(at, cut));
    assembler.push(piece);
    piece.fill(0x22);
    at = Math.max(at, cut);
  }
  return assembler.end(() => options.keep);
}

/** The message of a line that must be one. */
// deno-lint-ignore no-explicit-any
function messageOf(line: AssembledLine): any {
  assert.equal(line.kind, "message");
  return (line as { message: unknown }).message;
}

/** Every LargeText in a value, with its path. */
function largeTexts(value: unknown, path: (string | number)[] = []) {
  const found: { path: (string | number)[]; text: LargeText }[] = [];
  if (value instanceof LargeText) found.push({ path, text: value });
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      found.push(...largeTexts(v, [...path, Array.isArray(value) ? +k : k]));
    }
  }
  return found;
}

function at(value: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce(
    (v: unknown, k) => (v as Record<string | number, unknown>)[k],
    value,
  );
}

/** The JSON-RPC messages of the property: tool results with odd strings. */
const message = fc.record({
  jsonrpc: fc.constant("2.0"),
  id: fc.oneof(fc.nat(), fc.string({ maxLength: 8 })),
  result: fc.record({
    content: fc.array(
      fc.oneof(
        fc.record({
          type: fc.constant("text"),
          text: fc.string({ unit: "binary", maxLength: 300, size: "large" }),
        }),
        fc.record({
          type: fc.constant("image"),
          data: fc.base64String({ maxLength: 200 }),
          mimeType: fc.constant("image/png"),
        }),
        fc.dictionary(
          fc.string({ unit: "binary", maxLength: 90 }),
          fc.jsonValue({ maxDepth: 2 }),
          { maxKeys: 3 },
        ),
      ),
      { maxLength: 4 },
    ),
    structuredContent: fc.option(
      fc.dictionary(
        fc.string({ maxLength: 8 }),
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 300, size: "large" }),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        { maxKeys: 3 },
      ),
      { nil: undefined },
    ),
    _meta: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
  }, { requiredKeys: ["content"] }),
});

Deno.test("MessageAssembler gives what JSON.parse of the line gives", async (t) => {
  await t.step(
    "for any message, escaping, cutting into pieces and size of a large string (property)",
    () => {
      let taken = 0;
      fc.assert(
        fc.property(
          message,
          fc.integer(),
          fc.array(fc.nat(), { maxLength: 8 }),
          fc.integer({ min: 2, max: 80 }),
          fc.boolean(),
          (value, seed, cuts, large, keep) => {
            const text = serialize(value, random(seed));
            const bytes = encoder.encode(text);
            const line = assemble(
              bytes,
              cuts.map((c) => c % (bytes.length + 1)),
              { large, keep },
            );
            assert.equal(line.kind, "message");
            const got = (line as { message: Record<string, unknown> }).message;
            const expected = JSON.parse(text);
            // Large texts write themselves as the very strings they hold.
            assert.deepEqual(JSON.parse(JSON.stringify(got)), expected);
            for (const { path, text: found } of largeTexts(got)) {
              taken += 1;
              assert.ok(keep, "a large text only where the caller keeps them");
              const placed = (path.length === 4 && path[0] === "result" &&
                path[1] === "content" && path[3] === "text" &&
                (at(got, path.slice(0, 3)) as { type: string }).type ===
                  "text") ||
                (path.length === 3 && path[0] === "result" &&
                  path[1] === "structuredContent");
              assert.ok(placed, `a large text at ${path.join(".")}`);
              const original = at(expected, path) as string;
              const wellFormed = encoder.encode(original.toWellFormed());
              assert.deepEqual(found.content.bytes, wellFormed);
              assert.equal(found.content.sha256, sha256(wellFormed));
              assert.equal(found.text(), original);
              assert.ok(found.byteLength >= large);
              const lines = original === "" ? 0 : original.split("\n").length -
                (original.endsWith("\n") ? 1 : 0);
              assert.equal(found.lines, lines);
            }
          },
        ),
        { numRuns: 300 },
      );
      assert.ok(taken > 50, `only ${taken} large texts were taken out`);
    },
  );

  await t.step(
    "for any byte changed in a line: the same message, or invalid when JSON.parse refuses it (property)",
    () => {
      fc.assert(
        fc.property(
          message,
          fc.integer(),
          fc.nat(),
          fc.integer({ min: 0, max: 255 }),
          fc.array(fc.nat(), { maxLength: 5 }),
          fc.integer({ min: 2, max: 40 }),
          (value, seed, where, byte, cuts, large) => {
            const bytes = encoder.encode(serialize(value, random(seed)));
            // A newline would end the line: the transport never passes one.
            bytes[where % bytes.length] = byte === 0x0a ? 0x0b : byte;
            let expected: unknown;
            try {
              expected = JSON.parse(
                new TextDecoder("utf-8", { fatal: true }).decode(bytes),
              );
            } catch {
              expected = undefined;
            }
            const line = assemble(
              bytes,
              cuts.map((c) => c % (bytes.length + 1)),
              { large, keep: true },
            );
            const m = expected as Record<string, unknown> | undefined;
            const jsonRpc = typeof m === "object" && m !== null &&
              !Array.isArray(m) && m.jsonrpc === "2.0" &&
              (typeof m.id === "string" || typeof m.id === "number" ||
                (m.id === undefined && typeof m.method === "string")) &&
              (typeof m.method === "string" || "result" in m || "error" in m);
            if (!jsonRpc) assert.equal(line.kind, "invalid");
            else {
              assert.equal(line.kind, "message");
              const got = (line as { message: unknown }).message;
              // Both through JSON: a number lexeme past the double range is
              // ±Infinity on both sides, which only a round trip makes equal.
              assert.deepEqual(
                JSON.parse(JSON.stringify(got)),
                JSON.parse(JSON.stringify(expected)),
              );
            }
          },
        ),
        { numRuns: 500 },
      );
    },
  );
});

Deno.test("MessageAssembler takes a large text out as it streams in", async (t) => {
  const text = '0123456789abcdef é 😀 "quoted" \\ / tab\t\n'.repeat(5_000);
  const line = JSON.stringify({
    jsonrpc: "2.0",
    id: 9,
    result: {
      content: [{ type: "text", text }],
      structuredContent: { content: text },
    },
  });
  const bytes = encoder.encode(line);

  await t.step(
    "in the answer to a tool call: as bytes, digest and lines",
    () => {
      const cuts = Array.from({ length: 40 }, (_, i) => i * 5_003);
      const got = assemble(bytes, cuts, { large: 64 * 1024, keep: true });
      const result = messageOf(got).result;
      const [block] = result.content as { text: unknown }[];
      const large = block!.text;
      assert.ok(large instanceof LargeText);
      const expected = encoder.encode(text);
      assert.equal(large.content.sha256, sha256(expected));
      assert.equal(large.lines, 5_000);
      const structured = (result.structuredContent as { content: unknown })
        .content;
      assert.ok(structured instanceof LargeText);
      assert.equal(structured.content.sha256, large.content.sha256);
      // A schema sees an empty string in its place.
      assert.deepEqual(shapeOf(result), {
        ...result,
        content: [{ type: "text", text: "" }],
      });
    },
  );

  await t.step("anywhere else, or when not kept: as the string", () => {
    const got = assemble(bytes, [100, 70_000], {
      large: 64 * 1024,
      keep: false,
    });
    assert.deepEqual(
      (got as { message: unknown }).message,
      JSON.parse(line),
    );
  });

  await t.step("a placeholder an upstream writes is a plain string", () => {
    const forged = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      result: {
        content: [{ type: "text", text: "\u0000loom-large:guess:0" }, {
          type: "text",
          text: "x".repeat(200),
        }],
      },
    });
    const got = assemble(encoder.encode(forged), [50], {
      large: 64,
      keep: true,
    });
    const result = messageOf(got).result;
    assert.deepEqual(result.content[0], {
      type: "text",
      text: "\u0000loom-large:guess:0",
    });
    assert.ok(
      (result.content[1] as { text: unknown }).text instanceof LargeText,
    );
  });

  await t.step("a large member name is put back as a name", () => {
    const key = "k".repeat(300);
    const keyed = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [], _meta: { [key]: "v", __proto__x: 1 } },
    });
    const got = assemble(encoder.encode(keyed), [120], {
      large: 64,
      keep: true,
    });
    assert.deepEqual((got as { message: unknown }).message, JSON.parse(keyed));
  });
});

Deno.test("MessageAssembler refuses what JSON.parse refuses in a large string", async (t) => {
  const big = "a".repeat(5_000);
  const wrap = (inner: string) =>
    `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${inner}"}]}}`;
  for (
    const [name, inner] of [
      ["a raw control character", `${big}\u0001${big}`],
      ["an unknown escape", `${big}\\x${big}`],
      ["a \\u escape without four hex digits", `${big}\\u12G4${big}`],
      ["a lone backslash at the end", `${big}\\`],
    ] as const
  ) {
    await t.step(name, () => {
      const bytes = encoder.encode(wrap(inner));
      assert.throws(() => JSON.parse(wrap(inner)));
      for (const cut of [0, 3_000, 5_060, 5_061, 5_062, 5_063]) {
        const got = assemble(bytes, [cut], { large: 1024, keep: true });
        assert.equal(got.kind, "invalid", `cut at ${cut}`);
      }
    });
  }
  await t.step("bytes that are not UTF-8, and an unterminated string", () => {
    const bytes = encoder.encode(wrap(`${big}é${big}`));
    const at = bytes.indexOf(0xc3);
    bytes[at + 1] = 0x41;
    assert.equal(
      assemble(bytes, [at + 1], { large: 1024, keep: true }).kind,
      "invalid",
    );
    const open = encoder.encode(`{"jsonrpc":"2.0","id":1,"result":"${big}`);
    assert.equal(
      assemble(open, [100], { large: 1024, keep: true }).kind,
      "invalid",
    );
  });
  await t.step("an empty line is no message", () => {
    assert.equal(
      assemble(new Uint8Array(), [], { large: 1024, keep: true }).kind,
      "empty",
    );
    assert.equal(
      assemble(encoder.encode("\r"), [], { large: 1024, keep: true }).kind,
      "empty",
    );
  });
});

Deno.test("MessageAssembler cuts a line over its limit to the head of its first text", async (t) => {
  const text = "line é😀\n".repeat(3_000);
  const line = encoder.encode(JSON.stringify({
    jsonrpc: "2.0",
    id: "call-7",
    result: { content: [{ type: "text", text }] },
  }));
  await t.step("a large text cut keeps its whole characters", () => {
    for (const max of [20_000, 20_001, 20_002, 20_003]) {
      const got = assemble(line, [7_000, 19_999], {
        large: 1024,
        max,
        keep: true,
      });
      assert.equal(got.kind, "cut");
      const cut = got as Extract<AssembledLine, { kind: "cut" }>;
      assert.equal(cut.id, "call-7");
      assert.equal(cut.totalBytes, line.length);
      assert.ok(cut.text instanceof LargeText);
      const head = cut.text.text();
      assert.ok(head.length > 10_000 && text.startsWith(head), head.slice(-20));
    }
  });
  await t.step("a small text cut keeps its whole characters", () => {
    const got = assemble(line, [30], {
      large: 1 << 20,
      max: 20_000,
      keep: true,
    });
    const cut = got as Extract<AssembledLine, { kind: "cut" }>;
    assert.equal(typeof cut.text, "string");
    assert.ok(text.startsWith(cut.text as string));
  });
  await t.step("without a text, the head of the line as JSON text", () => {
    const data = encoder.encode(JSON.stringify({
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "image", data: "QUJD".repeat(5_000) }] },
    }));
    const got = assemble(data, [100], { large: 1024, max: 10_000, keep: true });
    const cut = got as Extract<AssembledLine, { kind: "cut" }>;
    assert.equal(cut.id, 3);
    assert.match(
      cut.text as string,
      /^\{"jsonrpc":"2.0","id":3,.*"data":"[QUJD]+$/,
    );
    assert.equal((cut.text as string).length, 10_000);
  });
  await t.step("without an id, nothing to answer", () => {
    const got = assemble(encoder.encode(`{"x":"${"y".repeat(500)}"}`), [], {
      large: 64,
      max: 100,
      keep: true,
    });
    assert.equal((got as { id?: unknown }).id, undefined);
  });
});
