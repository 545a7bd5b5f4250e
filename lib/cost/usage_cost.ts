/**
 * Dollars from token counts: the one pricing rule of the cost simulator,
 * and the estimate of a finished run from the counters its provider
 * reported (a context report's request lines), as `loom report` shows it.
 *
 * @module
 */
import type { ModelUsage } from "../briefing/context_report.ts";
import {
  DEFAULT_PRICES,
  type ModelPrice,
  modelPrice,
  type PriceTable,
  PriceTableError,
} from "./prices.ts";

/** Token and dollar figures of one request, or of a run in total. */
export interface CostFigures {
  /** All input tokens. */
  readonly input_tokens: number;
  /** Input tokens read from the cache. */
  readonly cache_read_tokens: number;
  /** Input tokens written to the cache (5m and 1h). */
  readonly cache_write_tokens: number;
  /** Input tokens neither read nor written. */
  readonly uncached_tokens: number;
  /** Output tokens (the tool call's arguments). */
  readonly output_tokens: number;
  /** Dollars for the input tokens. */
  readonly input_dollars: number;
  /** Dollars for the output tokens. */
  readonly output_dollars: number;
  /** Input and output dollars. */
  readonly dollars: number;
}

/** Token counts of one request, split the way prices apply. */
export interface TokenCounts {
  /** All input tokens, cached ones included. */
  readonly input: number;
  /** Input tokens read from the cache. */
  readonly read: number;
  /** Input tokens written to the 5-minute cache. */
  readonly write5m: number;
  /** Input tokens written to the 1-hour cache. */
  readonly write1h: number;
  /** Output tokens. */
  readonly output: number;
}

/**
 * Prices one request's tokens: uncached input, cache reads and writes and
 * output, each at the model's own price per million tokens.
 *
 * @param price The model's prices.
 * @param t The request's tokens.
 * @returns Tokens and dollars.
 *
 * @example
 * ```ts
 * import { DEFAULT_PRICES } from "./prices.ts";
 * import { priceTokens } from "./usage_cost.ts";
 * import assert from "node:assert/strict";
 * const sonnet = DEFAULT_PRICES.models["claude-sonnet-4-5"]!;
 * const figures = priceTokens(sonnet, { input: 1_000_000, read: 0, write5m: 0, write1h: 0, output: 0 });
 * assert.equal(figures.dollars, 3);
 * ```
 */
export function priceTokens(price: ModelPrice, t: TokenCounts): CostFigures {
  const uncached = t.input - t.read - t.write5m - t.write1h;
  const input = (uncached * price.input + t.read * price.cacheRead +
    t.write5m * price.cacheWrite5m + t.write1h * price.cacheWrite1h) / 1e6;
  const output = t.output * price.output / 1e6;
  return {
    input_tokens: t.input,
    cache_read_tokens: t.read,
    cache_write_tokens: t.write5m + t.write1h,
    uncached_tokens: uncached,
    output_tokens: t.output,
    input_dollars: input,
    output_dollars: output,
    dollars: input + output,
  };
}

/** The estimated cost of a run from its provider's counters. */
export type UsageCost =
  | {
    /** The run was priced. */
    readonly kind: "priced";
    /** Dollars over the calls that reported usage. */
    readonly dollars: number;
    /** The price table entry used. */
    readonly priced_as: string;
    /** The price table's version. */
    readonly prices: string;
    /** Calls with counters (the estimate covers these). */
    readonly calls_reported: number;
    /** Calls made. */
    readonly calls: number;
  }
  | {
    /** The run could not be priced. */
    readonly kind: "unpriced";
    /** Why, e.g. `a recorded model has no price`. */
    readonly reason: string;
  };

/**
 * Estimates what a run cost from the token counters its provider reported
 * (Anthropic's `input_tokens` exclude cache reads and writes, OpenAI's
 * `prompt_tokens` include cached tokens; writes are priced as the 5-minute
 * cache the slice uses). A call without counters adds nothing; the result
 * says how many calls reported.
 *
 * @param model The model as the context report names it (`anthropic:MODEL`,
 *   `openai:MODEL`, `recorded`), or `null`.
 * @param usage The counters of every call, in order.
 * @param table Prices (default {@linkcode DEFAULT_PRICES}).
 * @returns The estimate, or why there is none.
 *
 * @example
 * ```ts
 * import { usageCost } from "./usage_cost.ts";
 * import assert from "node:assert/strict";
 * const cost = usageCost("anthropic:claude-sonnet-4-5-20250929", [
 *   { input_tokens: 1_000_000, output_tokens: 0, cache_read_tokens: null, cache_write_tokens: null },
 * ]);
 * assert.equal(cost.kind === "priced" && cost.dollars, 3);
 * assert.equal(usageCost("recorded", []).kind, "unpriced");
 * ```
 */
export function usageCost(
  model: string | null,
  usage: readonly ModelUsage[],
  table: PriceTable = DEFAULT_PRICES,
): UsageCost {
  if (model === null) {
    return { kind: "unpriced", reason: "the report names no model" };
  }
  const colon = model.indexOf(":");
  const provider = colon < 0 ? model : model.slice(0, colon);
  const name = model.slice(colon + 1);
  if (provider !== "anthropic" && provider !== "openai") {
    return {
      kind: "unpriced",
      reason: provider === "recorded"
        ? "a recorded model has no price"
        : `${provider} is not a priced provider`,
    };
  }
  let entry: { readonly name: string; readonly price: ModelPrice } | undefined;
  try {
    entry = modelPrice(table, name);
  } catch (error) {
    if (!(error instanceof PriceTableError)) throw error;
  }
  if (entry === undefined || entry.price.provider !== provider) {
    return {
      kind: "unpriced",
      reason: `the price table ${table.version} has no ${name}`,
    };
  }
  let dollars = 0;
  let reported = 0;
  for (const u of usage) {
    if (u.input_tokens === null && u.output_tokens === null) continue;
    reported += 1;
    const read = u.cache_read_tokens ?? 0;
    const write = u.cache_write_tokens ?? 0;
    const input = u.input_tokens ?? 0;
    dollars += priceTokens(entry.price, {
      input: provider === "anthropic" ? input + read + write : input,
      read,
      write5m: provider === "anthropic" ? write : 0,
      write1h: 0,
      output: u.output_tokens ?? 0,
    }).dollars;
  }
  return {
    kind: "priced",
    dollars,
    priced_as: entry.name,
    prices: table.version,
    calls_reported: reported,
    calls: usage.length,
  };
}
