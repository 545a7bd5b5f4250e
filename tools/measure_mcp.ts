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
import { apiDump } from "../tests/_factories.ts";
import { connectRoot, readArgs } from "../tests/_kit/mcp.ts";
import { median, timed } from "../tests/_kit/measure.ts";

const RUNS = 3;

const dir = await Deno.makeTempDir();
try {
  const text = apiDump(260_000);
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
    await using server = await connectRoot(dir, [
      "--max-result-bytes",
      String(64 * 1024 * 1024),
      "--max-total-bytes",
      String(128 * 1024 * 1024),
    ]);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await server.call(name, args);
      if (result.isError) throw new Error(result.content[0]?.text);
      return result;
    };
    const [inspected, inspectMs] = await timed(() =>
      call("inspect_files", { paths: ["events.json"] })
    );
    answerBytes = new TextEncoder().encode(
      inspected.content[0]?.text ?? "",
    ).length;
    const [file] = inspected.structuredContent.files;
    const at = (pointer: string) =>
      readArgs(file, { kind: "json_pointer", pointer });
    const [, firstMs] = await timed(() =>
      call("read_result", at("/data/259999/customer/name"))
    );
    const [, secondMs] = await timed(() =>
      call("read_result", at("/data/12345/customer/name"))
    );
    inspect.push(inspectMs);
    first.push(firstMs);
    second.push(secondMs);
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
