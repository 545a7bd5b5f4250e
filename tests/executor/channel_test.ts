// The sandbox channel carries each message as one JSON line over a pipe,
// which delivers it in chunks: lines split across chunks and several lines
// in one chunk must come out whole (the 40 MB files of `loom mcp` included).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { WorkspaceExecutor } from "../../lib/executor/workspace_executor.ts";
import { bwrapTest } from "../security/_bwrap.ts";
import { tempDir } from "../_kit.ts";

bwrapTest(
  "a large file and a large edit cross the sandbox channel intact",
  async () => {
    await using workspace = await tempDir();
    // Multi-byte characters cut at chunk edges, newlines inside the text.
    const line = 'événement — 東京 — "quoted" \\ ok\n';
    const text = line.repeat(Math.ceil((12 * 1024 * 1024) / line.length));
    await Deno.writeTextFile(`${workspace.path}/big.txt`, text);
    const executor = await WorkspaceExecutor.start({
      workspace: workspace.path,
      maxFileBytes: 32 * 1024 * 1024,
    });
    try {
      assert.equal(executor.sandboxed, true);
      const [small, big, again] = await Promise.all([
        executor.inspect(["missing.txt"]),
        executor.inspect(["big.txt"]),
        executor.inspect(["big.txt"]),
      ]);
      assert.equal(small[0]?.missing, true);
      assert.equal(big[0]?.text?.length, text.length);
      assert.ok(big[0]?.text === text && again[0]?.text === text);
      const edited = await executor.edit([{
        path: "copy.txt",
        contents: text,
      }]);
      assert.equal(
        edited.files[0]?.sha256,
        createHash("sha256").update(
          await Deno.readFile(`${workspace.path}/copy.txt`),
        ).digest("hex"),
      );
      assert.equal(await Deno.readTextFile(`${workspace.path}/copy.txt`), text);
    } finally {
      executor.close();
    }
  },
);
