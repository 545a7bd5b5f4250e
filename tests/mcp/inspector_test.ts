// A client written elsewhere: the MCP Inspector's CLI mode (pinned to
// 1.0.3, fetched by npx, which CI has beside node) starts `loom mcp` itself
// and lists its tools. Not skipped when npx is missing or the package cannot
// be fetched: the test fails and says why.
import assert from "node:assert/strict";
import { REPO_ROOT, tempDir } from "../_kit.ts";
import { serverArgs } from "./_client.ts";

const INSPECTOR = "@modelcontextprotocol/inspector@1.0.3";

Deno.test("the MCP Inspector CLI lists loom mcp's five tools", async () => {
  await using root = await tempDir();
  const args = [
    "-y",
    INSPECTOR,
    "--cli",
    Deno.execPath(),
    ...serverArgs(root.path),
    "--method",
    "tools/list",
  ];
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("npx", {
      args,
      cwd: REPO_ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      // A cold npx cache installs the inspector first: never prompt.
      env: { npm_config_yes: "true", npm_config_update_notifier: "false" },
    }).output();
  } catch (error) {
    throw new Error(
      `Cannot run the MCP Inspector: npx could not be started (${
        String(error)
      }); this test needs node and npx on PATH, as CI has them`,
    );
  }
  const stdout = new TextDecoder().decode(output.stdout);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(
    output.code,
    0,
    `npx ${
      args.join(" ")
    } exited ${output.code} (is the npm registry reachable to fetch ${INSPECTOR}?)\n${stderr}\n${stdout}`,
  );
  const listed = JSON.parse(stdout) as {
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
