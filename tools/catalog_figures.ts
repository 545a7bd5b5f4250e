// The tool catalogue's figures (issue 34), through the real
// `loom mcp --servers` with the SDK's own client, in one run:
//   npx -y deno@2.9.6 run --allow-read --allow-write --allow-run --allow-env tools/catalog_figures.ts
// 1. the bytes of tools/list with --catalog full and search, for the real
//    servers the tests start (server-filesystem, server-everything), the
//    gateway tests' set (those and the fault server) and a 2,000-tool server;
// 2. the size of search answers at each detail;
// 3. recall of the expected tool in the first 5 answers on the tests' queries
//    for the real servers' tools, and exact names answered first (every tool
//    of every set, asked four ways);
// 4. the time of one search over 2,000 tools: in process (ToolIndex.search)
//    and as a search_tools call against a list_results call (the floor of a
//    round trip through the gateway).
// Not a test: it prints tables for docs/performance.md.
import { ToolIndex } from "../lib/mcp/gateway/tool_search.ts";
import { REAL_SERVER_QUERIES } from "../tests/mcp/gateway/_catalog_queries.ts";
import { generatedTools } from "../tests/mcp/gateway/_catalog_tools.ts";
import {
  connectGateway,
  denoEntry,
  EVERYTHING,
  FAULT,
  FILESYSTEM,
  mcpArgs,
  type McpConnection,
} from "../tests/_kit/mcp.ts";
import { REPO_ROOT } from "../tests/_kit/repo.ts";
import { median, percentile } from "../tests/_kit/measure.ts";

const CATALOG = `${REPO_ROOT}/tests/mcp/gateway/_catalog_server.ts`;
const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text).length;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

const dir = await Deno.makeTempDir({ prefix: "loom-catalog-figures-" });
try {
  await Deno.mkdir(`${dir}/root`);
  const sets: Record<string, Record<string, unknown>> = {
    "fs + everything": {
      fs: denoEntry(FILESYSTEM, [`${dir}/root`]),
      everything: denoEntry(EVERYTHING, ["stdio"]),
    },
    "fs + everything + fault": {
      fs: denoEntry(FILESYSTEM, [`${dir}/root`]),
      everything: denoEntry(EVERYTHING, ["stdio"]),
      fault: denoEntry(FAULT),
    },
    "2,000 generated tools": {
      catalog: denoEntry(CATALOG, ["--tools", "2000"]),
    },
  };
  const files: Record<string, string> = {};
  for (const [name, servers] of Object.entries(sets)) {
    files[name] = `${dir}/${name.replace(/\W+/g, "_")}.json`;
    await Deno.writeTextFile(
      files[name]!,
      JSON.stringify({ mcpServers: servers }),
    );
  }

  // 1. tools/list, full and search.
  console.log(
    "\n| servers | tools | tools/list, full | tools/list, search | auto picks |",
  );
  console.log("| --- | --- | --- | --- | --- |");
  for (const [name, file] of Object.entries(files)) {
    const sizes: Record<string, number> = {};
    let count = 0;
    for (const mode of ["full", "search", "auto"]) {
      await using gateway = await connectGateway(file, ["--catalog", mode]);
      const { tools } = await gateway.client.listTools();
      sizes[mode] = bytes(JSON.stringify(tools));
      if (mode === "full") {
        count = tools.filter((t: { name: string }) => t.name.includes("__"))
          .length;
      }
    }
    const auto = sizes.auto === sizes.search ? "search" : "full";
    console.log(
      `| ${name} | ${count} | ${kb(sizes.full!)} | ${
        kb(sizes.search!)
      } | ${auto} |`,
    );
  }

  // 2–3. Searches over the real servers.
  {
    await using gateway = await connectGateway(
      files["fs + everything + fault"]!,
      [
        "--catalog",
        "search",
      ],
    );
    const sizes: Record<string, number[]> = {
      names: [],
      summary: [],
      schema: [],
      typescript: [],
    };
    let found = 0;
    let reciprocal = 0;
    for (const { query, expect } of REAL_SERVER_QUERIES) {
      for (const detail of Object.keys(sizes)) {
        const { answer, size } = await search(gateway, { query, detail });
        sizes[detail]!.push(size);
        if (detail === "summary") {
          const rank = answer.tools.findIndex((t) => t.name === expect);
          if (rank >= 0) {
            found += 1;
            reciprocal += 1 / (rank + 1);
          }
        }
      }
    }
    const { tools } = await gateway.client.listTools();
    void tools;
    const real = await exactFirst(
      gateway,
      await catalogNames(files["fs + everything + fault"]!),
    );
    console.log(
      `\nrecall@5 on ${REAL_SERVER_QUERIES.length} queries: ${found}/${REAL_SERVER_QUERIES.length} (${
        (100 * found / REAL_SERVER_QUERIES.length).toFixed(1)
      }%), MRR ${(reciprocal / REAL_SERVER_QUERIES.length).toFixed(2)}`,
    );
    console.log(`exact names first (real servers, 4 ways each): ${real}`);
    console.log("\n| detail (limit 5) | smallest | median | largest |");
    console.log("| --- | --- | --- | --- |");
    for (const [detail, list] of Object.entries(sizes)) {
      const [smallest, middle, largest] = [0, 0.5, 1].map((p) =>
        percentile(list, p)
      );
      console.log(`| ${detail} | ${smallest} B | ${middle} B | ${largest} B |`);
    }
  }

  // 4. 2,000 tools: exact names, the time of one search.
  {
    await using gateway = await connectGateway(
      files["2,000 generated tools"]!,
      [
        "--catalog",
        "search",
      ],
    );
    const names = generatedTools(2000).map((t) => ({
      name: `catalog__${t.name}`,
      tool: t.name,
    }));
    console.log(
      `\nexact names first (2,000 tools, 4 ways each): ${await exactFirst(
        gateway,
        names,
      )}`,
    );
    const queries = [
      "create an invoice in the EU region",
      "list open support tickets",
      "delete a firewall rule",
      "export the analytics dashboard",
      "approve an expense report",
    ];
    const sizes = [] as number[];
    for (const query of queries) {
      sizes.push((await search(gateway, { query })).size);
    }
    const round = async (name: string, args: Record<string, unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t = performance.now();
        await gateway.call(name, args);
        times.push(performance.now() - t);
      }
      return median(times);
    };
    await round("list_results", {});
    const floor = await round("list_results", {});
    const searched = await round("search_tools", { query: queries[0] });
    // In process, over the same tools.
    const entries = generatedTools(2000).map((t) => ({
      ...t,
      server: "catalog",
      tool: t.name,
      name: `catalog__${t.name}`,
    }));
    let t = performance.now();
    const index = new ToolIndex(entries);
    const build = performance.now() - t;
    const each: number[] = [];
    for (let i = 0; i < 2000; i++) {
      t = performance.now();
      index.search(queries[i % queries.length]!);
      each.push(performance.now() - t);
    }
    console.log(
      `\nsearch answers over 2,000 tools (summary, limit 5): ${
        Math.min(...sizes)
      }–${Math.max(...sizes)} B`,
    );
    console.log("\n| one search over 2,000 tools | median | p99 |");
    console.log("| --- | --- | --- |");
    console.log(
      `| ToolIndex.search, in process | ${
        percentile(each, 0.5).toFixed(3)
      } ms | ${percentile(each, 0.99).toFixed(3)} ms |`,
    );
    console.log(
      `| search_tools through the gateway (list_results: ${
        floor.toFixed(2)
      } ms) | ${searched.toFixed(2)} ms | — |`,
    );
    console.log(
      `index built in ${
        build.toFixed(0)
      } ms (once per change of the catalogue)`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}

interface Answer {
  tools: { name: string }[];
}

async function search(
  gateway: McpConnection,
  args: Record<string, unknown>,
): Promise<{ answer: Answer; size: number }> {
  const result = await gateway.call("search_tools", args);
  const text = result.content[0].text as string;
  if (result.isError) throw new Error(text);
  return { answer: JSON.parse(text), size: bytes(text) };
}

/** Each catalogued tool of a servers file, its name and its upstream's, from `--list`. */
async function catalogNames(file: string): Promise<Pair[]> {
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: mcpArgs(["--servers", file, "--list"]),
    cwd: REPO_ROOT,
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(stdout);
  return [...text.matchAll(/^ {2}(.+?): as ([A-Za-z0-9_-]+)/gm)].map((m) => ({
    tool: m[1]!,
    name: m[2]!,
  }));
}

interface Pair {
  readonly name: string;
  readonly tool: string;
}

/** How many of the tools are answered first, asked four ways. */
async function exactFirst(
  gateway: McpConnection,
  pairs: Pair[],
): Promise<string> {
  let first = 0;
  let asked = 0;
  for (const { name, tool: own } of pairs) {
    for (
      const query of [name, own, own.toUpperCase(), own.replaceAll("_", "-")]
    ) {
      asked += 1;
      const { answer } = await search(gateway, { query, limit: 1 });
      if (answer.tools[0]?.name === name) first += 1;
    }
  }
  return `${first}/${asked}`;
}
