// The README's TypeScript examples are run as written, and what they print
// must match the `// => output` comments in them, so the
// quick start cannot silently rot. `…` in a comment stands for anything.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir } from "../_kit.ts";

const readme = await Deno.readTextFile(
  join(REPO_ROOT, "README.md"),
);
const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) =>
  m[1] ?? ""
);

/** The comments that document output: `// => …` lines, in order. */
function documentedOutputs(source: string): string[] {
  return [...source.matchAll(/^\s*\/\/ => (.*)$/gm)].map((m) => m[1] ?? "");
}

function toPattern(documented: string): RegExp {
  const escaped = documented.split("…").map((part) =>
    part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  );
  return new RegExp(escaped.join("[\\s\\S]*"));
}

Deno.test("README has TypeScript examples that document their output", () => {
  assert.ok(examples.length >= 2, `found ${examples.length} examples`);
  assert.ok(examples.some((source) => documentedOutputs(source).length > 0));
});

for (const [index, source] of examples.entries()) {
  Deno.test(`README example ${index + 1} runs and prints what it documents`, async () => {
    // The example lives in a temporary directory, never in the checkout; the
    // repository's deno.json resolves `@loom/loom` as a user's import would.
    await using dir = await tempDir();
    const file = join(dir.path, "readme_example.ts");
    {
      await Deno.writeTextFile(file, source);
      const run = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--config",
          join(REPO_ROOT, "deno.json"),
          "--allow-read",
          file,
        ],
        cwd: dir.path,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      const stdout = new TextDecoder().decode(run.stdout);
      assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
      // Deno prints objects across lines when long; compare with whitespace folded.
      const folded = stdout.replace(/\s+/g, " ");
      for (const documented of documentedOutputs(source)) {
        assert.match(
          folded,
          toPattern(documented.replace(/\s+/g, " ")),
          `stdout was:\n${stdout}`,
        );
      }
    }
  });
}
