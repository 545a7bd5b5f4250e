import assert from "node:assert/strict";
import { join, normalize } from "node:path";

const readme = await Deno.readTextFile("README.md");
const pages: Record<string, string> = {};
for await (const entry of Deno.readDir("docs")) {
  if (entry.isFile && entry.name.endsWith(".md")) {
    pages[`docs/${entry.name}`] = await Deno.readTextFile(`docs/${entry.name}`);
  }
}
/** README.md and every docs page, by path. */
const documentation: Record<string, string> = { "README.md": readme, ...pages };
const config = JSON.parse(await Deno.readTextFile("deno.json")) as {
  license: string;
  publish: { exclude: string[] };
  imports: Record<string, string>;
};

/** The installed @anthropic-ai/sdk package folder in Deno's npm cache. */
async function anthropicSdkFolder(): Promise<string> {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const { npmCache } = JSON.parse(new TextDecoder().decode(info.stdout)) as {
    npmCache: string;
  };
  const lock = JSON.parse(await Deno.readTextFile("deno.lock")) as {
    specifiers: Record<string, string>;
  };
  // "1.14.0_zod@4.6.7": the version, then the peer dependencies.
  const version = lock.specifiers[config.imports["@anthropic-ai/sdk"]!]!
    .split("_")[0];
  return `${npmCache}/registry.npmjs.org/@anthropic-ai/sdk/${version}`;
}

Deno.test("The documentation's live Anthropic models are in the SDK's model list and not deprecated", async () => {
  const models = Object.values(documentation).flatMap((text) =>
    [...text.matchAll(/anthropic:(claude-[a-z0-9-]+)/g)].map((m) => m[1]!)
  );
  assert.ok(
    models.length > 0,
    "the documentation shows a live Anthropic example",
  );
  const sdk = await anthropicSdkFolder();
  const types = await Deno.readTextFile(
    `${sdk}/resources/messages/messages.d.ts`,
  );
  const known = /export type Model = ([^;]+);/.exec(types)?.[1] ?? "";
  const deprecated = await Deno.readTextFile(
    `${sdk}/internal/data/deprecated-models.js`,
  );
  for (const model of new Set(models)) {
    assert.ok(
      known.includes(`'${model}'`),
      `${model} is in the SDK's Model type`,
    );
    assert.ok(
      !deprecated.includes(`'${model}'`),
      `${model} is not on the SDK's deprecation list`,
    );
  }
});

Deno.test("LICENSE is the MIT licence deno.json names", async () => {
  assert.equal(config.license, "MIT");
  const license = await Deno.readTextFile("LICENSE");
  assert.match(license, /^MIT License\n/);
  assert.match(license, /Permission is hereby granted, free of charge/);
});

Deno.test("deno publish ships only what users need", async () => {
  const dry = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const output = new TextDecoder().decode(dry.stdout) +
    new TextDecoder().decode(dry.stderr);
  assert.equal(dry.code, 0, output);
  const files = [
    ...output.matchAll(/file:\/\/\S*?\/((?:[^/\s]+\/)*[^/\s]+)\s/g),
  ]
    .map((m) => m[1]!);
  for (const path of output.matchAll(/^\s+file:\/\/(\S+)/gm)) {
    const relative = path[1]!.slice(Deno.cwd().length + 1);
    assert.ok(
      /^(lib\/|docs\/[a-z_]+\.md$|(mod|reference|slice|session|ai_sdk|anthropic|openai|testing|cli)\.ts$|deno\.json$|README\.md$|LICENSE$)/
        .test(
          relative,
        ),
      `${relative} is not something users need`,
    );
  }
  assert.ok(files.length > 0);
  for (
    const excluded of ["tools/", "tests/", "fixtures/", ".ci/", ".github/"]
  ) {
    assert.ok(config.publish.exclude.includes(excluded), excluded);
  }
});

Deno.test("The README's set-up commands keep Deno's download and check lines out", () => {
  const setup = /```sh\n([^`]+)```/.exec(readme)?.[1] ?? "";
  assert.deepEqual(setup.trim().split("\n"), [
    "npx -y deno@2.9.6 task --quiet demo",
    "npx -y deno@2.9.6 task --quiet test",
  ]);
});

/** Relative link targets of a Markdown text: `[text](target)`, no URLs. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/.test(target));
}

/** GitHub's anchor of a heading: lower case, punctuation gone, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

Deno.test("The README is a landing page of at most 250 lines that links every docs page", () => {
  const lines = readme.split("\n").length - 1;
  assert.ok(lines <= 250, `README.md has ${lines} lines`);
  const docs = Object.keys(pages);
  assert.ok(docs.length >= 3, `docs/ has ${docs.length} pages`);
  const linked = new Set(relativeLinks(readme));
  for (const page of docs) {
    assert.ok(linked.has(page), `README.md links ${page}`);
  }
});

Deno.test("Every relative link of the README and the docs pages resolves, anchors included", async () => {
  let checked = 0;
  for (const [path, text] of Object.entries(documentation)) {
    const folder = path.includes("/")
      ? path.slice(0, path.lastIndexOf("/"))
      : ".";
    for (const target of relativeLinks(text)) {
      const [file, anchor] = target.split("#") as [string, string | undefined];
      const resolved = file === "" ? path : normalize(join(folder, file));
      const stat = await Deno.stat(resolved).catch(() => null);
      assert.ok(stat !== null, `${path} links ${target}, which does not exist`);
      if (anchor !== undefined && resolved.endsWith(".md")) {
        const headings = [
          ...(await Deno.readTextFile(resolved)).matchAll(/^#+ (.*)$/gm),
        ].map((m) => anchorOf(m[1]!));
        assert.ok(
          headings.includes(anchor),
          `${path} links ${target}, and ${resolved} has no such heading`,
        );
      }
      checked++;
    }
  }
  assert.ok(checked >= Object.keys(pages).length, `checked ${checked} links`);
});

Deno.test("Every deno task command the documentation shows runs with --quiet", () => {
  let commands = 0;
  for (const [path, text] of Object.entries(documentation)) {
    for (const block of text.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
      for (const line of block[1]!.split("\n")) {
        if (!/\bdeno(@[\d.]+)? task\b/.test(line)) continue;
        commands++;
        assert.match(
          line,
          /\bdeno(@[\d.]+)? task --quiet /,
          `${path}: ${line} would print Deno's own lines before its output`,
        );
      }
    }
  }
  assert.ok(commands >= 2, `found ${commands} commands`);
});
