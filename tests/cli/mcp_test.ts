import assert from "node:assert/strict";
import { parseMcpArguments } from "../../lib/cli/mcp.ts";
import { loom, loomIn, tempDir } from "../_kit.ts";
import { checkParser } from "./_arguments.ts";

Deno.test("parseMcpArguments() reads the root, the session and the store limits, and nothing else", async (t) => {
  await checkParser(t, parseMcpArguments, [
    ["no flags: the current folder", [], { root: ".", limits: {} }],
    ["a root and a session", ["--root", "/r", "--session", "/s"], {
      root: "/r",
      session: "/s",
      limits: {},
    }],
    ["the store limits", [
      "--max-result-bytes",
      "100",
      "--max-total-bytes",
      "1000",
      "--max-results",
      "3",
    ], {
      root: ".",
      limits: { maxResultBytes: 100, maxTotalBytes: 1000, maxResults: 3 },
    }],
    ["--help", ["--help"], { help: /^Usage: loom mcp \[--root DIR\]/ }],
    ["a limit that is not a positive integer", ["--max-results", "0"], {
      usage: "Invalid --max-results 0: expected a positive integer",
    }],
    ["a positional argument", ["dir"], {
      usage:
        "Unexpected argument dir: this command takes no positional arguments",
    }],
  ]);
});

Deno.test("loom help mcp shows how to add the server to a host", async () => {
  const { code, stdout } = await loomIn("help", "mcp");
  assert.equal(code, 0);
  assert.match(stdout, /claude mcp add loom -- loom mcp --root \./);
  assert.match(stdout, /docs\/mcp\.md/);
});

Deno.test("loom mcp on a root that is not a folder exits 3 and writes nothing to standard output", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/file`, "x");
  const { code, stdout, stderr } = await loom(
    "mcp",
    "--root",
    `${dir.path}/file`,
  );
  assert.equal(stdout, "");
  assert.equal(code, 3);
  assert.match(stderr, /workspace_unavailable|not a directory/);
});
