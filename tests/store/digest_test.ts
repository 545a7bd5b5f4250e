import assert from "node:assert/strict";
import { sha256Hex, sha256HexAsync } from "../../lib/store/digest.ts";

Deno.test("sha256Hex() gives the FIPS 180-2 digests in lowercase hex", async (t) => {
  const vectors: [string, string][] = [
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    [
      "abc",
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    ],
  ];
  for (const [input, digest] of vectors) {
    await t.step(`of ${JSON.stringify(input)}`, async () => {
      const bytes = new TextEncoder().encode(input);
      assert.equal(sha256Hex(bytes), digest);
      assert.equal(await sha256HexAsync(bytes), digest);
    });
  }
  await t.step("of a subarray, not its whole buffer", () => {
    const buffer = new TextEncoder().encode("xxabcxx");
    assert.equal(sha256Hex(buffer.subarray(2, 5)), vectors[1]![1]);
  });
});
