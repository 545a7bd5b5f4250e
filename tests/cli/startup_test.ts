import assert from "node:assert/strict";
import { join } from "node:path";
import { bundle } from "../../tools/bundle.ts";
import { tempDir } from "../_kit.ts";
import { staticClosure } from "./_module_graph.ts";

Deno.test("loom --help loads no npm package and no command module", async () => {
  const loaded = await staticClosure("cli.ts");
  const npm = loaded.filter((s) => s.startsWith("npm:"));
  assert.deepEqual(npm, []);
  // Only the dispatcher, its private helpers and top-level facts (errors,
  // version): no command module, nothing of lib/context, lib/slice, ….
  const local = loaded.map((s) => s.replace(/^.*\/(lib\/|cli\.ts)/, "$1"));
  const stray = local.filter((path) =>
    !/^(cli\.ts|lib\/cli\/(main|cli_io|_[a-z_]+)\.ts|lib\/[a-z_]+\.ts)$/.test(
      path,
    )
  );
  assert.deepEqual(stray, []);
  assert.ok(local.includes("lib/cli/main.ts"));
});

Deno.test("each command still loads what it needs when it runs", async () => {
  const loaded = await staticClosure("lib/cli/render.ts");
  assert.ok(loaded.some((s) => s.startsWith("npm:") && s.includes("yaml")));
});

Deno.test("loom mcp loads the MCP SDK only when its server starts", async () => {
  const loaded = await staticClosure("lib/cli/mcp.ts");
  assert.deepEqual(
    loaded.filter((s) => s.includes("modelcontextprotocol")),
    [],
  );
  const source = await Deno.readTextFile("lib/mcp/stdio_server.ts");
  assert.match(
    source,
    /import\("@modelcontextprotocol\/sdk\/server\/index\.js"\)/,
  );
});

Deno.test("the bundle keeps the provider SDKs and tokenizers out and loads them by npm: specifier", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "loom.js");
  const specifiers = await bundle(out);
  const config = JSON.parse(await Deno.readTextFile("deno.json")) as {
    imports: Record<string, string>;
  };
  const names = [
    "@anthropic-ai/sdk",
    "openai",
    "gpt-tokenizer",
    "ai-tokenizer",
    "@modelcontextprotocol/sdk",
  ];
  assert.deepEqual(specifiers, names.map((name) => config.imports[name]));
  const text = await Deno.readTextFile(out);
  for (const [i, name] of names.entries()) {
    // The tokenizers are imported by subpath ("gpt-tokenizer/encoding/…").
    assert.ok(text.includes(`import("${specifiers[i]}`), name);
    assert.ok(!text.includes(`import("${name}`), name);
  }
  // The tokenizers' tables alone are 7 MB; without them the CLI is ~1.6 MB.
  assert.ok(text.length < 3_000_000, `the bundle is ${text.length} bytes`);
  const help = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", out, "--help"],
    cwd: dir.path,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(help.code, 0, new TextDecoder().decode(help.stderr));
  assert.match(new TextDecoder().decode(help.stdout), /^loom [0-9.]+ — /);
});
