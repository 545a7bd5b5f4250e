import assert from "node:assert/strict";
import { expandEdit } from "../../lib/slice/_expand_edit.ts";
import { ResultStore } from "../../lib/store/result_store.ts";

const MIB = 1024 * 1024;

Deno.test("expandEdit() limits the expanded contents of all files together to 16 MiB", async (t) => {
  const results = new ResultStore();
  const d = await results.put("x".repeat(8 * MIB), {
    origin: "repository.inspect big.txt",
    capture: "complete",
  });
  const whole = { segments: [{ ref: d.reference! }] };
  await t.step("two files of 8 MiB each fit exactly", async () => {
    const expanded = await expandEdit({
      files: [{ path: "a.txt", contents: whole }, {
        path: "b.txt",
        contents: whole,
      }],
    }, results);
    assert.ok(expanded.ok);
    const files = (expanded.args as { files: { contents: string }[] }).files;
    assert.deepEqual(files.map((f) => f.contents.length), [8 * MIB, 8 * MIB]);
  });
  await t.step("one byte more in a third file is refused", async () => {
    const expanded = await expandEdit({
      files: [
        { path: "a.txt", contents: whole },
        { path: "b.txt", contents: whole },
        { path: "c.txt", contents: "y" },
      ],
    }, results);
    assert.ok(!expanded.ok);
    assert.equal(expanded.code, "edit_too_large");
    assert.match(expanded.reason, /16777216 bytes/);
  });
  await t.step("literal and composed contents count alike", async () => {
    const expanded = await expandEdit({
      files: [
        { path: "a.txt", contents: "z".repeat(8 * MIB + 1) },
        { path: "b.txt", contents: whole },
      ],
    }, results);
    assert.ok(!expanded.ok);
    assert.equal(expanded.code, "edit_too_large");
  });
});

Deno.test("expandEdit() clips a long path in the reason of contents that do not resolve", async () => {
  const expanded = await expandEdit({
    files: [{
      path: "p".repeat(10_000),
      contents: {
        segments: [{
          ref: {
            result: "result-1",
            sha256: "0".repeat(64),
            select: { kind: "whole" },
          },
        }],
      },
    }],
  }, new ResultStore());
  assert.ok(!expanded.ok);
  assert.equal(expanded.code, "unknown_result");
  assert.ok(expanded.reason.includes(`(${"p".repeat(200)}…)`));
  assert.ok(expanded.reason.length < 500, String(expanded.reason.length));
});
