/**
 * The provider-neutral request of one model turn, and its deterministic
 * serialization. Request bytes are always measured on this form, never on a
 * provider's HTTP framing (DESIGN.md "Request bytes").
 *
 * @module
 */

/** Anthropic-style cache marker; `ttl` omitted means the provider default (5m). */
export interface CacheControl {
  /** Always `"ephemeral"`. */
  readonly type: "ephemeral";
  /** Time to live of the cache entry. */
  readonly ttl?: "5m" | "1h";
}

/** A text block of a turn request. Never empty. */
export interface TurnTextBlock {
  /** Always `"text"`. */
  readonly type: "text";
  /** The block text; at least one character. */
  readonly text: string;
  /** Present on the last block of a stable part: a cache breakpoint. */
  readonly cache_control?: CacheControl;
}

/** One conversation message of a turn request. */
export interface TurnMessage {
  /** Who speaks; messages alternate and start with `user`. */
  readonly role: "user" | "assistant";
  /** Text blocks only: briefings carry no images. */
  readonly content: readonly TurnTextBlock[];
}

/** The single tool the model is forced to call this turn. */
export interface TurnTool {
  /** `select_action` or `action_arguments`. */
  readonly name: string;
  /** What the tool is for, shown to the model. */
  readonly description: string;
  /** JSON Schema (draft 2020-12 subset) of the tool's arguments. */
  readonly input_schema: Readonly<Record<string, unknown>>;
}

/** A provider-neutral request: system, messages, tool schema, tool choice. */
export interface TurnRequest {
  /** System text blocks (instructions, tool guidance). */
  readonly system: readonly TurnTextBlock[];
  /** Conversation messages, starting with `user`. */
  readonly messages: readonly TurnMessage[];
  /** The tool schema offered. */
  readonly tool: TurnTool;
  /** The forced tool choice: always the tool above. */
  readonly tool_choice: { readonly type: "tool"; readonly name: string };
}

/**
 * Serializes a turn request with every object's keys in sorted order, so
 * equal requests give equal bytes whatever order their objects were built in.
 *
 * @param request The request to serialize.
 * @returns Compact JSON with sorted keys.
 *
 * @example
 * ```ts
 * import { serializeTurnRequest } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const json = serializeTurnRequest({
 *   system: [{ type: "text", text: "Be brief" }],
 *   messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
 *   tool: { name: "t", description: "d", input_schema: { type: "object" } },
 *   tool_choice: { type: "tool", name: "t" },
 * });
 * assert.ok(json.startsWith('{"messages":'));
 * ```
 */
export function serializeTurnRequest(request: TurnRequest): string {
  return stableStringify(request);
}

/**
 * The size of a turn request: UTF-8 bytes of its deterministic serialization.
 *
 * @param request The request to measure.
 * @returns The byte length of {@linkcode serializeTurnRequest}'s output.
 *
 * @example
 * ```ts
 * import { requestBytes } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const n = requestBytes({
 *   system: [{ type: "text", text: "é" }],
 *   messages: [],
 *   tool: { name: "t", description: "d", input_schema: {} },
 *   tool_choice: { type: "tool", name: "t" },
 * });
 * assert.ok(n > 0);
 * ```
 */
export function requestBytes(request: TurnRequest): number {
  return utf8Length(serializeTurnRequest(request));
}

/**
 * JSON with object keys sorted at every depth; `undefined` members are
 * dropped as `JSON.stringify` does.
 *
 * @param value Any JSON-compatible value.
 * @returns Deterministic compact JSON.
 *
 * @example
 * ```ts
 * import { stableStringify } from "@loom/loom";
 * import assert from "node:assert/strict";
 * assert.equal(stableStringify({ b: 1, a: [{ d: 2, c: 3 }] }), '{"a":[{"c":3,"d":2}],"b":1}');
 * ```
 */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      sorted[k] = (v as Record<string, unknown>)[k];
    }
    return sorted;
  });
}

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  // encodeInto into a right-sized buffer avoids a second allocation on big requests.
  return encoder.encode(text).byteLength;
}
