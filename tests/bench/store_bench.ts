/**
 * Result store throughput on one generated 16 MiB document (the largest
 * result the store keeps), measured against the runtime's own primitives in
 * the same run:
 *
 * - "put 16 MiB": `ResultStore.put` (UTF-8 validation, private copy,
 *   SHA-256, preview) vs `crypto.subtle.digest` + `TextDecoder` with
 *   `fatal: true` over the same bytes (the minimum any store must do).
 * - "lookup 8 KiB": a lines lookup answered by a `LookupSession` on the
 *   stored document (line index built once, then reused) vs decoding the
 *   same 8 KiB with `TextDecoder`.
 */
import { ResultStore } from "../../lib/store/result_store.ts";
import { LookupSession } from "../../lib/reference/lookup_session.ts";

const SIZE = 16 * 1024 * 1024;

function document(size: number): Uint8Array<ArrayBuffer> {
  // Lines of mixed ASCII and multi-byte text, cut to `size` on a character
  // boundary and padded with spaces.
  const line = "let value = 42; // naïve café — 日本語 ✓ 𝄞 end\n";
  const unit = new TextEncoder().encode(line);
  const out = new Uint8Array(size).fill(0x20);
  for (let at = 0; at + unit.length <= size; at += unit.length) {
    out.set(unit, at);
  }
  return out;
}

const doc = document(SIZE);
const fatal = new TextDecoder("utf-8", { fatal: true });

Deno.bench({
  name: "crypto.subtle.digest + TextDecoder fatal",
  group: "put 16 MiB",
  baseline: true,
  async fn() {
    await crypto.subtle.digest("SHA-256", doc);
    fatal.decode(doc);
  },
});

Deno.bench({
  name: "ResultStore.put",
  group: "put 16 MiB",
  async fn() {
    const store = new ResultStore();
    await store.put(doc, { origin: "bench", capture: "complete" });
  },
});

const store = new ResultStore();
const descriptor = await store.put(doc, {
  origin: "bench",
  capture: "complete",
});
const lineBytes = doc.indexOf(10) + 1;
const linesPerAnswer = Math.floor(8192 / lineBytes);
const middle = Math.floor(SIZE / lineBytes / 2);
const request = {
  $read_result: {
    ...descriptor.reference!,
    select: { kind: "lines", start: middle, end: middle + linesPerAnswer - 1 },
  },
};
const slice = doc.subarray(
  (middle - 1) * lineBytes,
  (middle - 1 + linesPerAnswer) * lineBytes,
);

Deno.bench({
  name: "TextDecoder 8 KiB",
  group: "lookup 8 KiB",
  baseline: true,
  fn() {
    fatal.decode(slice);
  },
});

Deno.bench({
  name: "LookupSession.answer lines",
  group: "lookup 8 KiB",
  async fn() {
    const session = new LookupSession({ results: store, stage: "arguments" });
    await session.answer(request);
  },
});
