/**
 * The JSON scan and index figures of docs/performance.md: for the nativejson-benchmark
 * files and the generated 16 MiB documents of the reference bench, the
 * median time of `JSON.parse(text)` and `scanJson(bytes)` over interleaved
 * rounds in one process, and the bytes of the index (its typed arrays, name
 * tables included, as `JsonIndex.byteLength` counts them) against the
 * document.
 *
 *   deno run --allow-read --allow-write --allow-env tests/bench/index_figures.ts [rounds]
 */
import { scanJson } from "../../lib/reference/json_scanner.ts";
import { generated, wide } from "../reference/generated_json.ts";
import { testdata } from "../_kit.ts";

const DATA = testdata("nativejson-benchmark/data/");
const rounds = Number(Deno.args[0] ?? 15);
const docs: [string, Uint8Array][] = [];
for (const name of ["canada.json", "citm_catalog.json", "twitter.json"]) {
  docs.push([name, await Deno.readFile(DATA + name)]);
}
docs.push(["generated 16 MiB (records)", generated()]);
docs.push(["generated 16 MiB (one wide object)", wide()]);

const median = (list: number[]) =>
  [...list].sort((a, b) => a - b)[list.length >> 1]!;
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;
let sink = 0;
console.log(`${rounds} interleaved rounds, median of each`);
console.log(
  "| document | size | values | `JSON.parse` | `scanJson` | ratio | index | index / document |",
);
console.log(
  "| -------- | ---: | -----: | -----------: | ---------: | ----: | ----: | ---------------: |",
);
for (const [name, bytes] of docs) {
  const text = new TextDecoder().decode(bytes);
  const reps = bytes.length > 4_000_000 ? 1 : 10;
  const parse: number[] = [];
  const scan: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let start = performance.now();
    for (let i = 0; i < reps; i++) sink += JSON.parse(text) === null ? 1 : 0;
    parse.push((performance.now() - start) / reps);
    start = performance.now();
    for (let i = 0; i < reps; i++) sink += scanJson(bytes).valueCount;
    scan.push((performance.now() - start) / reps);
  }
  const index = scanJson(bytes);
  const [p, s] = [median(parse), median(scan)];
  console.log(
    `| ${name} | ${mib(bytes.length)} | ${
      index.valueCount.toLocaleString("en-US")
    } | ${ms(p)} | ${ms(s)} | ${(s / p).toFixed(2)}× | ${
      mib(index.byteLength)
    } | ${(index.byteLength / bytes.length).toFixed(2)}× |`,
  );
}
if (sink < 0) console.log(sink);
