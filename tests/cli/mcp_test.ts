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

Deno.test("two loom mcp servers on one store and session share one catalogue: a result stored via one reads via the other", async () => {
  await import("../_session_key.ts");
  const { connect } = await import("../mcp/_client.ts");
  await using root = await tempDir();
  await using home = await tempDir();
  await Deno.writeTextFile(`${root.path}/a.json`, '{"a":[1,"two"]}');
  const extra = ["--store", `sqlite:${home.path}/loom.db`];
  await using one = await connect(root.path, extra);
  await using two = await connect(root.path, extra);
  const inspected = await one.call("inspect_files", { paths: ["a.json"] });
  const [file] = inspected.structuredContent?.files as {
    reference: Record<string, unknown>;
  }[];
  const read = await two.call("read_result", {
    reference: {
      ...file!.reference,
      select: { kind: "json_pointer", pointer: "/a/1" },
    },
  });
  assert.deepEqual(read.structuredContent, { selected_text: "two" });
  const again = await two.call("inspect_files", { paths: ["a.json"] });
  const [second] = again.structuredContent?.files as {
    reference: { result: string; sha256: string };
  }[];
  assert.notEqual(second!.reference.result, file!.reference.result);
  assert.equal(second!.reference.sha256, file!.reference.sha256);
  const listed = await one.call("list_results", { offset: 0 });
  assert.equal(
    (listed.structuredContent?.results as unknown[]).length,
    2,
  );
  const shown = await loom(
    "session",
    "show",
    "default",
    "--store",
    extra[1]!,
    "--verify",
  );
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /an MCP server's stored results/);
  assert.match(shown.stdout, /MAC chain intact/);
});
