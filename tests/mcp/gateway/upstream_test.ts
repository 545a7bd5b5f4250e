// A remote upstream, end to end: an MCP server of the test's own over
// Streamable HTTP (the SDK's server transport, on 127.0.0.1, behind a
// token), configured with "type": "http", its URL and headers expanded from
// the gateway's environment. Its large answer is offloaded as a stdio
// upstream's is, and a small one passes through unchanged. And a server's
// start: bounded by --start-timeout, not by the calls' --call-timeout.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { tempDir } from "../../_kit.ts";
import {
  connectGateway,
  denoEntry,
  descriptorOf,
  FAULT,
  readArgs,
  serversFile,
} from "../../_kit/mcp.ts";
import { localServer } from "../../_kit/local_server.ts";

Deno.test("a remote upstream over Streamable HTTP, its URL and headers expanded from the environment, is offloaded like a stdio one", async () => {
  const token = crypto.randomUUID();
  const big = JSON.stringify(
    Array.from({ length: 3_000 }, (_, i) => ({ id: i, name: `item ${i}` })),
    null,
    2,
  );
  const mcp = new McpServer({ name: "remote", version: "1.0.0" });
  mcp.registerTool(
    "big",
    { description: "A large JSON answer" },
    () => ({ content: [{ type: "text", text: big }] }),
  );
  mcp.registerTool(
    "small",
    { description: "A small answer" },
    () => ({ content: [{ type: "text", text: "small remote" }] }),
  );
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    enableJsonResponse: true,
  });
  await mcp.connect(transport);
  const refused: string[] = [];
  const server = localServer(
    (request) => {
      // A listener needs a token; the fallback header shows ${VAR:-default}.
      if (
        request.headers.get("authorization") !== `Bearer ${token}` ||
        request.headers.get("x-loom-test") !== "fallback"
      ) {
        refused.push(request.method);
        return new Response("unauthorized", { status: 401 });
      }
      return transport.handleRequest(request);
    },
  );
  try {
    await using dir = await tempDir();
    const servers = await serversFile(dir.path, {
      remote: {
        type: "http",
        url: "http://127.0.0.1:${LOOM_TEST_REMOTE_PORT}/mcp",
        headers: {
          Authorization: "Bearer ${LOOM_TEST_REMOTE_TOKEN}",
          "X-Loom-Test": "${LOOM_TEST_UNSET_VARIABLE:-fallback}",
        },
      },
    });
    await using gateway = await connectGateway(servers, [], {
      env: {
        LOOM_TEST_REMOTE_PORT: String(server.port),
        LOOM_TEST_REMOTE_TOKEN: token,
      },
      denoFlags: ["--allow-net=127.0.0.1"],
    });
    const { tools } = await gateway.client.listTools();
    const names = tools.map((tool: { name: string }) => tool.name);
    assert.ok(names.includes("remote__big"), names.join(", "));

    const small = await gateway.call("remote__small", {});
    assert.deepEqual(small, {
      content: [{ type: "text", text: "small remote" }],
    });

    const answer = await gateway.call("remote__big", {});
    const descriptor = descriptorOf(answer);
    const bytes = new TextEncoder().encode(big);
    assert.equal(descriptor.server, "remote");
    assert.equal(descriptor.tool, "big");
    assert.equal(descriptor.utf8_bytes, bytes.length);
    assert.equal(
      descriptor.sha256,
      createHash("sha256").update(bytes).digest("hex"),
    );
    assert.equal(descriptor.media_type, "application/json");
    assert.match(
      gateway.stderr(),
      /remote\/big: \d+ bytes upstream → \d+ bytes to the host/,
    );
    const read = await gateway.call(
      "read_result",
      readArgs(descriptor, { kind: "json_pointer", pointer: "/42/name" }),
    );
    assert.equal(read.structuredContent.selected_text, "item 42");
    assert.deepEqual(refused, []);
  } finally {
    await mcp.close();
    await server[Symbol.asyncDispose]();
  }
});

Deno.test("a server slower to start than --call-timeout is still listed and called; one slower than --start-timeout is left out, saying which deadline", async () => {
  await using dir = await tempDir();
  // The fault server reads nothing for 3 s, then answers at once.
  const servers = await serversFile(dir.path, {
    slow: denoEntry(FAULT, ["--slow-start", "3000"]),
  });
  const [patient, impatient] = await Promise.all([
    connectGateway(servers, ["--catalog", "full", "--call-timeout", "2s"]),
    connectGateway(servers, ["--catalog", "full", "--start-timeout", "1s"]),
  ]);
  await using _patient = patient;
  await using _impatient = impatient;
  const listed = (await patient.tools()).map((tool) => tool.name);
  assert.ok(listed.includes("slow__small"), listed.join(", "));
  const small = await patient.call("slow__small", {});
  assert.equal(small.isError, undefined, JSON.stringify(small));
  const refused = (await impatient.tools()).map((tool) => tool.name);
  assert.ok(!refused.includes("slow__small"), refused.join(", "));
  assert.match(
    impatient.stderr(),
    /server slow: no tools listed: Server slow failed to start: it did not answer initialize within 1 s \(--start-timeout\)/,
  );
});
