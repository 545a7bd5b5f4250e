import assert from "node:assert/strict";
import {
  encodeFrame,
  type FrameCounter,
  frameReader,
} from "../../lib/executor/frames.ts";
import { relaySource } from "../../lib/executor/_channel.ts";

/** Joins frame pieces into one stream of bytes. */
function joined(pieces: readonly Uint8Array[]): Uint8Array {
  const total = pieces.reduce((sum, piece) => sum + piece.length, 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const piece of pieces) {
    bytes.set(piece, at);
    at += piece.length;
  }
  return bytes;
}

Deno.test("encodeFrame() and frameReader() carry messages with their bytes", async (t) => {
  await t.step("byte arrays travel raw and come back equal", () => {
    const message = {
      id: 7,
      files: [
        { path: "a.txt", contents: new TextEncoder().encode("alpha\n") },
        { path: "b.bin", contents: new Uint8Array([0, 255, 10]) },
      ],
    };
    const seen: unknown[] = [];
    frameReader((m) => seen.push(m), 1024)(joined(encodeFrame(message)));
    assert.deepEqual(seen, [message]);
  });

  await t.step("the body is not escaped into the header", () => {
    const contents = new TextEncoder().encode('"quoted"\n'.repeat(100));
    const [head, body] = encodeFrame({ contents });
    assert.equal(body, contents);
    assert.ok((head?.length ?? Infinity) < 40, String(head?.length));
  });

  await t.step("frames split anywhere, even in the prefix, are rebuilt", () => {
    const messages = [{ a: 1 }, { b: new Uint8Array([1, 2, 3]) }, { c: "é" }];
    const bytes = joined(messages.flatMap((m) => encodeFrame(m)));
    for (let size = 1; size <= 9; size++) {
      const seen: unknown[] = [];
      const push = frameReader((m) => seen.push(m), 1024);
      for (let at = 0; at < bytes.length; at += size) {
        push(bytes.subarray(at, at + size));
      }
      assert.deepEqual(seen, messages, `chunks of ${size}`);
    }
  });

  await t.step("a header beyond the limit is a RangeError", () => {
    const push = frameReader(() => {}, 8);
    assert.throws(
      () => push(joined(encodeFrame({ path: "a much longer header" }))),
      RangeError,
    );
  });

  await t.step(
    "a body beyond its limit is a RangeError before it is allocated",
    () => {
      let seen = 0;
      const push = frameReader(() => seen++, 1024, undefined, 16);
      push(joined(encodeFrame({ bytes: new Uint8Array(16) })));
      const prefix = new Uint8Array(8);
      new DataView(prefix.buffer).setUint32(0, 2);
      new DataView(prefix.buffer).setUint32(4, 0xffffffff);
      assert.throws(() => push(prefix), /body of 4294967295 bytes exceeds 16/);
      assert.equal(seen, 1);
    },
  );
});

Deno.test("The relay's reader does work linear in the chunks of a 32 MiB message", () => {
  // The relay in the sandbox runs this very reader (its source is embedded).
  assert.ok(relaySource().includes(frameReader.toString()));
  const size = 32 * 1024 * 1024;
  const chunkSize = 64 * 1024;
  const contents = new Uint8Array(size).fill(0x61);
  const stream = joined(
    encodeFrame({ id: 1, part: { path: "big", contents } }),
  );
  const counter: FrameCounter = { scans: 0, bytes: 0 };
  let received: Uint8Array | undefined;
  const push = frameReader(
    (m) => received = (m as { part: { contents: Uint8Array } }).part.contents,
    1024,
    counter,
  );
  let chunks = 0;
  for (let at = 0; at < stream.length; at += chunkSize) {
    push(stream.subarray(at, at + chunkSize));
    chunks += 1;
  }
  assert.equal(received?.length, size);
  assert.equal(chunks, 513);
  // One pass per chunk (the prefix's chunk included; at most one more for
  // a chunk ending inside the prefix); each byte examined once. The old JSON-lines relay rescanned its whole buffer
  // for a newline on every chunk: about chunks² / 2 passes' worth of bytes.
  assert.ok(counter.scans <= chunks + 1, String(counter.scans));
  assert.equal(counter.bytes, stream.length);
});
