/**
 * How much of a request repeats the one before: a request's parts in cache
 * order joined into bytes, where its breakpoints end, the longest common
 * prefix with the previous request and the part where they first differ.
 * The context report measures every request this way.
 *
 * @module
 */
import { stableStringify, type TurnRequest } from "./turn_request.ts";

const encoder = new TextEncoder();

/**
 * One part of a provider request body in the provider's cache order
 * (Anthropic: tools → system → messages): its label and its JSON.
 */
export interface RequestPart {
  /** `tools` (tool definitions and tool choice), `system block N` or `message N block M`. */
  readonly part: string;
  /** The part's JSON as the body carries it. */
  readonly json: string;
}

/** Where a request first differs from the previous request of the run. */
export interface FirstDivergence {
  /** Byte offset into the parts in cache order (equals `prefix_stable_bytes`). */
  readonly offset: number;
  /** The part holding that byte, or `end` when the request ends there. */
  readonly part: string;
}

/**
 * Length of the longest common prefix of two byte arrays.
 *
 * @param a First bytes.
 * @param b Second bytes.
 * @returns The number of leading bytes both share.
 *
 * @example
 * ```ts
 * import { commonPrefixLength } from "./request_prefix.ts";
 * import assert from "node:assert/strict";
 * const e = new TextEncoder();
 * assert.equal(commonPrefixLength(e.encode("abcd"), e.encode("abxy")), 2);
 * ```
 */
export function commonPrefixLength(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.byteLength, b.byteLength);
  let i = 0;
  // Compare 4 bytes at a time while aligned views allow it.
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    const wa = new Uint32Array(a.buffer, a.byteOffset, n >>> 2);
    const wb = new Uint32Array(b.buffer, b.byteOffset, n >>> 2);
    let w = 0;
    while (w < wa.length && wa[w] === wb[w]) w += 1;
    i = w * 4;
  }
  while (i < n && a[i] === b[i]) i += 1;
  return i;
}

/** Parts joined into bytes, with where each part starts. */
export interface MeasuredRequest {
  readonly bytes: Uint8Array;
  readonly starts: readonly number[];
  readonly labels: readonly string[];
  /** Where the parts of the request's breakpoint blocks end. */
  readonly breakpoints: readonly number[];
}

/**
 * A request's parts joined into bytes, with where each part starts and
 * where its breakpoint blocks' content ends.
 *
 * @param parts The request's parts in cache order.
 * @param request The request, for its breakpoints (none without it).
 * @returns The measured request.
 */
export function measureRequest(
  parts: readonly RequestPart[],
  request: TurnRequest | undefined,
): MeasuredRequest {
  const encoded = parts.map((p) => encoder.encode(p.json));
  const bytes = new Uint8Array(
    encoded.reduce((n, e) => n + e.byteLength, 0),
  );
  const starts: number[] = [];
  let at = 0;
  for (const e of encoded) {
    starts.push(at);
    bytes.set(e, at);
    at += e.byteLength;
  }
  const labels = parts.map((p) => p.part);
  const breakpoints: number[] = [];
  for (const label of request === undefined ? [] : breakpointLabels(request)) {
    const index = labels.indexOf(label);
    if (index >= 0) {
      // The prefix a later request can share ends with the block's content:
      // the marker itself moves on (caches match content, not markers).
      const json = parts[index]!.json;
      const marker = json.lastIndexOf(',"cache_control":');
      breakpoints.push(
        (starts[index] ?? 0) +
          (marker < 0
            ? encoded[index]?.byteLength ?? 0
            : encoder.encode(json.slice(0, marker)).byteLength),
      );
    }
  }
  return {
    bytes,
    starts,
    labels,
    breakpoints: breakpoints.sort((a, b) => a - b),
  };
}

/** The part labels of the blocks that carry a cache breakpoint. */
function breakpointLabels(request: TurnRequest): string[] {
  const labels: string[] = [];
  for (const [i, block] of request.system.entries()) {
    if (block.cache_control !== undefined) labels.push(`system block ${i}`);
  }
  for (const [m, message] of request.messages.entries()) {
    for (const [b, block] of message.content.entries()) {
      if (block.cache_control !== undefined) {
        labels.push(`message ${m} block ${b}`);
      }
    }
  }
  return labels;
}

/**
 * Where a request first differs from the previous one: the offset of the
 * longest common prefix and the part it falls in (`end` when the request
 * is all prefix).
 *
 * @param previous The previous request, measured.
 * @param next This request, measured.
 * @returns The divergence.
 */
export function firstDivergence(
  previous: MeasuredRequest,
  next: MeasuredRequest,
): FirstDivergence {
  const offset = commonPrefixLength(previous.bytes, next.bytes);
  if (offset >= next.bytes.byteLength) return { offset, part: "end" };
  let index = 0;
  while (
    index + 1 < next.starts.length && (next.starts[index + 1] ?? 0) <= offset
  ) index += 1;
  return { offset, part: next.labels[index] ?? "end" };
}

/**
 * The parts of a turn request in Anthropic's cache order — `tools` (the tool
 * and the tool choice), then `system block N`, then `message N block M` (the
 * first block of a message carries its role) — as the report measures them
 * when the provider gives no body of its own (recordings, embedders'
 * providers).
 *
 * @param request The turn request.
 * @returns The parts, in order.
 *
 * @example
 * ```ts
 * import { neutralRequestParts } from "./request_prefix.ts";
 * import assert from "node:assert/strict";
 * const parts = neutralRequestParts({
 *   system: [{ type: "text", text: "Rules" }],
 *   messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
 *   tool: { name: "t", description: "d", input_schema: {} },
 *   tool_choice: { type: "tool", name: "t" },
 * });
 * assert.deepEqual(parts.map((p) => p.part), ["tools", "system block 0", "message 0 block 0"]);
 * ```
 */
export function neutralRequestParts(request: TurnRequest): RequestPart[] {
  const parts: RequestPart[] = [{
    part: "tools",
    json: stableStringify({
      tools: [request.tool],
      tool_choice: request.tool_choice,
    }),
  }];
  for (const [i, block] of request.system.entries()) {
    parts.push({ part: `system block ${i}`, json: JSON.stringify(block) });
  }
  for (const [m, message] of request.messages.entries()) {
    for (const [b, block] of message.content.entries()) {
      parts.push({
        part: `message ${m} block ${b}`,
        json: b === 0
          ? `${JSON.stringify({ role: message.role })}${JSON.stringify(block)}`
          : JSON.stringify(block),
      });
    }
  }
  return parts;
}
