import assert from "node:assert/strict";
import { parseMcpArguments } from "../../lib/cli/mcp.ts";
import { loom, loomIn, tempDir } from "../_kit.ts";
import {
  connectHttp,
  connectRoot,
  type Descriptor,
  readArgs,
  startHttp,
  tokenFile,
  toolCallRequest,
} from "../_kit/mcp.ts";
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

Deno.test("parseMcpArguments() takes --catalog full, search or auto, with --servers only", async (t) => {
  await checkParser(t, parseMcpArguments, [
    ["--catalog search", ["--servers", "s.json", "--catalog", "search"], {
      root: ".",
      rootGiven: false,
      gateway: { servers: "s.json", list: false, catalog: "search" },
      limits: {},
    }],
    ["another mode", ["--servers", "s.json", "--catalog", "lazy"], {
      usage: '--catalog is "lazy"; it must be full, search, auto',
    }],
    ["without --servers", ["--catalog", "full"], {
      usage: "--catalog needs --servers FILE",
    }],
  ]);
});

Deno.test("parseMcpArguments() takes the calls' and the servers' start deadlines apart, with --servers only", async (t) => {
  await checkParser(t, parseMcpArguments, [
    ["both", [
      "--servers",
      "s.json",
      "--call-timeout",
      "3s",
      "--start-timeout",
      "2m",
    ], {
      root: ".",
      rootGiven: false,
      gateway: {
        servers: "s.json",
        list: false,
        callTimeoutMs: 3_000,
        startTimeoutMs: 120_000,
      },
      limits: {},
    }],
    ["without --servers", ["--start-timeout", "1m"], {
      usage: "--start-timeout needs --servers FILE",
    }],
  ]);
});

Deno.test("parseMcpArguments() takes --http only with a token, or without one only on a loopback address", async (t) => {
  await checkParser(t, parseMcpArguments, [
    ["--http with a token file", [
      "--http",
      "10.0.0.5:8765",
      "--token-file",
      "/etc/loom/token",
    ], {
      root: ".",
      http: { hostname: "10.0.0.5", port: 8765, tokenFile: "/etc/loom/token" },
      limits: {},
    }],
    ["an IPv6 loopback without a token", [
      "--http",
      "[::1]:0",
      "--insecure-no-token",
    ], { root: ".", http: { hostname: "::1", port: 0 }, limits: {} }],
    ["no token: refused, saying so", ["--http", "127.0.0.1:8765"], {
      usage:
        /^--http 127\.0\.0\.1:8765 needs --token-file FILE: every request must carry that bearer token/,
    }],
    ["--insecure-no-token on every address", [
      "--http",
      "0.0.0.0:8765",
      "--insecure-no-token",
    ], {
      usage:
        /^--insecure-no-token serves only on a loopback address .* not 0\.0\.0\.0:8765/,
    }],
    ["--insecure-no-token on a name", [
      "--http",
      "loom.internal:8765",
      "--insecure-no-token",
    ], { usage: /^--insecure-no-token serves only on a loopback address/ }],
    ["both token flags", [
      "--http",
      "127.0.0.1:1",
      "--token-file",
      "t",
      "--insecure-no-token",
    ], { usage: /exclude each other/ }],
    ["a token file without --http", ["--token-file", "t"], {
      usage: "--token-file needs --http HOST:PORT",
    }],
    ["no port", ["--http", "127.0.0.1", "--token-file", "t"], {
      usage: /^Invalid --http 127\.0\.0\.1: expected HOST:PORT/,
    }],
    ["a port over 65535", ["--http", "127.0.0.1:70000", "--token-file", "t"], {
      usage: /^Invalid --http 127\.0\.0\.1:70000/,
    }],
    ["a URL instead of HOST:PORT", [
      "--http",
      "http://127.0.0.1:80/mcp",
      "--token-file",
      "t",
    ], { usage: /^Invalid --http/ }],
    ["the gateway on a store over HTTP", [
      "--servers",
      "s.json",
      "--store",
      "postgres://db/loom",
      "--max-age",
      "3600s",
      "--http",
      "127.0.0.1:0",
      "--insecure-no-token",
    ], {
      gateway: { servers: "s.json", list: false, maxAgeMs: 3_600_000 },
      rootGiven: false,
      root: ".",
      session: "default",
      store: "postgres://db/loom",
      http: { hostname: "127.0.0.1", port: 0 },
      limits: {},
    }],
    ["--list over HTTP", [
      "--servers",
      "s.json",
      "--list",
      "--http",
      "127.0.0.1:0",
      "--insecure-no-token",
    ], { usage: /^--list prints the servers' tools and exits/ }],
  ]);
});

Deno.test("loom mcp --http refuses to start without a usable token: exit 2 saying so, nothing served", async (t) => {
  await using dir = await tempDir();
  const token = `${dir.path}/token`;
  const start = (...args: string[]) =>
    loom("mcp", "--root", dir.path, "--http", ...args);
  await t.step("a non-loopback address without a token", async () => {
    const out = await start("0.0.0.0:0");
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /needs --token-file FILE/);
    assert.doesNotMatch(out.stderr, /serving/);
  });
  await t.step("a non-loopback address with --insecure-no-token", async () => {
    const out = await start("0.0.0.0:0", "--insecure-no-token");
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /only on a loopback address/);
  });
  for (
    const [name, text, mode, why] of [
      ["an empty token file", " \n", 0o600, /it is empty/],
      ["a short token", "abc\n", 0o600, /fewer than 16/],
      ["a token with a space", "abcdefgh ijklmnopq\n", 0o600, /spaces/],
      [
        "a token file other users can write",
        "0123456789abcdef0123\n",
        0o662,
        /other users can write it \(mode 662\)/,
      ],
    ] as const
  ) {
    await t.step(name, async () => {
      await Deno.writeTextFile(token, text);
      await Deno.chmod(token, mode);
      const out = await start("127.0.0.1:0", "--token-file", token);
      assert.equal(out.code, 2, out.stderr);
      assert.match(out.stderr, /Cannot use the token file /);
      assert.match(out.stderr, why);
      assert.doesNotMatch(out.stderr, /serving/);
    });
  }
  await t.step("a missing token file", async () => {
    const out = await start("127.0.0.1:0", "--token-file", `${token}.none`);
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /token\.none: it does not exist/);
  });
});

Deno.test("loom mcp --http serves the tools at /mcp to a host with the token, and refuses every request without it", async () => {
  await using root = await tempDir();
  await using home = await tempDir();
  await Deno.writeTextFile(`${root.path}/a.json`, '{"a":[1,"two"]}');
  const { path, token } = await tokenFile(home.path);
  await using server = await startHttp(["--root", root.path], [
    "--token-file",
    path,
  ]);
  assert.match(server.stderr(), /\(bearer token required\)/);
  await using host = await connectHttp(server.url, token);
  const inspected = await host.call("inspect_files", { paths: ["a.json"] });
  const [file] = inspected.structuredContent.files;
  const read = await host.call(
    "read_result",
    readArgs(file, { kind: "json_pointer", pointer: "/a/1" }),
  );
  assert.deepEqual(read.structuredContent, { selected_text: "two" });
  const post = (url: URL | string, headers: Record<string, string> = {}) =>
    fetch(toolCallRequest(url, "list_results", { offset: 0 }, headers));
  for (
    const [url, headers] of [
      [server.url, {}],
      [server.url, { Authorization: "Bearer wrong-token-0123456789" }],
      [`${server.url}?access_token=${token}&token=${token}`, {}],
    ] as const
  ) {
    const refused = await post(url, headers);
    assert.equal(refused.status, 401);
    assert.equal(
      refused.headers.get("www-authenticate"),
      'Bearer realm="loom"',
    );
    assert.doesNotMatch(await refused.text(), /result-1/);
  }
  const elsewhere = await post(new URL("/", server.url), {
    Authorization: `Bearer ${token}`,
  });
  assert.equal(elsewhere.status, 404);
  await elsewhere.body?.cancel();
  await host.client.close();
  assert.equal(await server.stop(), 0);
  assert.equal(server.stderr().includes(token), false);
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
  await using root = await tempDir();
  await using home = await tempDir();
  await Deno.writeTextFile(`${root.path}/a.json`, '{"a":[1,"two"]}');
  const extra = ["--store", `sqlite:${home.path}/loom.db`];
  await using one = await connectRoot(root.path, extra);
  await using two = await connectRoot(root.path, extra);
  const inspected = await one.call("inspect_files", { paths: ["a.json"] });
  const [file] = inspected.structuredContent.files as Descriptor[];
  const read = await two.call(
    "read_result",
    readArgs(file!, { kind: "json_pointer", pointer: "/a/1" }),
  );
  assert.deepEqual(read.structuredContent, { selected_text: "two" });
  const again = await two.call("inspect_files", { paths: ["a.json"] });
  const [second] = again.structuredContent.files as Descriptor[];
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
