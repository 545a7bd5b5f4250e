/**
 * The start-up table of docs/performance.md: wall time of whole `deno run` processes,
 * interleaved round by round so load on the machine hits every row alike,
 * as the median of each row and its ratio to the floor (an empty module run
 * with the same flags from the same folder). Rows for `dist/loom.js` appear
 * when it exists (`deno task bundle`).
 *
 *   deno run --allow-read --allow-run --allow-write --allow-env tests/bench/startup_figures.ts [rounds]
 */
import { join } from "node:path";

const rounds = Number(Deno.args[0] ?? 20);
const flags = [
  "run",
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
];
const dir = await Deno.makeTempDir();
const empty = join(dir, "empty.ts");
await Deno.writeTextFile(empty, "");

const rows: [string, string[]][] = [
  ["empty module (floor)", [empty]],
  ["loom --help", ["cli.ts", "--help"]],
  ["loom --version", ["cli.ts", "--version"]],
  ["loom render fixtures/contexts/minimal.json", [
    "cli.ts",
    "render",
    "fixtures/contexts/minimal.json",
  ]],
  ["loom select minimal.json --pointer /name", [
    "cli.ts",
    "select",
    "fixtures/contexts/minimal.json",
    "--pointer",
    "/name",
  ]],
];
try {
  await Deno.stat("dist/loom.js");
  rows.push(["dist/loom.js --help", ["dist/loom.js", "--help"]]);
} catch {
  // No bundle built: its row is left out.
}

async function once(args: string[]): Promise<number> {
  const start = performance.now();
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: [...flags, ...args],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  const ms = performance.now() - start;
  if (code !== 0) throw new Error(`${args.join(" ")} exited with ${code}`);
  return ms;
}

const times = rows.map(() => [] as number[]);
for (const [, args] of rows) await once(args); // warm the module cache
for (let round = 0; round < rounds; round++) {
  for (let r = 0; r < rows.length; r++) times[r]!.push(await once(rows[r]![1]));
}
await Deno.remove(dir, { recursive: true });

const median = (list: number[]) =>
  [...list].sort((a, b) => a - b)[list.length >> 1]!;
const floor = median(times[0]!);
console.log(`${rounds} interleaved rounds, median wall time per process`);
console.log("| command | time | vs empty `deno run` |");
console.log("| ------- | ---: | ------------------: |");
for (let r = 0; r < rows.length; r++) {
  const ms = median(times[r]!);
  console.log(
    `| \`${rows[r]![0]}\` | ${ms.toFixed(0)} ms | ${
      (ms / floor).toFixed(2)
    }× |`,
  );
}
