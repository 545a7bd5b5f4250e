// The HTTP handler of `loom mcp --http`, in process: the attacks a network
// peer can make — no token, a wrong one, the token in the query string,
// another path, another method; without a token (loopback only), a request
// a web page could send by DNS rebinding — each refused before any MCP
// server is built, and the right token reaching the SDK's transport.
import assert from "node:assert/strict";
import { MCP_PATH, mcpHttpHandler } from "../../lib/mcp/http_server.ts";
import { loadSdk } from "../../lib/mcp/gateway/sdk.ts";
import { createToolsServer } from "../../lib/mcp/stdio_server.ts";
import type { McpTools } from "../../lib/mcp/mcp_tools.ts";
import { initializeRequest } from "../_kit/mcp.ts";

const TOKEN = "tok-3b1f0c9e8d7a6b5c4d3e2f1a";
const URL_ = `http://127.0.0.1:8765${MCP_PATH}`;
const sdk = await loadSdk();

/** A handler that counts the MCP servers it builds (each over no tools). */
function handler(token: string | undefined) {
  let built = 0;
  const handle = mcpHttpHandler({
    token,
    sdk,
    server: () => {
      built += 1;
      // initialize and tools/list never touch the tools.
      return createToolsServer({} as McpTools, sdk, { log: () => {} });
    },
  });
  return { handle, built: () => built };
}

Deno.test("a request without the right bearer token is refused with 401 before any MCP server is built", async (t) => {
  const { handle, built } = handler(TOKEN);
  const cases: [string, Request][] = [
    ["no Authorization header", initializeRequest(URL_)],
    [
      "a wrong token",
      initializeRequest(URL_, { Authorization: "Bearer nope" }),
    ],
    [
      "the token with one character changed",
      initializeRequest(URL_, {
        Authorization: `Bearer ${TOKEN.slice(0, -1)}b`,
      }),
    ],
    [
      "the token as a prefix of a longer one",
      initializeRequest(URL_, {
        Authorization: `Bearer ${TOKEN}x`,
      }),
    ],
    [
      "the token without the Bearer scheme",
      initializeRequest(URL_, {
        Authorization: TOKEN,
      }),
    ],
    [
      "the token under the Basic scheme",
      initializeRequest(URL_, {
        Authorization: `Basic ${btoa(`loom:${TOKEN}`)}`,
      }),
    ],
    [
      "the token in the query string",
      initializeRequest(
        `${URL_}?access_token=${TOKEN}&token=${TOKEN}`,
      ),
    ],
    [
      "the token in another header",
      initializeRequest(URL_, {
        "X-Api-Key": TOKEN,
        Cookie: `token=${TOKEN}`,
      }),
    ],
  ];
  for (const [name, request] of cases) {
    await t.step(name, async () => {
      const response = await handle(request);
      assert.equal(response.status, 401);
      assert.match(
        response.headers.get("www-authenticate") ?? "",
        /^Bearer realm="loom"$/,
      );
      await response.body?.cancel();
    });
  }
  assert.equal(built(), 0);
});

Deno.test("another path is 404 with or without the token, another method 405", async () => {
  const { handle, built } = handler(TOKEN);
  for (
    const path of ["/", "/mcp/", "/mcp/x", "/MCP", "/sse", "/.well-known/x"]
  ) {
    for (const headers of [{}, { Authorization: `Bearer ${TOKEN}` }]) {
      const response = await handle(
        initializeRequest(`http://127.0.0.1:8765${path}`, headers),
      );
      assert.equal(response.status, 404, path);
      await response.body?.cancel();
    }
  }
  for (const method of ["GET", "DELETE", "PUT", "OPTIONS"]) {
    const response = await handle(
      new Request(URL_, {
        method,
        headers: { Authorization: `Bearer ${TOKEN}` },
      }),
    );
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get("allow"), "POST");
    await response.body?.cancel();
  }
  assert.equal(built(), 0);
});

Deno.test("the right token (any case of the scheme) reaches the SDK's transport: a fresh server per request answers", async () => {
  const { handle, built } = handler(TOKEN);
  for (const scheme of ["Bearer", "bearer"]) {
    const response = await handle(
      initializeRequest(URL_, { Authorization: `${scheme} ${TOKEN}` }),
    );
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.match(text, /"serverInfo":\{"name":"loom"/);
  }
  assert.equal(built(), 2);
});

Deno.test("without a token, a request whose Host or Origin is not a loopback one is refused with 403 (DNS rebinding)", async () => {
  const { handle, built } = handler(undefined);
  for (
    const headers of [
      { Host: "evil.example:8765" },
      { Host: "evil.example" },
      { Host: "" },
      { Host: "127.0.0.1.evil.example:8765" },
      { Host: "127.0.0.1:8765", Origin: "http://evil.example" },
      { Host: "127.0.0.1:8765", Origin: "null" },
    ]
  ) {
    const response = await handle(initializeRequest(URL_, headers));
    assert.equal(response.status, 403, JSON.stringify(headers));
    await response.body?.cancel();
  }
  assert.equal(built(), 0);
  for (
    const headers of [
      { Host: "127.0.0.1:8765" },
      { Host: "localhost:8765", Origin: "http://localhost:8765" },
      { Host: "[::1]:8765" },
    ]
  ) {
    const response = await handle(initializeRequest(URL_, headers));
    assert.equal(response.status, 200, JSON.stringify(headers));
    await response.body?.cancel();
  }
});
