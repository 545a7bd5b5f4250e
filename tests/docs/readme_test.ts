// The TypeScript examples of README.md and of every docs/*.md page are run as
// written, and what they print must match the `// => output` comments in them,
// so no example can silently rot. `…` in a comment stands for anything.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, tempDir } from "../_kit.ts";

/**
 * What the README held before the reference moved to `docs/` (issue 24): two
 * examples with five documented outputs. Moving text must not lose a check.
 */
const EXAMPLES_BEFORE_THE_MOVE = 2;
const OUTPUTS_BEFORE_THE_MOVE = 5;

/** README.md, then every page of docs/ in name order. */
async function documentationPages(): Promise<string[]> {
  const pages: string[] = [];
  for await (const entry of Deno.readDir(join(REPO_ROOT, "docs"))) {
    if (entry.isFile && entry.name.endsWith(".md")) {
      pages.push(`docs/${entry.name}`);
    }
  }
  return ["README.md", ...pages.sort()];
}

/** The ```ts blocks of a Markdown text, in order. */
function tsExamples(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) =>
    m[1] ?? ""
  );
}

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

const examples: { page: string; index: number; source: string }[] = [];
for (const page of await documentationPages()) {
  const markdown = await Deno.readTextFile(join(REPO_ROOT, page));
  for (const [index, source] of tsExamples(markdown).entries()) {
    examples.push({ page, index: index + 1, source });
  }
}

Deno.test("tsExamples() finds every ```ts block and nothing else", () => {
  const markdown = [
    "```ts",
    "console.log(1);",
    "// => 1",
    "```",
    "",
    "```sh",
    "deno task test",
    "```",
    "",
    "```ts",
    "const text = '```';",
    "```",
  ].join("\n");
  assert.deepEqual(tsExamples(markdown), [
    "console.log(1);\n// => 1\n",
    "const text = '```';\n",
  ]);
});

Deno.test("The documentation checks at least as many examples and outputs as the README did before the move", () => {
  const outputs = examples.flatMap((e) => documentedOutputs(e.source));
  assert.ok(
    examples.length >= EXAMPLES_BEFORE_THE_MOVE,
    `found ${examples.length} examples, the README had ${EXAMPLES_BEFORE_THE_MOVE}`,
  );
  assert.ok(
    outputs.length >= OUTPUTS_BEFORE_THE_MOVE,
    `found ${outputs.length} documented outputs, the README had ${OUTPUTS_BEFORE_THE_MOVE}`,
  );
  assert.ok(
    examples.some((e) =>
      e.page === "README.md" && documentedOutputs(e.source).length > 0
    ),
    "the README itself shows an example with its output",
  );
});

for (const { page, index, source } of examples) {
  Deno.test(`${page} example ${index} runs and prints what it documents`, async () => {
    // The example lives in a temporary directory, never in the checkout; the
    // repository's deno.json resolves `@loom/loom` as a user's import would.
    await using dir = await tempDir();
    const file = join(dir.path, "doc_example.ts");
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
  });
}
