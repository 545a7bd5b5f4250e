import assert from "node:assert/strict";
import { type Effects, inspectFiles } from "../../lib/slice/_execute.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import {
  MODEL_MESSAGE_CHARS,
  MODEL_TEXT_CHARS,
} from "../../lib/slice/_clip.ts";

function failingInspect(
  code: string,
  error: (path: string) => string,
): Effects {
  return {
    inspect: (paths) =>
      Promise.resolve(
        paths.map((path) => ({ path, code, error: error(path) })),
      ),
    edit: () => Promise.reject(new Error("unused")),
    survey: () => Promise.reject(new Error("unused")),
    runTests: () => Promise.reject(new Error("unused")),
    close: () => {},
  };
}

Deno.test("inspectFiles() clips a 40 KB model path in the failure it reports", async (t) => {
  const long = "a/".repeat(20_000) + "x.txt";
  for (const code of ["io_error", "not_found"]) {
    await t.step(code, async () => {
      const report = await inspectFiles(
        failingInspect(
          code,
          (path) => `Cannot read ${JSON.stringify(path)}: name too long`,
        ),
        new ResultStore(),
        [long],
      );
      const file = report.files[0]!;
      assert.ok(file.path.length <= MODEL_TEXT_CHARS + 1);
      assert.ok(file.path.startsWith("a/a/"));
      if ("error" in file && file.error !== undefined) {
        assert.ok(file.error.reason.length <= MODEL_MESSAGE_CHARS + 1);
        assert.match(file.error.reason, /^Cannot read "a\/a\//);
      }
      assert.ok(JSON.stringify(report).length < 2_000);
    });
  }
});
