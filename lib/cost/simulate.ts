/**
 * Prices the provider request bodies of a run: counts their tokens, replays
 * the provider's cache rules over them and applies a price table.
 *
 * @module
 */
import type {
  ProviderRequestBody,
  ProviderWire,
} from "../providers/request_parts.ts";
import {
  type CacheBlock,
  prefixKeys,
  simulateAnthropicCache,
} from "./anthropic_cache.ts";
import { simulateOpenAICache } from "./openai_cache.ts";
import { modelPrice, type PriceTable } from "./prices.ts";
import { type CostFigures, priceTokens } from "./usage_cost.ts";
import {
  claudeCounter,
  o200kCounter,
  type TokenCounter,
  type TokenizerInfo,
} from "./tokens.ts";

/** One model call of a run, as sent. */
export interface PricedCall {
  /** The HTTP body as the provider's SDK sent it. */
  readonly body: ProviderRequestBody;
  /** Milliseconds since the run started (cache expiry). */
  readonly atMs: number;
  /** The model's reply (the tool call's arguments), for output tokens. */
  readonly reply: unknown;
}

/** The priced run. */
export interface CostReport {
  /** `anthropic` or `openai`. */
  readonly provider: ProviderWire;
  /** The model as given. */
  readonly model: string;
  /** The price table entry used. */
  readonly priced_as: string;
  /** The price table's version. */
  readonly prices: string;
  /** How tokens were counted. */
  readonly tokenizer: TokenizerInfo;
  /** Per request, in order. */
  readonly requests: readonly CostFigures[];
  /** The run in total, with the share of input tokens read from the cache. */
  readonly total: CostFigures & { readonly hit_ratio: number };
}

/** Options of {@linkcode priceRun}. */
export interface PriceRunOptions {
  /** `anthropic` or `openai`. */
  readonly wire: ProviderWire;
  /** The model name (after `anthropic:` / `openai:`). */
  readonly model: string;
  /** The price table. */
  readonly prices: PriceTable;
  /** OpenAI: idle time before a cached prompt is evicted (default 5 minutes). */
  readonly retentionMs?: number;
}

/**
 * Tokens Anthropic adds for tool use with a forced or `any` tool choice
 * (Claude 4 models; 346 with `auto`), counted once at the front.
 */
export const ANTHROPIC_TOOL_PROMPT_TOKENS = 313;
/** Framing tokens per message (role and separators), both providers. */
export const MESSAGE_FRAMING_TOKENS = 4;

/**
 * Prices the calls of one run.
 *
 * @param calls The bodies as sent, in order, with times and replies.
 * @param options Provider, model and prices.
 * @returns Per-request and total figures.
 * @throws {PriceTableError} When the model is not priced (before any
 * tokenizer is loaded).
 */
export async function priceRun(
  calls: readonly PricedCall[],
  options: PriceRunOptions,
): Promise<CostReport> {
  const { name, price } = modelPrice(options.prices, options.model);
  const counter =
    await (options.wire === "anthropic" ? claudeCounter() : o200kCounter());
  const outputs = calls.map((c) => counter.count(JSON.stringify(c.reply)));
  let figures: CostFigures[];
  if (options.wire === "anthropic") {
    const outcomes = simulateAnthropicCache(
      calls.map((c) => ({
        atMs: c.atMs,
        blocks: anthropicBlocks(c.body, counter),
      })),
      price.minCacheTokens,
    );
    figures = outcomes.map((o, i) =>
      priceTokens(price, {
        input: o.inputTokens,
        read: o.cacheReadTokens,
        write5m: o.cacheWrite5mTokens,
        write1h: o.cacheWrite1hTokens,
        output: outputs[i] ?? 0,
      })
    );
  } else {
    const outcomes = simulateOpenAICache(
      calls.map((c) => ({
        atMs: c.atMs,
        tokens: openAITokens(c.body, counter),
      })),
      options.retentionMs === undefined
        ? {}
        : { retentionMs: options.retentionMs },
    );
    figures = outcomes.map((o, i) =>
      priceTokens(price, {
        input: o.inputTokens,
        read: o.cacheReadTokens,
        write5m: 0,
        write1h: 0,
        output: outputs[i] ?? 0,
      })
    );
  }
  return {
    provider: options.wire,
    model: options.model,
    priced_as: name,
    prices: options.prices.version,
    tokenizer: counter.info,
    requests: figures,
    total: totalOf(figures),
  };
}

function totalOf(
  figures: readonly CostFigures[],
): CostFigures & { hit_ratio: number } {
  const sum = (f: (x: CostFigures) => number) =>
    figures.reduce((s, x) => s + f(x), 0);
  const input = sum((x) => x.input_tokens);
  const read = sum((x) => x.cache_read_tokens);
  return {
    input_tokens: input,
    cache_read_tokens: read,
    cache_write_tokens: sum((x) => x.cache_write_tokens),
    uncached_tokens: sum((x) => x.uncached_tokens),
    output_tokens: sum((x) => x.output_tokens),
    input_dollars: sum((x) => x.input_dollars),
    output_dollars: sum((x) => x.output_dollars),
    dollars: sum((x) => x.dollars),
    hit_ratio: input === 0 ? 0 : read / input,
  };
}

interface TextBlockLike {
  readonly type?: unknown;
  readonly text?: unknown;
  readonly cache_control?: { readonly ttl?: unknown } | null;
}

/** An Anthropic body as cache blocks: tools, system blocks, message blocks. */
function anthropicBlocks(
  body: ProviderRequestBody,
  counter: TokenCounter,
): CacheBlock[] {
  const texts: string[] = [];
  const tokens: number[] = [];
  const marks: ("5m" | "1h" | undefined)[] = [];
  const tools = Array.isArray(body["tools"]) ? body["tools"] : [];
  const choice = JSON.stringify(body["tool_choice"] ?? null);
  for (const [i, tool] of tools.entries()) {
    const { cache_control: cc, ...rest } = tool as TextBlockLike;
    const json = JSON.stringify(rest);
    // The tool choice is part of the key: changing it invalidates the cache.
    texts.push(i === tools.length - 1 ? `${json}${choice}` : json);
    tokens.push(
      counter.count(json) + (i === 0 ? ANTHROPIC_TOOL_PROMPT_TOKENS : 0),
    );
    marks.push(ttlOf(cc));
  }
  const add = (block: TextBlockLike, framing: string, extra: number) => {
    const { cache_control: cc, ...rest } = block;
    texts.push(`${framing}${JSON.stringify(rest)}`);
    tokens.push(counter.count(blockText(rest)) + extra);
    marks.push(ttlOf(cc));
  };
  const system = typeof body["system"] === "string"
    ? [{ type: "text", text: body["system"] }]
    : Array.isArray(body["system"])
    ? body["system"]
    : [];
  for (const block of system) add(block as TextBlockLike, "system", 0);
  const messages = Array.isArray(body["messages"]) ? body["messages"] : [];
  for (const message of messages) {
    const { role, content } = message as { role: string; content: unknown };
    const blocks = Array.isArray(content)
      ? content as TextBlockLike[]
      : [{ type: "text", text: String(content) }];
    for (const [b, block] of blocks.entries()) {
      add(block, b === 0 ? role : "", b === 0 ? MESSAGE_FRAMING_TOKENS : 0);
    }
  }
  const keys = prefixKeys(texts);
  return keys.map((key, i) => {
    const mark = marks[i];
    return mark === undefined
      ? { key, tokens: tokens[i] ?? 0 }
      : { key, tokens: tokens[i] ?? 0, breakpoint: mark };
  });
}

/**
 * The text a block puts before the model: a text block's text, a tool
 * result's content (its text blocks joined), a tool call's name and input.
 * Other blocks (images, documents) are not counted, as before.
 */
function blockText(block: Record<string, unknown>): string {
  if (typeof block["text"] === "string") return block["text"];
  if (block["type"] === "tool_result") {
    const content = block["content"];
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content.map((c) => {
        const part = c as Record<string, unknown>;
        return typeof part["text"] === "string" ? part["text"] : "";
      }).join("");
    }
    return "";
  }
  if (block["type"] === "tool_use") {
    return `${String(block["name"])}${JSON.stringify(block["input"] ?? {})}`;
  }
  return "";
}

function ttlOf(
  cc: { readonly ttl?: unknown } | null | undefined,
): "5m" | "1h" | undefined {
  if (cc === undefined || cc === null) return undefined;
  return cc.ttl === "1h" ? "1h" : "5m";
}

/** Separators between parts of an OpenAI prompt (never real token ids). */
const MESSAGE_START = -1;

/** An OpenAI body as one token sequence: tools, then each message. */
function openAITokens(
  body: ProviderRequestBody,
  counter: TokenCounter,
): number[] {
  const out: number[] = [];
  out.push(
    ...counter.encode(
      JSON.stringify({
        tools: body["tools"],
        tool_choice: body["tool_choice"],
      }),
    ),
  );
  const messages = Array.isArray(body["messages"]) ? body["messages"] : [];
  for (const message of messages) {
    const { role, content } = message as { role: string; content: unknown };
    out.push(MESSAGE_START, ...counter.encode(role));
    for (let i = 2; i < MESSAGE_FRAMING_TOKENS; i++) out.push(MESSAGE_START);
    out.push(
      ...counter.encode(
        typeof content === "string" ? content : JSON.stringify(content),
      ),
    );
  }
  return out;
}
