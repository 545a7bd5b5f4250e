// A client written elsewhere: the MCP Inspector's CLI (pinned to 1.0.3,
// fetched by npx) starts `loom mcp --servers`, lists the namespaced tools
// and calls one through the gateway.
import assert from "node:assert/strict";
import { REPO_ROOT, tempDir } from "../../_kit.ts";
import { denoEntry, FAULT, gatewayArgs } from "./_gateway_client.ts";

const INSPECTOR = "@modelcontextprotocol/inspector@1.0.3";

async function inspector(args: string[]): Promise<unknown> {
  const output = await new Deno.Command("npx", {
    args: ["-y", INSPECTOR, "--cli", ...args],
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { npm_config_yes: "true", npm_config_update_notifier: "false" },
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  assert.equal(
    output.code,
    0,
    `npx ${INSPECTOR} exited ${output.code} (is the npm registry reachable?)\n${
      new TextDecoder().decode(output.stderr)
    }\n${stdout}`,
  );
  return JSON.parse(stdout);
}

Deno.test("the MCP Inspector CLI lists the gateway's namespaced tools and calls one through it", async () => {
  await using dir = await tempDir();
  const servers = `${dir.path}/.mcp.json`;
  await Deno.writeTextFile(
    servers,
    JSON.stringify({ mcpServers: { fault: denoEntry(FAULT) } }),
  );
  const command = [Deno.execPath(), ...gatewayArgs(servers)];
  const listed = await inspector([...command, "--method", "tools/list"]) as {
    tools: { name: string }[];
  };
  const names = listed.tools.map((tool) => tool.name);
  assert.ok(names.includes("fault__small"), names.join(", "));
  assert.ok(names.includes("find_in_result"));
  const called = await inspector([
    ...command,
    "--method",
    "tools/call",
    "--tool-name",
    "fault__big",
    "--tool-arg",
    "bytes=20000",
  ]) as { content: { text: string }[] };
  const descriptor = JSON.parse(called.content[0]!.text);
  assert.equal(descriptor.server, "fault");
  assert.equal(descriptor.result, "result-1");
});
