/**
 * The reference layer against the runtime's own primitives, same inputs
 * (the nativejson-benchmark files and a generated 16 MiB document):
 *
 * - "scan …": `scanJson(bytes)` vs `JSON.parse(text)` (baseline); target
 *   ≤ 1.5×. The scanner also validates UTF-8 and checks duplicate names.
 * - "sha256 …": `sha256Hex(bytes)` vs `crypto.subtle.digest` (baseline);
 *   target ≤ 1.2×.
 * - "utf8 …": `isValidUtf8` / `firstInvalidUtf8` vs
 *   `new TextDecoder("utf-8", {fatal: true}).decode` (baseline); target ≤ 1.2×.
 * - "pointer 16 MiB": `resolve()` on an already scanned 16 MiB document
 *   (target < 1 ms), with `jsonpointer.get` on the parsed value for scale;
 *   "pointer 16 MiB wide object" does the same in one object of ~740,000
 *   members (names found through the table the duplicate check built).
 *
 * Run: deno bench --allow-read --allow-write --allow-env tests/bench/reference_bench.ts
 */
import jsonpointer from "jsonpointer";
import { scanJson } from "../../lib/reference/json_scanner.ts";
import { parsePointer } from "../../lib/reference/pointer.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import { firstInvalidUtf8, isValidUtf8 } from "../../lib/store/utf8.ts";
import { generated, wide } from "../reference/generated_json.ts";
import { testdata } from "../_kit.ts";

const DATA = testdata("nativejson-benchmark/data/");
const decoder = new TextDecoder();
const fatal = new TextDecoder("utf-8", { fatal: true });

interface Input {
  name: string;
  bytes: Uint8Array;
  text: string;
}

const inputs: Input[] = [];
for (const name of ["canada.json", "citm_catalog.json", "twitter.json"]) {
  const bytes = await Deno.readFile(DATA + name);
  inputs.push({ name, bytes, text: decoder.decode(bytes) });
}
const big = generated();
inputs.push({
  name: "generated 16 MiB",
  bytes: big,
  text: decoder.decode(big),
});

let sink: unknown;

/** A bench of a group: its name and body. */
type Contender = readonly [string, () => void | Promise<void>];

/** Registers a group: the runtime's own primitive as baseline, then Loom's. */
function compare(
  group: string,
  baseline: Contender,
  ...contenders: Contender[]
): void {
  Deno.bench({ name: baseline[0], group, baseline: true, fn: baseline[1] });
  for (const [name, fn] of contenders) Deno.bench({ name, group, fn });
}

for (const { name, bytes, text } of inputs) {
  compare(`scan ${name}`, ["JSON.parse(text)", () => {
    sink = JSON.parse(text);
  }], ["scanJson(bytes)", () => {
    sink = scanJson(bytes);
  }]);
  compare(`sha256 ${name}`, ["crypto.subtle.digest", async () => {
    sink = await crypto.subtle.digest(
      "SHA-256",
      bytes as Uint8Array<ArrayBuffer>,
    );
  }], ["sha256Hex", () => {
    sink = sha256Hex(bytes);
  }]);
  compare(`utf8 ${name}`, ["TextDecoder fatal", () => {
    sink = fatal.decode(bytes);
  }], ["isValidUtf8", () => {
    sink = isValidUtf8(bytes);
  }], ["firstInvalidUtf8", () => {
    sink = firstInvalidUtf8(bytes);
  }]);
}

const bigIndex = scanJson(big);
const bigValue = JSON.parse(decoder.decode(big)) as object;
const count = (bigValue as unknown[]).length;
const pointers = [0, count >> 1, count - 1].flatMap((i) => [
  `/${i}/nested/lines/1`,
  `/${i}/big`,
  `/${i}/note`,
]);
const wideBytes = wide();
const wideIndex = scanJson(wideBytes);
const wideValue = JSON.parse(decoder.decode(wideBytes)) as object;
const widePointers = ["/member-0", "/member-370000", "/member-739000"];

// jsonpointer.get on the parsed value for scale, then Loom's resolve().
for (
  const [group, value, index, list] of [
    ["pointer 16 MiB", bigValue, bigIndex, pointers],
    ["pointer 16 MiB wide object", wideValue, wideIndex, widePointers],
  ] as const
) {
  compare(group, ["jsonpointer.get on the parsed value", () => {
    for (const pointer of list) sink = jsonpointer.get(value, pointer);
  }], [
    `parsePointer + resolve on the scanned index (${list.length} pointers)`,
    () => {
      for (const pointer of list) sink = index.resolve(parsePointer(pointer));
    },
  ]);
}

globalThis.addEventListener("unload", () => {
  if (sink === Symbol.for("never")) console.log(sink);
});
