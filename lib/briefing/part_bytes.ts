/**
 * A request's bytes by part: where the bytes of a serialized turn request
 * go — the tool definitions, each section of the briefing, the result
 * descriptors and the tool results shown inline inside those sections, and
 * the JSON framing between blocks. The parts partition the request: they
 * add up to its `request_bytes` exactly, so a timeline can stack them.
 *
 * @module
 */
import type { SectionName } from "../context/section.ts";
import type { TurnRequest } from "./turn_request.ts";
import { turnRequestLayout } from "./turn_request.ts";

/**
 * The parts, in cache order (tools come first in the provider's prefix),
 * with the two carved out of the sections after the section they mostly
 * sit in:
 *
 * - `tool_definitions`: the tool schema and the tool choice;
 * - `foundation`, `focus`, `topic`, `convo`, `step`, `attention`: the
 *   briefing's sections (instructions and guidance; the intent; the
 *   checkpoint or omitted-entries line; events or transcript entries; the
 *   stage line; lookup answers and notes), without what follows;
 * - `descriptors`: result descriptors inside events and transcript entries
 *   (id, digest, origin, size, reference), previews excluded;
 * - `tool_results_inline`: result content inside the prompt — descriptor
 *   previews (legacy) and lookup answers;
 * - `framing`: the JSON between blocks (brackets, commas, keys, the role).
 */
export const PART_NAMES = [
  "tool_definitions",
  "foundation",
  "focus",
  "topic",
  "convo",
  "descriptors",
  "tool_results_inline",
  "step",
  "attention",
  "framing",
] as const;

/** One part of a request; see {@linkcode PART_NAMES}. */
export type PartName = typeof PART_NAMES[number];

/** A request's bytes by part; they add up to its request bytes. */
export type PartBytes = { readonly [K in PartName]: number };

/**
 * What one block of a request holds: the section it comes from, and how
 * many of its text's bytes (as escaped inside the request's JSON) are
 * descriptors and inline results.
 */
export interface BlockShare {
  /** The section of the block. */
  readonly section: SectionName;
  /** Bytes of descriptors in the block's text. */
  readonly descriptors: number;
  /** Bytes of inline result content in the block's text. */
  readonly results: number;
}

/** A block with nothing carved out of it. */
export function plainShare(section: SectionName): BlockShare {
  return { section, descriptors: 0, results: 0 };
}

const encoder = new TextEncoder();

/**
 * The bytes a text takes inside a JSON string of the request: its UTF-8
 * length after JSON escaping, without the quotes. Escaping is per
 * character, so the bytes of pieces of a text add up to the text's.
 *
 * @param text Any text.
 * @returns Bytes.
 *
 * @example
 * ```ts
 * import { escapedBytes } from "./part_bytes.ts";
 * import assert from "node:assert/strict";
 * assert.equal(escapedBytes('a"b\n'), 6);
 * assert.equal(escapedBytes("é"), 2);
 * ```
 */
export function escapedBytes(text: string): number {
  return encoder.encode(JSON.stringify(text)).byteLength - 2;
}

/**
 * Measures a request's bytes by part.
 *
 * @param request The request as sent.
 * @param shares One share per block: the system blocks, then every
 *   message's blocks, in order.
 * @returns The bytes by part; they add up to the request's bytes.
 * @throws {RangeError} When `shares` does not have one entry per block.
 *
 * @example
 * ```ts
 * import { partBytes, plainShare, PART_NAMES } from "./part_bytes.ts";
 * import { requestBytes } from "./turn_request.ts";
 * import assert from "node:assert/strict";
 * const request = {
 *   system: [{ type: "text" as const, text: "Rules" }],
 *   messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Intent: fix" }] }],
 *   tool: { name: "t", description: "d", input_schema: {} },
 *   tool_choice: { type: "tool" as const, name: "t" },
 * };
 * const parts = partBytes(request, [plainShare("foundation"), plainShare("focus")]);
 * assert.equal(PART_NAMES.reduce((n, p) => n + parts[p], 0), requestBytes(request));
 * ```
 */
export function partBytes(
  request: TurnRequest,
  shares: readonly BlockShare[],
): PartBytes {
  const layout = turnRequestLayout(request);
  const blocks = [...layout.system, ...layout.messages.flat()];
  if (blocks.length !== shares.length) {
    throw new RangeError(
      `Cannot measure a request of ${blocks.length} blocks by ${shares.length} shares: give one share per block`,
    );
  }
  const sums: Record<PartName, number> = {
    tool_definitions: layout.tool,
    foundation: 0,
    focus: 0,
    topic: 0,
    convo: 0,
    descriptors: 0,
    tool_results_inline: 0,
    step: 0,
    attention: 0,
    framing: 0,
  };
  let counted = layout.tool;
  for (const [i, bytes] of blocks.entries()) {
    const share = shares[i]!;
    sums[share.section] += bytes - share.descriptors - share.results;
    sums.descriptors += share.descriptors;
    sums.tool_results_inline += share.results;
    counted += bytes;
  }
  sums.framing = layout.total - counted;
  return sums;
}

/** A descriptor as it appears in a text: its JSON, and its preview's JSON string when it has one. */
export interface DescriptorText {
  /** The descriptor's JSON as written into the text. */
  readonly json: string;
  /** `JSON.stringify(preview)` when the descriptor carries a preview. */
  readonly preview?: string;
}

/**
 * How much of a block's text is descriptors and inline results: each
 * descriptor found in the text (in order; one cut off by a length limit
 * is left to the section), its preview counted as an inline result.
 *
 * @param text The block's text.
 * @param descriptors The descriptors written into it, in order.
 * @returns The carve-outs, in escaped bytes.
 *
 * @example
 * ```ts
 * import { escapedBytes, textShare } from "./part_bytes.ts";
 * import assert from "node:assert/strict";
 * const d = '{"preview":"x","result":"result-1"}';
 * const share = textShare(`Report: ${d}`, [{ json: d, preview: '"x"' }]);
 * assert.equal(share.results, escapedBytes('"x"'));
 * assert.equal(share.descriptors + share.results, escapedBytes(d));
 * ```
 */
export function textShare(
  text: string,
  descriptors: readonly DescriptorText[],
): { readonly descriptors: number; readonly results: number } {
  let at = 0;
  let described = 0;
  let results = 0;
  for (const d of descriptors) {
    const found = text.indexOf(d.json, at);
    if (found < 0) continue;
    at = found + d.json.length;
    const preview = d.preview === undefined ? 0 : escapedBytes(d.preview);
    described += escapedBytes(d.json) - preview;
    results += preview;
  }
  return { descriptors: described, results };
}
