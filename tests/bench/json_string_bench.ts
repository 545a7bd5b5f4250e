/**
 * The JSON string lexer (`lib/reference/json_string.ts`) where users meet
 * it, against the runtime's own parser on the same bytes:
 *
 * - "assemble …": the gateway's `MessageAssembler` taking a 40 MB JSON-RPC
 *   answer in 64 KiB pipe chunks, its text unescaped, checked and hashed
 *   as it streams, vs `JSON.parse` of the decoded line (baseline), for a
 *   log-like text (one `\n` escape a line) and a text with non-ASCII
 *   characters and `\uXXXX` escapes.
 * - "decode …": `decodeJsonString` of a 4 MB string lexeme of a scanned
 *   document vs `JSON.parse` of the lexeme.
 *
 * Run: deno bench --allow-read --allow-env tests/bench/json_string_bench.ts
 */
import { MessageAssembler } from "../../lib/mcp/gateway/message_assembler.ts";
import { scanJson } from "../../lib/reference/json_scanner.ts";
import { decodeJsonString } from "../../lib/reference/json_string.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });
const CHUNK = 64 * 1024;

function answer(text: string): Uint8Array {
  return encoder.encode(JSON.stringify({
    jsonrpc: "2.0",
    id: 2,
    result: { content: [{ type: "text", text }] },
  }));
}

const LOG =
  "2026-01-01T00:00:00Z INFO request served in 12 ms path=/api/v1/items\n";
const MIXED =
  "Zürich — “quoted” \u0001 tab\there, emoji 😀 and a \\ backslash\n";
const inputs = [
  ["log-like text", answer(LOG.repeat(40_000_000 / LOG.length))],
  ["non-ASCII and \\u escapes", answer(MIXED.repeat(40_000_000 / 80))],
] as const;

let sink: unknown;

for (const [name, line] of inputs) {
  const group = `assemble 40 MB, ${name}`;
  Deno.bench({
    name: "JSON.parse of the decoded line",
    group,
    baseline: true,
    fn: () => {
      sink = JSON.parse(decoder.decode(line));
    },
  });
  Deno.bench({
    name: "MessageAssembler in 64 KiB chunks",
    group,
    fn: () => {
      const assembler = new MessageAssembler({
        maxMessageBytes: 64 << 20,
        largeStringBytes: 64 << 10,
      });
      for (let at = 0; at < line.length; at += CHUNK) {
        assembler.push(line.subarray(at, at + CHUNK));
      }
      const out = assembler.end(() => true);
      if (out.kind !== "message") throw new Error(out.kind);
      sink = out;
    },
  });
}

const document = encoder.encode(
  JSON.stringify({ text: MIXED.repeat(4_000_000 / 80) }),
);
const span = scanJson(document).resolve(["text"]);
const lexeme = decoder.decode(document.subarray(span.start, span.end));
Deno.bench({
  name: "JSON.parse of the lexeme",
  group: "decode a 4 MB string",
  baseline: true,
  fn: () => {
    sink = JSON.parse(lexeme);
  },
});
Deno.bench({
  name: "decodeJsonString",
  group: "decode a 4 MB string",
  fn: () => {
    sink = decodeJsonString(document, span);
  },
});

globalThis.addEventListener("unload", () => {
  if (sink === Symbol.for("never")) console.log(sink);
});
