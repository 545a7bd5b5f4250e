import assert from "node:assert/strict";
import { offloadResult } from "../../../lib/mcp/gateway/offload.ts";
import { jsonOutline } from "../../../lib/reference/outline.ts";
import { ResultStore } from "../../../lib/store/result_store.ts";

const options = (store: ResultStore) => ({
  server: "s",
  tool: "t",
  store,
  offloadBytes: 8192,
  maxResultBytes: 1 << 20,
  outline: jsonOutline,
});

Deno.test("offloadResult() keeps every descriptor within 2 KiB, whatever the content", async () => {
  const store = new ResultStore();
  for (
    const text of [
      "\u0001".repeat(20_000),
      '"'.repeat(20_000),
      JSON.stringify({ ["k".repeat(3000)]: 1, a: "x".repeat(9000) }),
    ]
  ) {
    const out = await offloadResult(
      { content: [{ type: "text", text }] },
      options(store),
    );
    const body = (out.result.content as { text: string }[])[0]!.text;
    assert.ok(new TextEncoder().encode(body).length <= 2048, `${body.length}`);
    const d = JSON.parse(body);
    assert.ok(new TextEncoder().encode(d.preview).length <= 1024);
    assert.equal(
      store.get(d.result)?.bytes.length,
      new TextEncoder().encode(text).length,
    );
  }
});

Deno.test("offloadResult() stores text and equal structuredContent once, two-space indented", async () => {
  const store = new ResultStore();
  const value = { rows: Array.from({ length: 800 }, (_, i) => ({ i })) };
  const out = await offloadResult({
    content: [{ type: "text", text: JSON.stringify(value) }],
    structuredContent: value,
  }, options(store));
  assert.equal(out.stored.length, 1);
  const stored = new TextDecoder().decode(store.get(out.stored[0]!.id)!.bytes);
  assert.equal(stored, JSON.stringify(value, null, 2));
  assert.equal(out.stored[0]!.descriptor.part, "content[0]+structuredContent");
});

Deno.test("offloadResult() stores a large image out of band, described by media type and size", async () => {
  const store = new ResultStore();
  const data = btoa("x".repeat(30_000));
  const out = await offloadResult({
    content: [{ type: "text", text: "a picture" }, {
      type: "image",
      mimeType: "image/png",
      data,
    }],
  }, options(store));
  const d = JSON.parse((out.result.content as { text: string }[])[0]!.text);
  assert.equal(d.media_type, "image/png");
  assert.equal(d.bytes, 30_000);
  assert.equal(d.preview, undefined);
  assert.deepEqual(out.stored[0]!.media, {
    block: { type: "image", mimeType: "image/png" },
    field: "data",
  });
  assert.deepEqual((out.result.content as unknown[])[1], {
    type: "text",
    text: "a picture",
  });
});

Deno.test("offloadResult() stores a text over the per-result limit up to it, marked partial", async () => {
  const store = new ResultStore({ maxResultBytes: 1001 });
  const out = await offloadResult(
    { content: [{ type: "text", text: "é".repeat(1000) }] },
    { ...options(store), offloadBytes: 100, maxResultBytes: 1001 },
  );
  const d = JSON.parse((out.result.content as { text: string }[])[0]!.text);
  assert.equal(d.capture, "partial");
  assert.equal(d.utf8_bytes, 1000);
  assert.equal(d.upstream_bytes, 2000);
});

Deno.test("offloadResult() stores an answer of many blocks whole, as its JSON", async () => {
  const store = new ResultStore();
  const content = Array.from(
    { length: 500 },
    (_, i) => ({ type: "text", text: `row ${i}` }),
  );
  const out = await offloadResult({ content }, options(store));
  assert.equal(out.stored.length, 1);
  assert.equal(out.stored[0]!.descriptor.part, "result");
  assert.equal((out.result.content as unknown[]).length, 1);
});
