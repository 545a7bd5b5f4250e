// A client written elsewhere: the MCP Inspector's CLI mode (pinned to
// 1.0.3, fetched by npx, which CI has beside node) starts `loom mcp` itself
// and lists its tools. Not skipped when npx is missing or the package cannot
// be fetched: the test fails and says why.
import assert from "node:assert/strict";
import { tempDir } from "../_kit.ts";
import { inspectorCli, mcpArgs } from "../_kit/mcp.ts";

Deno.test("the MCP Inspector CLI lists loom mcp's five tools", async () => {
  await using root = await tempDir();
  const listed = await inspectorCli([
    Deno.execPath(),
    ...mcpArgs(["--root", root.path]),
    "--method",
    "tools/list",
  ]) as {
    tools: { name: string; annotations?: { readOnlyHint?: boolean } }[];
  };
  assert.deepEqual(listed.tools.map((tool) => tool.name), [
    "inspect_files",
    "read_result",
    "find_in_result",
    "list_results",
    "write_file",
  ]);
  assert.deepEqual(
    listed.tools.map((tool) => tool.annotations?.readOnlyHint),
    [true, true, true, true, false],
  );
});
