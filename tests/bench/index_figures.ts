/**
 * The README's JSON index sizes: bytes of `scanJson()`'s index (its typed
 * arrays, name tables included, as `JsonIndex.byteLength` counts them)
 * against the document, for the nativejson-benchmark files and the
 * generated 16 MiB documents of the reference bench.
 *
 *   deno run --allow-read tests/bench/index_figures.ts
 */
import { scanJson } from "../../lib/reference/json_scanner.ts";
import { generated, wide } from "../reference/generated_json.ts";
import { testdata } from "../_kit.ts";

const DATA = testdata("nativejson-benchmark/data/");
const docs: [string, Uint8Array][] = [];
for (const name of ["canada.json", "citm_catalog.json", "twitter.json"]) {
  docs.push([name, await Deno.readFile(DATA + name)]);
}
docs.push(["generated 16 MiB (records)", generated()]);
docs.push(["generated 16 MiB (one wide object)", wide()]);

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;
console.log("| document | size | values | index | index / document |");
console.log("| -------- | ---: | -----: | ----: | ---------------: |");
for (const [name, bytes] of docs) {
  const index = scanJson(bytes);
  console.log(
    `| ${name} | ${mib(bytes.length)} | ${
      index.valueCount.toLocaleString("en-US")
    } | ${mib(index.byteLength)} | ${
      (index.byteLength / bytes.length).toFixed(2)
    }× |`,
  );
}
