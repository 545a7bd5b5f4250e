// A client written elsewhere: the MCP Inspector's CLI (pinned to 1.0.3,
// fetched by npx) starts `loom mcp --servers`, lists the namespaced tools
// and calls one through the gateway.
import assert from "node:assert/strict";
import { tempDir } from "../../_kit.ts";
import {
  denoEntry,
  descriptorOf,
  FAULT,
  inspectorCli,
  mcpArgs,
  serversFile,
} from "../../_kit/mcp.ts";

Deno.test("the MCP Inspector CLI lists the gateway's namespaced tools and calls one through it", async () => {
  await using dir = await tempDir();
  const servers = await serversFile(dir.path, { fault: denoEntry(FAULT) });
  const command = [Deno.execPath(), ...mcpArgs(["--servers", servers])];
  const listed = await inspectorCli([...command, "--method", "tools/list"]) as {
    tools: { name: string }[];
  };
  const names = listed.tools.map((tool) => tool.name);
  assert.ok(names.includes("fault__small"), names.join(", "));
  assert.ok(names.includes("find_in_result"));
  const called = await inspectorCli([
    ...command,
    "--method",
    "tools/call",
    "--tool-name",
    "fault__big",
    "--tool-arg",
    "bytes=20000",
  ]);
  const descriptor = descriptorOf(called);
  assert.equal(descriptor.server, "fault");
  assert.equal(descriptor.result, "result-1");
});
