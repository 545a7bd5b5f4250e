// The gateway's figures (issue 27), against a direct connection in one run:
//   npx -y deno@2.9.6 run --allow-read --allow-write --allow-run --allow-env tools/gateway_figures.ts
// 1. median time of a small call through `loom mcp --servers` vs straight to
//    the same server (the SDK's client both ways);
// 2. a 40 MB answer: time until the host holds the descriptor vs a linear
//    reader receiving the answer straight from the server, and the
//    gateway's peak memory growth (VmHWM - VmRSS before the call);
// 3. bytes reaching the host for a scripted retrieval task (a pointer, a
//    line and a search read) into a 3,000-file directory_tree and into a
//    25 MB JSON file read with read_text_file, vs the direct answers.
// Not a test: it prints a table for docs/performance.md.
import { join } from "node:path";
import {
  connectGateway,
  connectStdio,
  denoEntry,
  descriptorOf,
  FAULT,
  FILESYSTEM,
  initializeMessage,
  readArgs,
  serversFile,
} from "../tests/_kit/mcp.ts";
import { median, memoryOf } from "../tests/_kit/measure.ts";
import { REPO_ROOT } from "../tests/_kit/repo.ts";

const DENO = Deno.execPath();
const FAULT_ARGS = denoEntry(FAULT).args;
const encoder = new TextEncoder();
const bytes = (value: unknown) => encoder.encode(JSON.stringify(value)).length;
const gateway = (servers: string) =>
  connectGateway(servers, [], { timeoutMs: 600_000 });

/**
 * A linear reader straight from the server: raw JSON-RPC over its stdio.
 * With `parse`, it also does what any client must to hold the answer as a
 * message (decode the line and `JSON.parse` it); without, it only finds the
 * line's end: the floor of the pipe.
 */
async function linearCall(
  args: string[],
  method: string,
  params: unknown,
  parse = false,
): Promise<{ ms: number; bytes: number }> {
  const child = new Deno.Command(DENO, {
    args,
    cwd: REPO_ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (m: unknown) =>
    writer.write(encoder.encode(JSON.stringify(m) + "\n"));
  const reader = child.stdout.getReader();
  const lines: Uint8Array[][] = [];
  let current: Uint8Array[] = [];
  let size = 0;
  const nextLine = async (): Promise<number> => {
    while (true) {
      const { value, done } = await reader.read();
      if (done) throw new Error("server closed");
      let start = 0;
      const nl = value.indexOf(10);
      if (nl === -1) {
        current.push(value.slice());
        size += value.length;
        continue;
      }
      current.push(value.subarray(start, nl));
      size += nl - start;
      const total = size;
      lines.push(current);
      current = [];
      size = 0;
      start = nl + 1;
      if (start < value.length) {
        current.push(value.slice(start));
        size += value.length - start;
      }
      return total;
    }
  };
  await send(initializeMessage());
  await nextLine();
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const started = performance.now();
  await send({ jsonrpc: "2.0", id: 2, method, params });
  let answer = await nextLine();
  // Skip notifications (a server may log) until the answer arrives.
  while (answer < 64) answer = await nextLine();
  if (parse) {
    const whole = new Uint8Array(answer);
    let at = 0;
    for (const chunk of lines.at(-1)!) {
      whole.set(chunk, at);
      at += chunk.length;
    }
    JSON.parse(new TextDecoder().decode(whole));
  }
  const ms = performance.now() - started;
  child.kill();
  await child.status;
  return { ms, bytes: answer };
}

const dir = await Deno.makeTempDir({ prefix: "loom-gateway-figures-" });
const root = join(dir, "root");
for (let i = 0; i < 3000; i++) {
  const folder = join(root, `pkg-${i % 40}`, `src-${i % 9}`);
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(
    join(folder, `module-${i}.ts`),
    `export const n = ${i};\n`,
  );
}
const big = join(dir, "data.json");
await Deno.writeTextFile(
  big,
  JSON.stringify({
    rows: Array.from(
      { length: 240_000 },
      (_, i) => ({
        id: i,
        name: `row ${i}`,
        tags: ["a", "b"],
        score: i * 0.5,
        note: "lorem ipsum dolor sit amet",
      }),
    ),
  }),
);
const bigBytes = (await Deno.stat(big)).size;
const servers = await serversFile(dir, {
  fault: denoEntry(FAULT),
  fs: denoEntry(FILESYSTEM, [dir]),
});
const FS_ARGS = denoEntry(FILESYSTEM, [dir]).args;

const rows: string[] = [];
// 1. Small calls.
{
  const direct = await connectStdio(DENO, FAULT_ARGS, { timeoutMs: 600_000 });
  const via = await gateway(servers);
  const times = { direct: [] as number[], via: [] as number[] };
  for (let i = 0; i < 20; i++) {
    await direct.call("small");
    await via.call("fault__small");
  }
  for (let i = 0; i < 300; i++) {
    let t = performance.now();
    await direct.call("small");
    times.direct.push(performance.now() - t);
    t = performance.now();
    await via.call("fault__small");
    times.via.push(performance.now() - t);
  }
  const d = median(times.direct), v = median(times.via);
  rows.push(
    `| median small call | direct ${d.toFixed(2)} ms | gateway ${
      v.toFixed(2)
    } ms | ${(v / d).toFixed(2)}× (+${
      (v - d).toFixed(2)
    } ms); limit 1.5× + 1 ms = ${(1.5 * d + 1).toFixed(2)} ms |`,
  );
  await direct.close();
  await via.close();
}
// 2. A 40 MB answer, in ROUNDS rounds (the linear reader, then a fresh
// gateway), each figure the median of its rounds.
{
  const ROUNDS = 5;
  const times = {
    linear: [] as number[],
    parsing: [] as number[],
    gateway: [] as number[],
  };
  const growths: number[] = [];
  let line = 0, stored = 0, descriptor = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const linear = await linearCall(FAULT_ARGS, "tools/call", {
      name: "big",
      arguments: { bytes: 40_000_000 },
    });
    times.linear.push(linear.ms);
    line = linear.bytes;
    const parsing = await linearCall(FAULT_ARGS, "tools/call", {
      name: "big",
      arguments: { bytes: 40_000_000 },
    }, true);
    times.parsing.push(parsing.ms);
    const via = await gateway(servers);
    await via.call("fault__small");
    const before = memoryOf(via.pid!);
    const t = performance.now();
    const answer = await via.call("fault__big", { bytes: 40_000_000 });
    times.gateway.push(performance.now() - t);
    const after = memoryOf(via.pid!);
    stored = descriptorOf(answer).utf8_bytes ?? 0;
    descriptor = bytes(answer);
    growths.push(after.hwm - before.rss);
    await via.close();
  }
  const l = median(times.linear), g = median(times.gateway);
  const p = median(times.parsing);
  const growth = median(growths);
  const range = (values: number[]) =>
    `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`;
  rows.push(
    `| 40 MB answer to the host (median of ${ROUNDS}) | linear reader ${
      l.toFixed(0)
    } ms (${range(times.linear)}; ${
      (line / 1e6).toFixed(1)
    } MB line) | gateway ${g.toFixed(0)} ms (${
      range(times.gateway)
    }) to a ${descriptor}-byte descriptor | ${(g / l).toFixed(2)}×; limit 2× |`,
  );
  rows.push(
    `| 40 MB answer, against a linear reader that also parses it (median of ${ROUNDS}) | linear JSON-RPC reader ${
      p.toFixed(0)
    } ms (${range(times.parsing)}) | gateway ${g.toFixed(0)} ms | ${
      (g / p).toFixed(2)
    }×; limit 2× |`,
  );
  rows.push(
    `| gateway peak memory growth (median of ${ROUNDS}) | answer ${
      (stored / 1e6).toFixed(1)
    } MB | ${(growth / 1e6).toFixed(0)} MB | ${
      (growth / stored).toFixed(2)
    }× the answer; limit 4× |`,
  );
}
// 2b. A 40 MB text file read with server-filesystem's read_text_file (the
// answer carries it twice: as text and as structuredContent).
{
  const text = join(dir, "log.txt");
  await Deno.writeTextFile(
    text,
    "2026-01-01T00:00:00Z INFO request served in 12 ms path=/api/v1/items\n"
      .repeat(40_000_000 / 68),
  );
  const linear = await linearCall(FS_ARGS, "tools/call", {
    name: "read_text_file",
    arguments: { path: text },
  });
  const via = await gateway(servers);
  await via.call("fault__small");
  const before = memoryOf(via.pid!);
  const t = performance.now();
  const answer = await via.call("fs__read_text_file", { path: text });
  const ms = performance.now() - t;
  const after = memoryOf(via.pid!);
  const growth = after.hwm - before.rss;
  const stored = descriptorOf(answer).utf8_bytes ?? 0;
  rows.push(
    `| 40 MB file via server-filesystem read_text_file | linear reader ${
      linear.ms.toFixed(0)
    } ms (${(linear.bytes / 1e6).toFixed(1)} MB line) | gateway ${
      ms.toFixed(0)
    } ms to a ${bytes(answer)}-byte descriptor, peak memory +${
      (growth / 1e6).toFixed(0)
    } MB | ${(ms / linear.ms).toFixed(2)}×; memory ${
      (growth / stored).toFixed(2)
    }× the ${(stored / 1e6).toFixed(1)} MB stored |`,
  );
  await via.close();
  await Deno.remove(text);
}
// 3. Retrieval task bytes.
{
  const via = await gateway(servers);
  const treeDirect = await linearCall(
    FS_ARGS,
    "tools/call",
    { name: "directory_tree", arguments: { path: root } },
  );
  let sent = 0;
  const task = async (name: string, args: Record<string, unknown>) => {
    const answer = await via.call(name, args);
    sent += bytes(answer);
    return answer;
  };
  const tree = descriptorOf(await task("fs__directory_tree", { path: root }));
  await task(
    "read_result",
    readArgs(tree, { kind: "json_pointer", pointer: "/7/children/2/name" }),
  );
  await task(
    "read_result",
    readArgs(tree, { kind: "lines", start: 100, end: 140 }),
  );
  const found = await task("find_in_result", {
    reference: tree.reference,
    pattern: "module-2999.ts",
    max_matches: 5,
  });
  await task(
    "read_result",
    readArgs(tree, {
      kind: "json_pointer",
      pointer: found.structuredContent.matches[0].pointer,
    }),
  );
  rows.push(
    `| retrieval in a 3,000-file directory_tree | direct answer ${treeDirect.bytes} B | ${sent} B to the host | ${
      (100 * sent / treeDirect.bytes).toFixed(2)
    }%; limit 2% |`,
  );

  const fileDirect = await linearCall(
    FS_ARGS,
    "tools/call",
    { name: "read_text_file", arguments: { path: big } },
  );
  sent = 0;
  const file = descriptorOf(await task("fs__read_text_file", { path: big }));
  await task(
    "read_result",
    readArgs(file, { kind: "json_pointer", pointer: "/rows/123456" }),
  );
  await task("find_in_result", {
    reference: file.reference,
    pattern: 'row 99999"',
    max_matches: 3,
  });
  await task(
    "read_result",
    readArgs(file, { kind: "bytes", start: 0, end: 2000 }),
  );
  rows.push(
    `| retrieval in a ${
      (bigBytes / 1e6).toFixed(1)
    } MB JSON file (read_text_file) | direct answer ${fileDirect.bytes} B | ${sent} B to the host | ${
      (100 * sent / fileDirect.bytes).toFixed(3)
    }%; limit 0.1% |`,
  );
  await via.close();
}
await Deno.remove(dir, { recursive: true });
console.log(
  "| measure | baseline | gateway | ratio |\n| --- | --- | --- | --- |\n" +
    rows.join("\n"),
);
