import assert from "node:assert/strict";
import { join } from "node:path";
import { bundle } from "../../tools/bundle.ts";
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

Deno.test("the bundle keeps the provider SDKs out and loads them by npm: specifier", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = join(dir, "loom.js");
    const specifiers = await bundle(out);
    const config = JSON.parse(await Deno.readTextFile("deno.json")) as {
      imports: Record<string, string>;
    };
    assert.deepEqual(specifiers, [
      config.imports["@anthropic-ai/sdk"],
      config.imports["openai"],
    ]);
    const text = await Deno.readTextFile(out);
    for (const specifier of specifiers) {
      assert.ok(text.includes(`import(${JSON.stringify(specifier)})`));
    }
    assert.ok(!text.includes('import("openai")'));
    const help = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", out, "--help"],
      cwd: dir,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(help.code, 0, new TextDecoder().decode(help.stderr));
    assert.match(new TextDecoder().decode(help.stdout), /^loom [0-9.]+ — /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
