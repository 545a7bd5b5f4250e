/**
 * Builds `dist/loom.js` (or the path given): `deno bundle` of `cli.ts` with
 * the provider SDKs and the tokenizers left out. The CLI imports
 * `@anthropic-ai/sdk` and `openai` only when a live provider makes its first
 * call, and `loom cost` imports `gpt-tokenizer` and `ai-tokenizer` (7 MB of
 * tables) when it counts, so the bundle keeps those imports external and
 * rewrites their bare names (and subpaths) to the `npm:` specifiers of
 * deno.json's import map: the single file still runs without the map, and
 * Deno fetches a package the first time a run needs it.
 *
 * ```sh
 * deno run --allow-read --allow-write --allow-run --allow-env tools/bundle.ts [OUT]
 * ```
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Import-map names the bundle leaves external (loaded on first use). */
export const EXTERNAL: readonly string[] = [
  "@anthropic-ai/sdk",
  "openai",
  "gpt-tokenizer",
  "ai-tokenizer",
  "@modelcontextprotocol/sdk",
];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Bundles the CLI to `out` and returns the `npm:` specifiers it imports.
 *
 * @param out Output file.
 * @returns The external specifiers written into the bundle.
 */
export async function bundle(out: string): Promise<string[]> {
  const config = JSON.parse(
    await Deno.readTextFile(join(root, "deno.json")),
  ) as { imports: Record<string, string> };
  const args = ["bundle", "--platform=deno", "-o", out];
  for (const name of EXTERNAL) {
    args.push(`--external=${name}`, `--external=${name}/*`);
  }
  args.push(join(root, "cli.ts"));
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    stdin: "null",
    stdout: "inherit",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(
      `Cannot bundle cli.ts: deno bundle exited with ${code}: ${
        new TextDecoder().decode(stderr).trim()
      }`,
    );
  }
  let text = await Deno.readTextFile(out);
  const specifiers: string[] = [];
  for (const name of EXTERNAL) {
    const target = config.imports[name];
    if (target === undefined || !target.startsWith("npm:")) {
      throw new Error(
        `Cannot keep ${name} external: deno.json maps it to ${
          String(target)
        }, not an npm: specifier`,
      );
    }
    // `import("name")` or `import("name/sub/path")`, as the bundler left it.
    const bare = new RegExp(
      `import\\("${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(/[^"]*)?"\\)`,
      "g",
    );
    if (!bare.test(text)) {
      throw new Error(
        `Cannot rewrite ${name} in the bundle: it has no import("${name}") (is it still imported lazily?)`,
      );
    }
    text = text.replace(bare, (_, sub = "") => `import("${target}${sub}")`);
    specifiers.push(target);
  }
  await Deno.writeTextFile(out, text);
  return specifiers;
}

if (import.meta.main) {
  const out = Deno.args[0] ?? join(root, "dist", "loom.js");
  await Deno.mkdir(dirname(out), { recursive: true });
  const specifiers = await bundle(out);
  console.error(`bundle: ${out} (external: ${specifiers.join(", ")})`);
}
