import assert from "node:assert/strict";
import {
  expandVariables,
  GatewayConfigError,
  parseGatewayConfig,
  toolSettings,
} from "../../../lib/mcp/gateway/gateway_config.ts";
import { loom, tempDir } from "../../_kit.ts";

const parse = (value: unknown, env: Record<string, string> = {}) =>
  parseGatewayConfig(JSON.stringify(value), { file: "/p/.mcp.json", env });

Deno.test("parseGatewayConfig() reads the hosts' formats and expands variables as Claude Code does", async (t) => {
  await t.step(
    "mcpServers and VS Code's servers, stdio and remote entries",
    () => {
      const claude = parse({
        mcpServers: {
          fs: {
            command: "npx",
            args: ["-y", "x", "${ROOT:-/tmp}"],
            env: { K: "${KEY}" },
          },
          api: {
            type: "http",
            url: "https://h.test/mcp",
            headers: { A: "Bearer ${KEY}" },
          },
          old: { type: "sse", url: "http://127.0.0.1:1/sse" },
        },
      }, { KEY: "k" });
      assert.deepEqual(claude.servers.map((s) => [s.name, s.transport]), [
        ["fs", "stdio"],
        ["api", "http"],
        ["old", "sse"],
      ]);
      const fs = claude.servers[0]!;
      assert.ok(fs.transport === "stdio");
      assert.deepEqual(fs.args, ["-y", "x", "/tmp"]);
      assert.deepEqual(fs.env, { K: "k" });
      const vscode = parse({
        servers: { s: { type: "stdio", command: "srv" } },
      });
      assert.equal(vscode.servers[0]?.name, "s");
    },
  );
  await t.step(
    "${VAR:-default} takes the default when VAR is unset or empty",
    () => {
      assert.deepEqual(expandVariables("${A:-x}${B:-y}", { B: "" }), {
        text: "xy",
      });
    },
  );
  await t.step(
    "a loom mcp --servers entry and a disabled one are skipped",
    () => {
      const config = parse({
        mcpServers: {
          me: {
            command: "deno",
            args: ["task", "loom", "mcp", "--servers", ".mcp.json"],
          },
          off: { command: "x", disabled: true },
          root: { command: "loom", args: ["mcp", "--root", "."] },
        },
      });
      assert.deepEqual(config.skipped.map((s) => s.name), ["me", "off"]);
      assert.deepEqual(config.servers.map((s) => s.name), ["root"]);
    },
  );
  await t.step("selfReading is read per tool over the server's persist", () => {
    const [s] = parse({
      mcpServers: {
        fs: {
          command: "x",
          persist: true,
          tools: { read: { selfReading: true } },
        },
      },
    }).servers;
    assert.deepEqual(toolSettings(s!, "read"), {
      persist: true,
      selfReading: true,
      alwaysLoad: false,
      disabled: false,
      code: true,
    });
  });
});

Deno.test("parseGatewayConfig() names the file, the entry and the field of a mistake", async (t) => {
  const cases: [string, unknown, RegExp][] = [
    ["not JSON", "{", /not JSON/],
    ["no servers key", { x: 1 }, /neither "mcpServers" nor "servers"/],
    [
      "a missing command",
      { mcpServers: { fs: { args: [] } } },
      /entry "fs" field command is missing/,
    ],
    [
      "args not an array",
      { mcpServers: { fs: { command: "x", args: "a" } } },
      /entry "fs" field args is not an array/,
    ],
    ["an unset variable", {
      mcpServers: { fs: { command: "x", env: { T: "${TOKEN}" } } },
    }, /entry "fs" field env\.T uses \$\{TOKEN\}/],
    [
      "a bad url",
      { mcpServers: { r: { type: "http", url: "ftp://x" } } },
      /entry "r" field url is not an http/,
    ],
    [
      "an unknown type",
      { mcpServers: { r: { type: "ws", url: "ws://x" } } },
      /entry "r" field type is "ws"/,
    ],
    ["persist not boolean", {
      mcpServers: { fs: { command: "x", persist: "yes" } },
    }, /entry "fs" field persist is not true or false/],
  ];
  for (const [name, value, pattern] of cases) {
    await t.step(name, () => {
      assert.throws(
        () =>
          parseGatewayConfig(
            typeof value === "string" ? value : JSON.stringify(value),
            { file: "/p/.mcp.json", env: {} },
          ),
        (error: unknown) =>
          error instanceof GatewayConfigError &&
          error.code === "gateway_config_invalid" &&
          error.message.includes("/p/.mcp.json") && pattern.test(error.message),
      );
    });
  }
});

Deno.test("loom mcp --servers exits 2 on a bad servers file before any server starts", async () => {
  await using dir = await tempDir();
  const marker = `${dir.path}/started`;
  const file = `${dir.path}/.mcp.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      mcpServers: {
        ok: { command: "touch", args: [marker] },
        bad: { command: "x", env: { T: "${LOOM_TEST_UNSET_VARIABLE}" } },
      },
    }),
  );
  const result = await loom("mcp", "--servers", file, "--list");
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /gateway_config_invalid: .*\.mcp\.json: entry "bad" field env\.T/,
  );
  await assert.rejects(Deno.stat(marker));
  const missing = await loom("mcp", "--list");
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--list needs --servers FILE/);
});
