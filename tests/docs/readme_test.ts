// The README's TypeScript examples are run as written, so the quick start
// cannot silently rot.
import assert from "node:assert/strict";

const readme = await Deno.readTextFile(
  new URL("../../README.md", import.meta.url),
);
const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) =>
  m[1] ?? ""
);

Deno.test("README has TypeScript examples to run", () => {
  assert.ok(examples.length >= 2, `found ${examples.length} examples`);
});

for (const [index, source] of examples.entries()) {
  Deno.test(`README example ${index + 1} runs without error`, async () => {
    const file = await Deno.makeTempFile({
      dir: Deno.cwd(),
      prefix: ".readme_example_",
      suffix: ".ts",
    });
    try {
      await Deno.writeTextFile(file, source);
      const run = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-read", file],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(run.stderr);
      assert.equal(run.code, 0, stderr);
    } finally {
      await Deno.remove(file);
    }
  });
}
