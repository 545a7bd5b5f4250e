/**
 * What `loom mcp --http` costs per call against stdio, in the same run: it
 * starts the real `loom mcp --root` twice on one root (this Deno, cli.ts) —
 * once over stdio, once with `--http 127.0.0.1:0 --token-file` — connects
 * the MCP SDK's client to each (StdioClientTransport,
 * StreamableHTTPClientTransport with the bearer token), stores one small
 * JSON file, then times `CALLS` `read_result` calls by JSON pointer on each,
 * alternating blocks so load on the machine hits both alike. Over HTTP
 * every call is a POST answered by a fresh transport and server (the
 * stateless mode); the ratio says what that costs. Median of `RUNS` blocks.
 *
 * ```sh
 * deno run --allow-read --allow-write --allow-run --allow-env --allow-net=127.0.0.1 tools/measure_mcp_http.ts
 * ```
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const RUNS = 5;
const CALLS = 100;
const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const PERMISSIONS = [
  "run",
  "--quiet",
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
  "--allow-net=127.0.0.1",
  join(repo, "cli.ts"),
  "mcp",
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Stores the file and returns a reference selecting one value. */
async function reference(client: Client): Promise<Record<string, unknown>> {
  const answer = await client.callTool({
    name: "inspect_files",
    arguments: { paths: ["a.json"] },
  }) as { structuredContent: { files: { reference: object }[] } };
  return {
    ...answer.structuredContent.files[0]!.reference,
    select: { kind: "json_pointer", pointer: "/items/7/name" },
  };
}

async function block(client: Client, ref: Record<string, unknown>) {
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const answer = await client.callTool({
      name: "read_result",
      arguments: { reference: ref },
    }) as { isError?: boolean };
    if (answer.isError) throw new Error("read_result failed");
  }
  return (performance.now() - start) / CALLS;
}

const root = await Deno.makeTempDir();
const home = await Deno.makeTempDir();
const items = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `n${i}` }));
await Deno.writeTextFile(`${root}/a.json`, JSON.stringify({ items }));
const token = crypto.randomUUID().replaceAll("-", "");
await Deno.writeTextFile(`${home}/token`, token, { mode: 0o600 });

const stdio = new Client({ name: "measure", version: "1" });
await stdio.connect(
  new StdioClientTransport({
    command: Deno.execPath(),
    args: [...PERMISSIONS, "--root", root],
    stderr: "ignore",
  }),
);
const server = new Deno.Command(Deno.execPath(), {
  args: [
    ...PERMISSIONS,
    "--root",
    root,
    "--http",
    "127.0.0.1:0",
    "--token-file",
    `${home}/token`,
  ],
  stdin: "null",
  stdout: "null",
  stderr: "piped",
}).spawn();
let text = "";
let url: URL | undefined;
for await (const chunk of server.stderr.pipeThrough(new TextDecoderStream())) {
  text += chunk;
  const match = / at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(text);
  if (match !== null) {
    url = new URL(match[1]!);
    break;
  }
}
if (url === undefined) throw new Error(`no HTTP server:\n${text}`);
const http = new Client({ name: "measure", version: "1" });
await http.connect(
  new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }),
);
try {
  const refs = [await reference(stdio), await reference(http)] as const;
  await block(stdio, refs[0]);
  await block(http, refs[1]);
  const times: [number[], number[]] = [[], []];
  for (let run = 0; run < RUNS; run++) {
    times[0].push(await block(stdio, refs[0]));
    times[1].push(await block(http, refs[1]));
  }
  const [s, h] = [median(times[0]), median(times[1])];
  console.log(`read_result over stdio: ${s.toFixed(2)} ms per call`);
  console.log(`read_result over HTTP:  ${h.toFixed(2)} ms per call`);
  console.log(
    `HTTP / stdio: ${
      (h / s).toFixed(2)
    }x (median of ${RUNS} blocks of ${CALLS})`,
  );
} finally {
  await stdio.close();
  await http.close();
  server.kill("SIGTERM");
  await server.status;
  await Deno.remove(root, { recursive: true });
  await Deno.remove(home, { recursive: true });
}
