/**
 * Cache reads, cache writes, uncached input and dollars per request of a
 * finished run, from its context report alone: the provider's recorded
 * counters when the run has them, otherwise the offline cache simulator
 * replayed over the report's bytes (version 2 lines carry the cache
 * breakpoints and the body's size in cache order), tokens estimated at 4
 * bytes a token. Which of the two a figure is, the result says.
 *
 * @module
 */
import type { ContextReportRequest } from "../briefing/context_report.ts";
import {
  type CacheBlock,
  type CachePrompt,
  simulateAnthropicCache,
} from "./anthropic_cache.ts";
import { OPENAI_CACHE_STEP, OPENAI_MIN_CACHE_TOKENS } from "./openai_cache.ts";
import {
  DEFAULT_PRICES,
  type ModelPrice,
  modelPrice,
  type PriceTable,
  PriceTableError,
} from "./prices.ts";
import { priceTokens } from "./usage_cost.ts";

/** Bytes a token, for estimates from bytes (the usual rule of thumb). */
export const BYTES_PER_TOKEN = 4;

/** The model a run is priced as when it names no priced one (a recording). */
export const ASSUMED_MODEL = "anthropic:claude-sonnet-4-5";

/** Per-request cache and dollar figures of a run, in tokens. */
export interface ReportCosts {
  /** `recorded`: the provider's counters; `simulated`: the offline simulator. */
  readonly source: "recorded" | "simulated";
  /** How the figures were made, in words (shown beside them). */
  readonly basis: string;
  /** The model priced (`anthropic:…`/`openai:…`). */
  readonly model: string;
  /** Whether `model` was assumed because the run named no priced model. */
  readonly assumed: boolean;
  /** The price table entry and version, or why there are no dollars. */
  readonly prices: string;
  /** Input tokens read from the cache, per request. */
  readonly read: readonly number[];
  /** Input tokens written to the cache, per request. */
  readonly write: readonly number[];
  /** Input tokens neither read nor written, per request. */
  readonly uncached: readonly number[];
  /** Dollars per request (input and output); zeros when unpriced. */
  readonly dollars: readonly number[];
  /** Share of all input tokens read from the cache. */
  readonly hit_ratio: number;
  /** Dollars in all. */
  readonly total_dollars: number;
}

/** Options of {@linkcode reportCosts}. */
export interface ReportCostsOptions {
  /** Prices (default {@linkcode DEFAULT_PRICES}). */
  readonly prices?: PriceTable;
}

/**
 * The cache and dollar figures of each request of a run.
 *
 * @param model The report's model (`anthropic:MODEL`, `openai:MODEL`,
 *   `recorded` or `null`; the last two are priced as {@linkcode ASSUMED_MODEL}).
 * @param lines The report's request lines.
 * @param options Prices.
 * @returns The figures.
 *
 * @example
 * ```ts
 * import { reportCosts } from "./report_costs.ts";
 * import assert from "node:assert/strict";
 * const line = (stable: number) => ({
 *   phase: "selection" as const, request_bytes: 20_000, prefix_stable_bytes: stable,
 *   first_divergence: null, elapsed_ms: 1000, final_usage: false,
 *   input_tokens: null, cache_read_tokens: null, cache_write_tokens: null, output_tokens: null,
 *   cache_order_bytes: 20_000, cache_breakpoints: [16_000],
 * });
 * const costs = reportCosts("recorded", [line(0), line(18_000)]);
 * assert.equal(costs.source, "simulated");
 * assert.equal(costs.write[0], 4000);
 * assert.equal(costs.read[1], 4000);
 * ```
 */
export function reportCosts(
  model: string | null,
  lines: readonly ContextReportRequest[],
  options: ReportCostsOptions = {},
): ReportCosts {
  const table = options.prices ?? DEFAULT_PRICES;
  const named = pricedModel(model, table);
  const spec = named ?? ASSUMED_MODEL;
  const provider = spec.startsWith("openai:") ? "openai" : "anthropic";
  const priced = pricedModel(spec, table) === undefined
    ? undefined
    : modelPrice(table, spec.slice(spec.indexOf(":") + 1));
  const recorded = lines.some((l) =>
    l.input_tokens !== null || l.cache_read_tokens !== null
  );
  let figures: { read: number; write: number; uncached: number }[];
  let basis: string;
  if (recorded) {
    figures = lines.map((l) => {
      const read = l.cache_read_tokens ?? 0;
      const write = l.cache_write_tokens ?? 0;
      const input = l.input_tokens ?? 0;
      return provider === "anthropic"
        ? { read, write, uncached: input }
        : { read, write: 0, uncached: Math.max(0, input - read) };
    });
    basis = "as the provider recorded them";
  } else if (provider === "openai") {
    figures = lines.map(openAIFigures);
    basis =
      `simulated with OpenAI's automatic prefix cache over the report's bytes, ${BYTES_PER_TOKEN} bytes a token`;
  } else {
    figures = anthropicFigures(lines, priced?.price.minCacheTokens ?? 1024);
    basis =
      `simulated with Anthropic's cache rules over the report's bytes and breakpoints, ${BYTES_PER_TOKEN} bytes a token`;
  }
  const dollars = figures.map((f, i) =>
    priced === undefined ? 0 : priceTokens(priced.price as ModelPrice, {
      input: f.read + f.write + f.uncached,
      read: f.read,
      write5m: f.write,
      write1h: 0,
      output: recorded ? lines[i]?.output_tokens ?? 0 : 0,
    }).dollars
  );
  const sum = (xs: readonly number[]) => xs.reduce((n, x) => n + x, 0);
  const read = figures.map((f) => f.read);
  const input = sum(figures.map((f) => f.read + f.write + f.uncached));
  return {
    source: recorded ? "recorded" : "simulated",
    basis,
    model: spec,
    assumed: named === undefined,
    prices: priced === undefined
      ? `not priced: the price table ${table.version} has no ${spec}`
      : `${priced.name} at ${table.version}${
        recorded ? "" : "; input only (output tokens unknown)"
      }`,
    read,
    write: figures.map((f) => f.write),
    uncached: figures.map((f) => f.uncached),
    dollars,
    hit_ratio: input === 0 ? 0 : sum(read) / input,
    total_dollars: sum(dollars),
  };
}

/** The spec when it names a model of the table, else `undefined`. */
function pricedModel(
  model: string | null,
  table: PriceTable,
): string | undefined {
  const match = /^(anthropic|openai):(.+)$/.exec(model ?? "");
  if (match === null) return undefined;
  try {
    const { price } = modelPrice(table, match[2]!);
    return price.provider === match[1] ? model! : undefined;
  } catch (error) {
    if (error instanceof PriceTableError) return undefined;
    throw error;
  }
}

function tokens(bytes: number): number {
  return Math.round(bytes / BYTES_PER_TOKEN);
}

/** OpenAI: the shared prefix, from 1,024 tokens in steps of 128. */
function openAIFigures(line: ContextReportRequest) {
  const total = tokens(line.cache_order_bytes ?? line.request_bytes);
  const shared = tokens(line.prefix_stable_bytes);
  const read = shared < OPENAI_MIN_CACHE_TOKENS ? 0 : OPENAI_MIN_CACHE_TOKENS +
    Math.floor((shared - OPENAI_MIN_CACHE_TOKENS) / OPENAI_CACHE_STEP) *
      OPENAI_CACHE_STEP;
  return { read, write: 0, uncached: Math.max(0, total - read) };
}

/**
 * Anthropic: the simulator of lib/cost replayed over blocks cut from the
 * report's offsets. A request's prefix of `o` bytes is the prefix of the
 * earliest request it has been byte-identical with since (the chain of
 * `prefix_stable_bytes`), so blocks ending at equal keys are equal bytes;
 * cuts are the request's breakpoints, the offsets earlier requests wrote
 * entries at within its shared prefix, and its end.
 */
function anthropicFigures(
  lines: readonly ContextReportRequest[],
  minCacheTokens: number,
) {
  // Prefix lengths up to `upTo` began with request `origin`.
  let origins: { upTo: number; origin: number }[] = [];
  const written: number[][] = [];
  const prompts: CachePrompt[] = [];
  let atMs = 0;
  for (const [i, line] of lines.entries()) {
    const total = line.cache_order_bytes ?? line.request_bytes;
    const stable = i === 0 ? 0 : line.prefix_stable_bytes;
    const kept: { upTo: number; origin: number }[] = [];
    for (const o of origins) {
      if (o.upTo <= stable) kept.push(o);
      else {
        if (stable > (kept.at(-1)?.upTo ?? 0)) {
          kept.push({ upTo: stable, origin: o.origin });
        }
        break;
      }
    }
    origins = [...kept, { upTo: Infinity, origin: i }];
    const originOf = (offset: number) =>
      origins.find((o) => offset <= o.upTo)?.origin ?? i;
    const marks = new Set(
      (line.cache_breakpoints ?? []).filter((b) => b > 0 && b <= total),
    );
    const cuts = new Set<number>([...marks, total]);
    for (const offsets of written.slice(-8)) {
      for (const o of offsets) if (o > 0 && o <= stable) cuts.add(o);
    }
    const sorted = [...cuts].sort((a, b) => a - b);
    const blocks: CacheBlock[] = sorted.map((cut, j) => ({
      key: `${originOf(cut)}:${cut}`,
      tokens: (cut - (sorted[j - 1] ?? 0)) / BYTES_PER_TOKEN,
      ...(marks.has(cut) ? { breakpoint: "5m" as const } : {}),
    }));
    prompts.push({ atMs, blocks });
    written.push([...marks]);
    atMs += line.elapsed_ms;
  }
  return simulateAnthropicCache(prompts, minCacheTokens).map((o) => ({
    read: Math.round(o.cacheReadTokens),
    write: Math.round(o.cacheWrite5mTokens + o.cacheWrite1hTokens),
    uncached: Math.round(o.uncachedTokens),
  }));
}
