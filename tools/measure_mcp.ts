/**
 * The figures of docs/mcp.md: what a host's context pays for a large JSON
 * file through `loom mcp`, and how long the server takes. It writes a ~40 MB
 * JSON API dump to a temp root, starts the real `loom mcp` (this Deno,
 * cli.ts, `--max-result-bytes` and `--max-total-bytes` raised to 64 MiB and
 * 128 MiB) through the MCP SDK's client over stdio, and prints: the bytes of
 * the file and of the `inspect_files` answer; the time of `inspect_files`,
 * of the first `read_result` by JSON pointer (which scans the document) and
 * of a second one, each also as a ratio to `JSON.parse` of the same file in
 * this process (the floor any JSON reader pays). Median of `RUNS` runs.
 *
 * ```sh
 * deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env tools/measure_mcp.ts
 * ```
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const RUNS = 3;
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

interface ToolResult {
  content: { text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

function dump(): string {
  const data = Array.from({ length: 260_000 }, (_, i) => ({
    id: `evt_${i.toString(36).padStart(8, "0")}`,
    type: i % 3 === 0 ? "invoice.paid" : "customer.updated",
    amount: 1000 + i * 7,
    customer: { name: `Kunde ${i} — Zürich`, tags: ["b2b", `tier-${i % 4}`] },
    created: 1_700_000_000 + i,
  }));
  return JSON.stringify({ object: "list", has_more: false, data });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await run();
  return [value, performance.now() - start];
}

const dir = await Deno.makeTempDir();
try {
  const text = dump();
  const bytes = new TextEncoder().encode(text).length;
  await Deno.writeTextFile(`${dir}/events.json`, text);
  const parse: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const file = await Deno.readTextFile(`${dir}/events.json`);
    parse.push((await timed(() => Promise.resolve(JSON.parse(file))))[1]);
  }
  const inspect: number[] = [];
  const first: number[] = [];
  const second: number[] = [];
  let answerBytes = 0;
  for (let run = 0; run < RUNS; run++) {
    const client = new Client({ name: "measure", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "--quiet",
          "--unstable-worker-options",
          "--allow-read",
          "--allow-write",
          "--allow-run",
          "--allow-env",
          "cli.ts",
          "mcp",
          "--root",
          dir,
          "--max-result-bytes",
          String(64 * 1024 * 1024),
          "--max-total-bytes",
          String(128 * 1024 * 1024),
        ],
        cwd: root,
        env: Deno.env.toObject(),
        stderr: "inherit",
      }),
    );
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({
          name,
          arguments: args,
        }) as ToolResult;
        if (result.isError) throw new Error(result.content[0]?.text);
        return result;
      };
      const [inspected, inspectMs] = await timed(() =>
        call("inspect_files", { paths: ["events.json"] })
      );
      answerBytes = new TextEncoder().encode(
        inspected.content[0]?.text ?? "",
      ).length;
      const files = inspected.structuredContent?.files as {
        reference: Record<string, unknown>;
      }[];
      const at = (pointer: string) => ({
        reference: {
          ...files[0]!.reference,
          select: { kind: "json_pointer", pointer },
        },
      });
      const [, firstMs] = await timed(() =>
        call("read_result", at("/data/259999/customer/name"))
      );
      const [, secondMs] = await timed(() =>
        call("read_result", at("/data/12345/customer/name"))
      );
      inspect.push(inspectMs);
      first.push(firstMs);
      second.push(secondMs);
    } finally {
      await client.close();
    }
  }
  const floor = median(parse);
  const row = (label: string, ms: number) =>
    console.log(
      `${label.padEnd(34)} ${ms.toFixed(0).padStart(6)} ms  ${
        (ms / floor).toFixed(2)
      }x JSON.parse`,
    );
  console.log(
    `file: ${bytes} bytes; inspect_files answer: ${answerBytes} bytes`,
  );
  row("JSON.parse (floor)", floor);
  row("inspect_files", median(inspect));
  row("read_result, first pointer", median(first));
  row("read_result, second pointer", median(second));
} finally {
  await Deno.remove(dir, { recursive: true });
}
