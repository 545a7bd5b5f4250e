/**
 * OpenAI's automatic prompt caching, simulated by its documented rules: a
 * request whose prompt is at least 1,024 tokens reuses the longest token
 * prefix it shares with a recent prompt, counted in steps of 128 tokens from
 * 1,024 (1,024, 1,152, 1,280, …); cached prompts are evicted after a spell
 * without use (5 to 10 minutes, up to an hour off-peak: 5 minutes here
 * unless told otherwise).
 *
 * @module
 */

/** One request to simulate. */
export interface TokenPrompt {
  /** Milliseconds since the run started. */
  readonly atMs: number;
  /** The prompt's tokens in order (tools, then messages). */
  readonly tokens: readonly number[];
}

/** What a request paid for. */
export interface OpenAICacheOutcome {
  /** All input tokens. */
  readonly inputTokens: number;
  /** Tokens served from the cache (`cached_tokens`). */
  readonly cacheReadTokens: number;
  /** Input tokens not served from the cache. */
  readonly uncachedTokens: number;
}

/** Shortest prompt that caches. */
export const OPENAI_MIN_CACHE_TOKENS = 1024;
/** Cache hits grow in steps of this many tokens. */
export const OPENAI_CACHE_STEP = 128;

/** Options of {@linkcode simulateOpenAICache}. */
export interface OpenAICacheOptions {
  /** Idle time after which a cached prompt is gone (default 5 minutes). */
  readonly retentionMs?: number;
  /** Recent prompts kept for matching (default 16). */
  readonly keep?: number;
}

/**
 * Simulates OpenAI's automatic prefix cache over the requests of one run.
 *
 * @param prompts The requests, with their times.
 * @param options Retention and how many prompts to keep.
 * @returns One outcome per request.
 *
 * @example
 * ```ts
 * import { simulateOpenAICache } from "./openai_cache.ts";
 * import assert from "node:assert/strict";
 * const base = Array.from({ length: 1300 }, (_, i) => i);
 * const [, second] = simulateOpenAICache([
 *   { atMs: 0, tokens: base },
 *   { atMs: 1000, tokens: [...base.slice(0, 1200), 7, 7, 7] },
 * ]);
 * // 1,200 shared tokens cache as 1,024 + 128 = 1,152.
 * assert.equal(second?.cacheReadTokens, 1152);
 * ```
 */
export function simulateOpenAICache(
  prompts: readonly TokenPrompt[],
  options: OpenAICacheOptions = {},
): OpenAICacheOutcome[] {
  const retention = options.retentionMs ?? 300_000;
  const keep = options.keep ?? 16;
  let cache: { tokens: readonly number[]; lastUsed: number }[] = [];
  const outcomes: OpenAICacheOutcome[] = [];
  for (const prompt of prompts) {
    const { tokens, atMs } = prompt;
    cache = cache.filter((c) => atMs - c.lastUsed <= retention);
    let best = 0;
    let bestEntry: (typeof cache)[number] | undefined;
    if (tokens.length >= OPENAI_MIN_CACHE_TOKENS) {
      for (const entry of cache) {
        const shared = sharedPrefix(entry.tokens, tokens);
        if (shared > best) {
          best = shared;
          bestEntry = entry;
        }
      }
    }
    const cached = best < OPENAI_MIN_CACHE_TOKENS
      ? 0
      : OPENAI_MIN_CACHE_TOKENS +
        Math.floor((best - OPENAI_MIN_CACHE_TOKENS) / OPENAI_CACHE_STEP) *
          OPENAI_CACHE_STEP;
    if (bestEntry !== undefined && cached > 0) bestEntry.lastUsed = atMs;
    outcomes.push({
      inputTokens: tokens.length,
      cacheReadTokens: cached,
      uncachedTokens: tokens.length - cached,
    });
    if (tokens.length >= OPENAI_MIN_CACHE_TOKENS) {
      cache.push({ tokens, lastUsed: atMs });
      if (cache.length > keep) cache.shift();
    }
  }
  return outcomes;
}

function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i += 1;
  return i;
}
