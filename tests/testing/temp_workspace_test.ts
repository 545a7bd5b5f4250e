import assert from "node:assert/strict";
import { tempWorkspace } from "../../testing.ts";

Deno.test("tempWorkspace() writes the files and removes everything when disposed", async () => {
  let path = "";
  {
    await using workspace = await tempWorkspace({
      "top.txt": "1",
      "deep/er/file.ts": "2",
    });
    path = workspace.path;
    assert.equal(await Deno.realPath(path), path);
    assert.equal(await Deno.readTextFile(`${path}/top.txt`), "1");
    assert.equal(await Deno.readTextFile(`${path}/deep/er/file.ts`), "2");
    await Deno.writeTextFile(`${path}/made-later.txt`, "3");
  }
  await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
});

Deno.test("tempWorkspace() refuses paths outside the workspace before creating anything", async () => {
  for (const name of ["/etc/x", "../x", "a/../../x"]) {
    await assert.rejects(
      tempWorkspace({ [name]: "no" }),
      (e: unknown) => e instanceof RangeError && e.message.includes(name),
    );
  }
});
