/**
 * The versioned price table of the cost simulator, in US dollars per million
 * tokens, with each model's caching rules, and the reader of a user's
 * override file.
 *
 * @module
 */
import { LoomError } from "../errors.ts";
import { isPlainObject } from "../plain_object.ts";

/** Prices and cache rules of one model. */
export interface ModelPrice {
  /** `anthropic` (explicit breakpoints) or `openai` (automatic prefix caching). */
  readonly provider: "anthropic" | "openai";
  /** Uncached input, $ per million tokens. */
  readonly input: number;
  /** Output, $ per million tokens. */
  readonly output: number;
  /** Cache reads, $ per million tokens (Anthropic 0.1× input; OpenAI's cached-input price). */
  readonly cacheRead: number;
  /** Anthropic 5-minute cache writes, $ per million tokens (1.25× input); 0 for OpenAI. */
  readonly cacheWrite5m: number;
  /** Anthropic 1-hour cache writes, $ per million tokens (2× input); 0 for OpenAI. */
  readonly cacheWrite1h: number;
  /** Shortest prefix that caches, in tokens (Anthropic per model; OpenAI 1,024). */
  readonly minCacheTokens: number;
}

/** A price table: a version label and the models it prices. */
export interface PriceTable {
  /** Where the prices come from and when; printed beside every figure. */
  readonly version: string;
  /** Prices by model name (as after `anthropic:` / `openai:`). */
  readonly models: Readonly<Record<string, ModelPrice>>;
}

function anthropic(
  input: number,
  output: number,
  minCacheTokens: number,
): ModelPrice {
  return {
    provider: "anthropic",
    input,
    output,
    cacheRead: round(input * 0.1),
    cacheWrite5m: round(input * 1.25),
    cacheWrite1h: round(input * 2),
    minCacheTokens,
  };
}

function openai(input: number, cached: number, output: number): ModelPrice {
  return {
    provider: "openai",
    input,
    output,
    cacheRead: cached,
    cacheWrite5m: 0,
    cacheWrite1h: 0,
    minCacheTokens: 1024,
  };
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/**
 * List prices (standard tier, no batch discount) and cache rules of the
 * models Loom is priced against. Anthropic: reads 0.1×, 5m writes 1.25×, 1h
 * writes 2× the input price; minimum cacheable prefix per model. OpenAI:
 * automatic prefix caching from 1,024 tokens in 128-token steps at the
 * model's cached-input price.
 *
 * @example
 * ```ts
 * import { DEFAULT_PRICES } from "./prices.ts";
 * import assert from "node:assert/strict";
 * const sonnet = DEFAULT_PRICES.models["claude-sonnet-4-5"];
 * assert.equal(sonnet?.input, 3);
 * assert.equal(sonnet?.cacheRead, 0.3);
 * assert.equal(sonnet?.cacheWrite5m, 3.75);
 * ```
 */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  version: "loom-prices/2025-11 (list prices, standard tier)",
  models: Object.freeze({
    "claude-sonnet-4-5": anthropic(3, 15, 1024),
    "claude-sonnet-4": anthropic(3, 15, 1024),
    "claude-opus-4-1": anthropic(15, 75, 1024),
    "claude-opus-4-5": anthropic(5, 25, 4096),
    "claude-haiku-4-5": anthropic(1, 5, 4096),
    "claude-3-5-haiku": anthropic(0.8, 4, 2048),
    "gpt-4.1": openai(2, 0.5, 8),
    "gpt-4.1-mini": openai(0.4, 0.1, 1.6),
    "gpt-4o": openai(2.5, 1.25, 10),
    "gpt-4o-mini": openai(0.15, 0.075, 0.6),
    "gpt-5": openai(1.25, 0.125, 10),
    "gpt-5-mini": openai(0.25, 0.025, 2),
  }),
});

/** A price file or a model name that cannot be used. */
export class PriceTableError extends LoomError.TypeError<"PriceTableError"> {}

const FIELDS = [
  "input",
  "output",
  "cacheRead",
  "cacheWrite5m",
  "cacheWrite1h",
  "minCacheTokens",
] as const;

/**
 * Reads a price override file over a base table: `{"version": "…",
 * "models": {"NAME": {"provider": "anthropic", "input": 3, …}}}`. A model
 * already in the base may give only the fields it changes; a new one gives
 * `provider`, `input` and `output` (the cache fields then follow the
 * provider's rules).
 *
 * @param text The file's JSON text.
 * @param source The file name, for messages.
 * @param base The table to override (default {@linkcode DEFAULT_PRICES}).
 * @returns The merged table; its version names both.
 * @throws {PriceTableError} `price_file_invalid` naming the file and the key.
 *
 * @example
 * ```ts
 * import { parsePriceOverrides } from "./prices.ts";
 * import assert from "node:assert/strict";
 * const table = parsePriceOverrides(
 *   '{"version": "team-2026", "models": {"claude-sonnet-4-5": {"input": 2.5}}}',
 *   "prices.json",
 * );
 * assert.equal(table.models["claude-sonnet-4-5"]?.input, 2.5);
 * assert.equal(table.models["claude-sonnet-4-5"]?.output, 15);
 * assert.match(table.version, /team-2026/);
 * ```
 */
export function parsePriceOverrides(
  text: string,
  source: string,
  base: PriceTable = DEFAULT_PRICES,
): PriceTable {
  const fail = (why: string): never => {
    throw new PriceTableError(
      "price_file_invalid",
      `Price file ${source} cannot be used: ${why}`,
    );
  };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    fail(`it is not JSON (${error instanceof Error ? error.message : error})`);
  }
  if (!isPlainObject(json)) return fail("it must be a JSON object");
  const version = json["version"];
  if (typeof version !== "string" || version === "") {
    fail('"version" must name the prices, e.g. "team-2026-01"');
  }
  const models = json["models"];
  if (!isPlainObject(models)) return fail('"models" must be an object');
  const merged: Record<string, ModelPrice> = { ...base.models };
  for (const [name, entry] of Object.entries(models)) {
    if (!isPlainObject(entry)) return fail(`models.${name} must be an object`);
    const known = Object.keys(entry).find((k) =>
      k !== "provider" && !(FIELDS as readonly string[]).includes(k)
    );
    if (known !== undefined) fail(`unknown key models.${name}.${known}`);
    for (const field of FIELDS) {
      const value = entry[field];
      if (
        value !== undefined &&
        (typeof value !== "number" || !Number.isFinite(value) || value < 0)
      ) {
        fail(`models.${name}.${field} must be a number of at least 0`);
      }
    }
    const provider = entry["provider"] ?? merged[name]?.provider;
    if (provider !== "anthropic" && provider !== "openai") {
      return fail(`models.${name}.provider must be anthropic or openai`);
    }
    const previous = merged[name];
    const numbers = entry as Partial<Record<typeof FIELDS[number], number>>;
    let start: ModelPrice;
    if (previous !== undefined && previous.provider === provider) {
      start = previous;
    } else {
      if (numbers.input === undefined || numbers.output === undefined) {
        return fail(`models.${name} needs input and output prices`);
      }
      start = provider === "anthropic"
        ? anthropic(numbers.input, numbers.output, 1024)
        : openai(numbers.input, numbers.input / 2, numbers.output);
    }
    const changedInput = numbers.input !== undefined &&
      provider === "anthropic" && previous !== undefined;
    const derived = changedInput
      ? anthropic(numbers.input!, start.output, start.minCacheTokens)
      : start;
    merged[name] = { ...derived, ...numbers, provider };
  }
  return {
    version: `${json["version"]} over ${base.version}`,
    models: merged,
  };
}

/**
 * Finds a model's prices: the exact name, else the longest table name the
 * model name starts with (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`).
 *
 * @param table The price table.
 * @param model The model name.
 * @returns The prices and the table name that matched.
 * @throws {PriceTableError} `unknown_model` listing the priced models.
 *
 * @example
 * ```ts
 * import { DEFAULT_PRICES, modelPrice } from "./prices.ts";
 * import assert from "node:assert/strict";
 * assert.equal(modelPrice(DEFAULT_PRICES, "claude-sonnet-4-5-20250929").name, "claude-sonnet-4-5");
 * ```
 */
export function modelPrice(
  table: PriceTable,
  model: string,
): { readonly name: string; readonly price: ModelPrice } {
  const exact = table.models[model];
  if (exact !== undefined) return { name: model, price: exact };
  const prefix =
    Object.keys(table.models).filter((name) => model.startsWith(`${name}-`))
      .sort((a, b) => b.length - a.length)[0];
  if (prefix !== undefined) {
    return { name: prefix, price: table.models[prefix]! };
  }
  throw new PriceTableError(
    "unknown_model",
    `Cannot price model ${
      JSON.stringify(model)
    }: the price table ${table.version} has ${
      Object.keys(table.models).join(", ")
    }; add it with a price file`,
  );
}
