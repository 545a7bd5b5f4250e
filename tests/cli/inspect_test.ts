import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { parseInspectArguments } from "../../lib/cli/inspect.ts";
import { loomIn as loom, tempDir } from "../_kit.ts";
import { checkParser } from "./_arguments.ts";

Deno.test("parseInspectArguments() reads FILE and the flags, and nothing else", async (t) => {
  await checkParser(t, parseInspectArguments, [
    ["a file, nothing read", ["/nonexistent/notes.txt"], {
      file: "/nonexistent/notes.txt",
      partial: false,
      compact: false,
    }],
    ["--partial and --compact", ["--partial", "f", "--compact"], {
      file: "f",
      partial: true,
      compact: true,
    }],
    ["--help wins", ["f", "--help"], { help: /^Usage: loom inspect FILE/ }],
    ["no file", [], { usage: "Expected exactly one FILE" }],
    ["two files", ["a", "b"], { usage: "Expected exactly one FILE" }],
    ["an unknown flag", ["--frob", "x"], { usage: "Unknown option --frob" }],
  ]);
});

Deno.test("loom inspect prints the descriptor the model sees", async (t) => {
  await using temp = await tempDir();
  const dir = temp.path;
  // Written by the first step, described again by the --compact one.
  const notes = `${dir}/notes.txt`;
  await t.step(
    "a small file: whole preview and a whole reference",
    async () => {
      await Deno.writeTextFile(notes, "héllo\nworld\n");
      const sha256 = createHash("sha256").update("héllo\nworld\n").digest(
        "hex",
      );
      const { code, stdout, stderr } = await loom("inspect", notes);
      assert.equal(stderr, "");
      assert.equal(code, 0);
      assert.ok(
        stdout.startsWith('{\n  "result": "result-1"'),
        "pretty JSON",
      );
      assert.deepEqual(JSON.parse(stdout), {
        result: "result-1",
        sha256,
        origin: `repository.inspect ${notes}`,
        capture: "complete",
        utf8_bytes: 13,
        preview: "héllo\nworld\n",
        preview_truncated: false,
        preview_start_byte: 0,
        preview_end_byte: 13,
        reference: {
          result: "result-1",
          sha256,
          select: { kind: "whole" },
          rendering: "text",
        },
      });
    },
  );

  await t.step(
    "a large file: a 1,024-byte head, or the tail with --partial",
    async () => {
      const path = `${dir}/big.txt`;
      await Deno.writeTextFile(path, "a".repeat(1000) + "€".repeat(100));
      const head = JSON.parse((await loom("inspect", path)).stdout);
      assert.equal(head.preview_truncated, true);
      assert.equal(head.preview_end_byte, 1024 - ((1024 - 1000) % 3));
      const tail = JSON.parse(
        (await loom("inspect", "--partial", path)).stdout,
      );
      assert.equal(tail.capture, "partial");
      assert.equal(tail.preview_end_byte, 1300);
      assert.equal(tail.preview_start_byte, 1300 - 1024);
    },
  );

  await t.step("--compact prints the bounded policy's form", async () => {
    const compact = JSON.parse(
      (await loom("inspect", "--compact", notes)).stdout,
    );
    assert.deepEqual(Object.keys(compact), [
      "result",
      "sha256",
      "origin",
      "capture",
      "utf8_bytes",
      "reference",
    ]);
  });

  await t.step("invalid UTF-8 fails with its code and exit 2", async () => {
    const path = `${dir}/bad.bin`;
    await Deno.writeFile(path, new Uint8Array([0x61, 0xff, 0x62]));
    const { code, stdout, stderr } = await loom("inspect", path);
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.match(
      stderr,
      /^loom inspect: invalid_utf8: Cannot inspect .*bad\.bin: byte 1/,
    );
  });

  await t.step("a missing file and bad usage exit 2", async () => {
    const missing = await loom("inspect", `${dir}/nope.txt`);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /^loom inspect: Cannot read .*nope\.txt: it does not exist\n$/,
    );
    const none = await loom("inspect");
    assert.equal(none.code, 2);
    assert.match(none.stderr, /Expected exactly one FILE/);
    const unknown = await loom("inspect", "--frob", "x");
    assert.equal(unknown.code, 2);
  });
});
