/**
 * The provider-neutral request of one model turn, and its deterministic
 * serialization. Request bytes are always measured on this form, never on a
 * provider's HTTP framing (DESIGN.md "Request bytes").
 *
 * @module
 */

import type { EphemeralCacheControl } from "../context/message.ts";

/** A text block of a turn request. Never empty. */
export interface TurnTextBlock {
  /** Always `"text"`. */
  readonly type: "text";
  /** The block text; at least one character. */
  readonly text: string;
  /** Present on the last block of a stable part: a cache breakpoint. */
  readonly cache_control?: Readonly<EphemeralCacheControl>;
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
 * Serializes a turn request deterministically, in a fixed key order chosen
 * so that the stable parts come first and the byte prefix of consecutive
 * requests survives between checkpoints:
 *
 * - top level: `system`, `messages`, `tool`, `tool_choice` (the tool schema
 *   changes with the phase, so it comes last);
 * - message: `role`, `content`;
 * - text block: `type`, `text`, `cache_control` (a breakpoint moving to a
 *   later block then only changes bytes after the earlier block's text);
 * - every other object (schemas, cache control, tool choice, unknown keys
 *   after the known ones): keys sorted, as {@linkcode stableStringify}.
 *
 * Equal requests give equal bytes whatever order their objects were built in.
 *
 * @param request The request to serialize.
 * @returns Compact JSON.
 *
 * @example
 * ```ts
 * import { serializeTurnRequest } from "./turn_request.ts";
 * import assert from "node:assert/strict";
 * const json = serializeTurnRequest({
 *   system: [{ type: "text", text: "Be brief" }],
 *   messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
 *   tool: { name: "t", description: "d", input_schema: { type: "object" } },
 *   tool_choice: { type: "tool", name: "t" },
 * });
 * assert.equal(
 *   json,
 *   '{"system":[{"type":"text","text":"Be brief"}],' +
 *     '"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}],' +
 *     '"tool":{"name":"t","description":"d","input_schema":{"type":"object"}},' +
 *     '"tool_choice":{"type":"tool","name":"t"}}',
 * );
 * ```
 */
export function serializeTurnRequest(request: TurnRequest): string {
  return ordered(request, REQUEST_KEYS, (key, value) => {
    if (key === "system") return blocks(value);
    if (key === "messages") {
      return Array.isArray(value)
        ? `[${
          value.map((m) =>
            ordered(m, MESSAGE_KEYS, (k, v) =>
              k === "content" ? blocks(v) : undefined)
          ).join(",")
        }]`
        : undefined;
    }
    if (key === "tool") return ordered(value, TOOL_KEYS);
    if (key === "tool_choice") return ordered(value, CHOICE_KEYS);
    return undefined;
  });
}

/**
 * Where the text of one block ends in {@linkcode serializeTurnRequest}'s
 * output: the UTF-8 byte offset just after the block's `"text":"…"` string.
 * A later request that keeps every block up to and including this one
 * begins with these bytes.
 *
 * @param request The request.
 * @param at The block: `message` index (or `"system"`) and `block` index.
 * @returns The byte offset.
 * @throws {RangeError} When the block does not exist.
 *
 * @example
 * ```ts
 * import { type TurnRequest } from "@loom/loom/slice";
 * import { serializeTurnRequest, textEndOffset } from "./turn_request.ts";
 * import assert from "node:assert/strict";
 * const request: TurnRequest = {
 *   system: [{ type: "text", text: "Rules" }],
 *   messages: [{ role: "user", content: [{ type: "text", text: "event 1", cache_control: { type: "ephemeral" } }] }],
 *   tool: { name: "t", description: "d", input_schema: {} },
 *   tool_choice: { type: "tool", name: "t" },
 * };
 * const end = textEndOffset(request, { message: 0, block: 0 });
 * assert.ok(serializeTurnRequest(request).slice(0, end).endsWith('"text":"event 1"'));
 * ```
 */
export function textEndOffset(
  request: TurnRequest,
  at: { readonly message: number | "system"; readonly block: number },
): number {
  const list = at.message === "system"
    ? request.system
    : request.messages[at.message]?.content;
  const block = list?.[at.block];
  if (block === undefined) {
    throw new RangeError(
      `Cannot locate block ${at.block} of ${
        at.message === "system" ? "the system blocks" : `message ${at.message}`
      }: it does not exist`,
    );
  }
  let prefix = '{"system":[';
  const systemCount = at.message === "system"
    ? at.block
    : request.system.length;
  prefix += joinBlocks(request.system.slice(0, systemCount));
  if (at.message === "system") {
    if (systemCount > 0) prefix += ",";
  } else {
    prefix += '],"messages":[';
    const before = request.messages.slice(0, at.message).map((m) =>
      ordered(
        m,
        MESSAGE_KEYS,
        (k, v) => k === "content" ? blocks(v) : undefined,
      )
    );
    prefix += before.join(",");
    if (before.length > 0) prefix += ",";
    const message = request.messages[at.message];
    prefix += `{"role":${JSON.stringify(message?.role)},"content":[`;
    const blocksBefore = list?.slice(0, at.block) ?? [];
    prefix += joinBlocks(blocksBefore);
    if (blocksBefore.length > 0) prefix += ",";
  }
  prefix += `{"type":${JSON.stringify(block.type)},"text":${
    JSON.stringify(block.text)
  }`;
  return utf8Length(prefix);
}

/** The UTF-8 sizes of a serialized turn request's pieces. */
export interface TurnRequestLayout {
  /** Bytes of each system block's JSON, in order. */
  readonly system: readonly number[];
  /** Bytes of each message's blocks' JSON, in order. */
  readonly messages: readonly (readonly number[])[];
  /** Bytes of `"tool":…,"tool_choice":…` (keys, values and the comma between). */
  readonly tool: number;
  /** Bytes of the whole serialization ({@linkcode requestBytes}). */
  readonly total: number;
}

/**
 * Measures the pieces of {@linkcode serializeTurnRequest}'s output: each
 * block's own JSON and the tool with its choice. What they leave out of
 * `total` is the JSON between them (brackets, commas, keys, roles).
 *
 * @param request The request.
 * @returns The sizes.
 *
 * @example
 * ```ts
 * import { requestBytes, turnRequestLayout } from "./turn_request.ts";
 * import assert from "node:assert/strict";
 * const request = {
 *   system: [{ type: "text" as const, text: "Rules" }],
 *   messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Hi" }] }],
 *   tool: { name: "t", description: "d", input_schema: {} },
 *   tool_choice: { type: "tool" as const, name: "t" },
 * };
 * const layout = turnRequestLayout(request);
 * assert.equal(layout.system[0], '{"type":"text","text":"Rules"}'.length);
 * assert.equal(layout.total, requestBytes(request));
 * ```
 */
export function turnRequestLayout(request: TurnRequest): TurnRequestLayout {
  const block = (b: unknown) => utf8Length(ordered(b, BLOCK_KEYS));
  return {
    system: request.system.map(block),
    messages: request.messages.map((m) => m.content.map(block)),
    tool: utf8Length(
      `"tool":${ordered(request.tool, TOOL_KEYS)},"tool_choice":${
        ordered(request.tool_choice, CHOICE_KEYS)
      }`,
    ),
    total: requestBytes(request),
  };
}

const REQUEST_KEYS = ["system", "messages", "tool", "tool_choice"] as const;
const MESSAGE_KEYS = ["role", "content"] as const;
const BLOCK_KEYS = ["type", "text", "cache_control"] as const;
const TOOL_KEYS = ["name", "description", "input_schema"] as const;
const CHOICE_KEYS = ["type", "name"] as const;

function blocks(value: unknown): string | undefined {
  return Array.isArray(value) ? `[${joinBlocks(value)}]` : undefined;
}

function joinBlocks(list: readonly unknown[]): string {
  return list.map((b) => ordered(b, BLOCK_KEYS)).join(",");
}

/**
 * Serializes an object with `keys` first in that order, then any other keys
 * sorted; members are serialized by `special` when it returns a string,
 * otherwise by stableStringify. Non-objects fall back to stableStringify.
 */
function ordered(
  value: unknown,
  keys: readonly string[],
  special?: (key: string, member: unknown) => string | undefined,
): string {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return stableStringify(value);
  }
  const record = value as Record<string, unknown>;
  const rest = Object.keys(record).filter((k) => !keys.includes(k)).sort();
  const parts: string[] = [];
  for (const key of [...keys, ...rest]) {
    const member = record[key];
    if (member === undefined || typeof member === "function") continue;
    const text = special?.(key, member) ?? stableStringify(member);
    parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(",")}}`;
}

/**
 * The size of a turn request: UTF-8 bytes of its deterministic serialization.
 *
 * @param request The request to measure.
 * @returns The byte length of {@linkcode serializeTurnRequest}'s output.
 *
 * @example
 * ```ts
 * import { requestBytes } from "./turn_request.ts";
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
 * JSON with object keys sorted at every depth (integer-like keys first, in
 * ascending order, as JavaScript enumerates them); `undefined` members are
 * dropped as `JSON.stringify` does, and `undefined` itself gives `null`.
 * Written without recursion: a value nested 100,000 deep serializes.
 *
 * @param value Any JSON-compatible value.
 * @returns Deterministic compact JSON.
 *
 * @example
 * ```ts
 * import { stableStringify } from "./turn_request.ts";
 * import assert from "node:assert/strict";
 * assert.equal(stableStringify({ b: 1, a: [{ d: 2, c: 3 }] }), '{"a":[{"c":3,"d":2}],"b":1}');
 * ```
 */
export function stableStringify(value: unknown): string {
  // Iterative, so no value, however deeply nested, can overflow the stack.
  const root = toJsonValue(value);
  if (root === null || typeof root !== "object") return scalarJson(root);
  const stack: Frame[] = [];
  let out = open(root, stack);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const keys = frame.keys;
    let member: unknown;
    if (keys === null) {
      const items = frame.container as readonly unknown[];
      if (frame.next >= items.length) {
        out += "]";
        stack.pop();
        continue;
      }
      if (frame.next > 0) out += ",";
      member = toJsonValue(items[frame.next++]);
    } else {
      const record = frame.container as Record<string, unknown>;
      member = undefined;
      while (frame.next < keys.length) {
        const key = keys[frame.next++]!;
        const candidate = toJsonValue(record[key]);
        if (dropped(candidate)) continue;
        out += `${frame.written++ > 0 ? "," : ""}${JSON.stringify(key)}:`;
        member = candidate;
        break;
      }
      if (member === undefined) {
        out += "}";
        stack.pop();
        continue;
      }
    }
    out += member !== null && typeof member === "object"
      ? open(member, stack)
      : scalarJson(member);
  }
  return out;
}

/** A container being written: its members not yet written. */
interface Frame {
  /** Sorted keys of an object; `null` for an array. */
  readonly keys: string[] | null;
  readonly container: object;
  next: number;
  written: number;
}

function open(container: object, stack: Frame[]): string {
  if (Array.isArray(container)) {
    stack.push({ keys: null, container, next: 0, written: 0 });
    return "[";
  }
  stack.push({ keys: sortedKeys(container), container, next: 0, written: 0 });
  return "{";
}

function scalarJson(value: unknown): string {
  return dropped(value) ? "null" : JSON.stringify(value);
}

/**
 * Keys in the order the former replacer produced: integer-like keys first in
 * ascending order (JavaScript enumerates them so in any object), then the
 * others sorted.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  let integers = 0;
  while (integers < keys.length && isArrayIndex(keys[integers]!)) integers++;
  if (integers === 0) return keys.sort();
  return [...keys.slice(0, integers), ...keys.slice(integers).sort()];
}

function isArrayIndex(key: string): boolean {
  return /^(?:0|[1-9][0-9]{0,9})$/.test(key) && Number(key) < 4_294_967_295;
}

/** Applies `toJSON` as JSON.stringify does. */
function toJsonValue(value: unknown): unknown {
  if (
    value !== null && typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    return (value as { toJSON(): unknown }).toJSON();
  }
  return value;
}

/** Members JSON.stringify leaves out of an object. */
function dropped(value: unknown): boolean {
  return value === undefined || typeof value === "function" ||
    typeof value === "symbol";
}

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  // The native encoder beats a JS code-unit loop on requests of tens of KiB.
  return encoder.encode(text).byteLength;
}
