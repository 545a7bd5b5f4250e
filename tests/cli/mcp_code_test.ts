// `loom mcp --code`'s flags through the real CLI: they need --servers (and
// --code), and without a working bubblewrap --code refuses to start (exit
// 2) unless --code-unconfined, which the start-up line says.
import assert from "node:assert/strict";
import { loomIn, loomWith, tempDir } from "../_kit.ts";

Deno.test("loom mcp --code: its flags need --servers FILE and --code", async () => {
  const cases: [string[], RegExp][] = [
    [["mcp", "--code"], /--code needs --servers FILE/],
    [
      ["mcp", "--servers", "x.json", "--code-memory", "64"],
      /--code-memory needs --code/,
    ],
    [
      ["mcp", "--servers", "x.json", "--code", "--code-max-calls", "0"],
      /Invalid --code-max-calls 0/,
    ],
    [
      ["mcp", "--servers", "x.json", "--code", "--code-timeout", "soon"],
      /Invalid --code-timeout soon/,
    ],
  ];
  for (const [args, message] of cases) {
    const run = await loomIn(...args);
    assert.equal(run.code, 2, args.join(" "));
    assert.match(run.stderr, message);
  }
});

Deno.test("loom mcp --servers FILE --code exits 2 without bubblewrap, and starts saying so with --code-unconfined", async () => {
  await using dir = await tempDir();
  const servers = `${dir.path}/servers.json`;
  await Deno.writeTextFile(servers, JSON.stringify({ mcpServers: {} }));
  // No bwrap on this PATH.
  const env = { PATH: dir.path };
  const refused = await loomWith(
    { env },
    "mcp",
    "--servers",
    servers,
    "--code",
  );
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /confinement_unavailable: run_code needs bubblewrap/,
  );
  assert.match(refused.stderr, /--code-unconfined/);
  const started = await loomWith(
    { env },
    "mcp",
    "--servers",
    servers,
    "--code",
    "--code-unconfined",
  );
  assert.equal(started.code, 0, started.stderr);
  assert.match(started.stderr, /run_code UNCONFINED \(--code-unconfined\)/);
});
