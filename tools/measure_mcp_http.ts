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
import {
  connectHttp,
  connectRoot,
  type McpConnection,
  readArgs,
  startHttp,
  tokenFile,
} from "../tests/_kit/mcp.ts";
import { median } from "../tests/_kit/measure.ts";

const RUNS = 5;
const CALLS = 100;

/** Stores the file and returns the arguments reading one value of it. */
async function readArgsOf(
  client: McpConnection,
): Promise<Record<string, unknown>> {
  const answer = await client.call("inspect_files", { paths: ["a.json"] });
  return readArgs(answer.structuredContent.files[0], {
    kind: "json_pointer",
    pointer: "/items/7/name",
  });
}

async function block(client: McpConnection, args: Record<string, unknown>) {
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const answer = await client.call("read_result", args);
    if (answer.isError) throw new Error("read_result failed");
  }
  return (performance.now() - start) / CALLS;
}

const root = await Deno.makeTempDir();
const home = await Deno.makeTempDir();
const items = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `n${i}` }));
await Deno.writeTextFile(`${root}/a.json`, JSON.stringify({ items }));
const { path, token } = await tokenFile(home);
const stdio = await connectRoot(root);
const server = await startHttp(["--root", root], ["--token-file", path]);
const http = await connectHttp(server.url, token);
try {
  const refs = [await readArgsOf(stdio), await readArgsOf(http)] as const;
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
  await server.stop();
  await Deno.remove(root, { recursive: true });
  await Deno.remove(home, { recursive: true });
}
