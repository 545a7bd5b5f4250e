/**
 * Anthropic's prompt cache, simulated by its documented rules:
 *
 * - the prefix runs tools → system → messages, block by block;
 * - a request carries at most 4 breakpoints (`cache_control`); each writes a
 *   cache entry for the prefix up to its block, if that prefix holds at least
 *   the model's minimum cacheable tokens;
 * - a breakpoint reads the longest entry found at its own block or up to 20
 *   blocks before it (the lookback); entries exist only where an earlier
 *   request put a breakpoint;
 * - an entry lives 5 minutes (or 1 hour) from its last use;
 * - read tokens cost 0.1×, 5m writes 1.25× and 1h writes 2× the input price.
 *
 * @module
 */

/** One block of a prompt in prefix order. */
export interface CacheBlock {
  /**
   * Identity of the prefix up to and including this block: equal keys mean
   * byte-identical prefixes (see {@linkcode prefixKeys}).
   */
  readonly key: string;
  /** Tokens of this block. */
  readonly tokens: number;
  /** A breakpoint on this block and its TTL. */
  readonly breakpoint?: "5m" | "1h";
}

/** One request to simulate. */
export interface CachePrompt {
  /** Milliseconds since the run started. */
  readonly atMs: number;
  /** Blocks in prefix order. */
  readonly blocks: readonly CacheBlock[];
}

/** What a request paid for. */
export interface CacheOutcome {
  /** All input tokens. */
  readonly inputTokens: number;
  /** Tokens read from the cache. */
  readonly cacheReadTokens: number;
  /** Tokens written with a 5-minute TTL. */
  readonly cacheWrite5mTokens: number;
  /** Tokens written with a 1-hour TTL. */
  readonly cacheWrite1hTokens: number;
  /** Input tokens neither read nor written. */
  readonly uncachedTokens: number;
}

/** Blocks a breakpoint looks back for an earlier entry. */
export const ANTHROPIC_LOOKBACK_BLOCKS = 20;
/** Breakpoints one request may carry. */
export const ANTHROPIC_MAX_BREAKPOINTS = 4;

const TTL_MS = { "5m": 300_000, "1h": 3_600_000 } as const;

/**
 * Simulates Anthropic's cache over the requests of one run, in order.
 *
 * @param prompts The requests, with their times.
 * @param minCacheTokens The model's minimum cacheable prefix.
 * @returns One outcome per request.
 * @throws {RangeError} When a request carries more than 4 breakpoints.
 *
 * @example
 * ```ts
 * import { simulateAnthropicCache } from "./anthropic_cache.ts";
 * import assert from "node:assert/strict";
 * const blocks = [
 *   { key: "a", tokens: 2000, breakpoint: "5m" as const },
 *   { key: "ab", tokens: 100 },
 * ];
 * const [first, second] = simulateAnthropicCache(
 *   [{ atMs: 0, blocks }, { atMs: 1000, blocks }],
 *   1024,
 * );
 * assert.equal(first?.cacheWrite5mTokens, 2000);
 * assert.equal(second?.cacheReadTokens, 2000);
 * assert.equal(second?.uncachedTokens, 100);
 * ```
 */
export function simulateAnthropicCache(
  prompts: readonly CachePrompt[],
  minCacheTokens: number,
): CacheOutcome[] {
  const entries = new Map<string, { expires: number; ttlMs: number }>();
  const outcomes: CacheOutcome[] = [];
  for (const prompt of prompts) {
    const { blocks, atMs } = prompt;
    const cumulative: number[] = [];
    let total = 0;
    for (const block of blocks) {
      total += block.tokens;
      cumulative.push(total);
    }
    const breakpoints = blocks.flatMap((b, i) =>
      b.breakpoint === undefined ? [] : [i]
    );
    if (breakpoints.length > ANTHROPIC_MAX_BREAKPOINTS) {
      throw new RangeError(
        `Cannot simulate a request with ${breakpoints.length} cache breakpoints: Anthropic allows at most ${ANTHROPIC_MAX_BREAKPOINTS}`,
      );
    }
    const live = (key: string | undefined) => {
      const entry = key === undefined ? undefined : entries.get(key);
      return entry !== undefined && entry.expires >= atMs ? entry : undefined;
    };
    let hit = -1;
    for (const b of breakpoints) {
      for (let j = b; j >= 0 && j >= b - ANTHROPIC_LOOKBACK_BLOCKS; j--) {
        if (live(blocks[j]?.key) !== undefined) {
          hit = Math.max(hit, j);
          break;
        }
      }
    }
    const read = hit >= 0 ? cumulative[hit] ?? 0 : 0;
    if (hit >= 0) {
      const entry = live(blocks[hit]?.key);
      if (entry !== undefined) entry.expires = atMs + entry.ttlMs;
    }
    let covered = read;
    let write5m = 0;
    let write1h = 0;
    for (const b of breakpoints) {
      const upTo = cumulative[b] ?? 0;
      const block = blocks[b]!;
      const ttl = block.breakpoint!;
      if (b <= hit) {
        const entry = live(block.key);
        if (entry !== undefined) entry.expires = atMs + entry.ttlMs;
        continue;
      }
      if (upTo < minCacheTokens) continue;
      if (ttl === "1h") write1h += upTo - covered;
      else write5m += upTo - covered;
      covered = upTo;
      entries.set(block.key, {
        expires: atMs + TTL_MS[ttl],
        ttlMs: TTL_MS[ttl],
      });
    }
    outcomes.push({
      inputTokens: total,
      cacheReadTokens: read,
      cacheWrite5mTokens: write5m,
      cacheWrite1hTokens: write1h,
      uncachedTokens: total - read - write5m - write1h,
    });
  }
  return outcomes;
}

/**
 * Chains block identities into prefix keys: the key of block i identifies
 * the texts of blocks 0…i (a 64-bit FNV-1a over the previous key and the
 * block's text; collisions are negligible at these sizes).
 *
 * @param texts Each block's canonical text, in prefix order.
 * @returns One key per block.
 *
 * @example
 * ```ts
 * import { prefixKeys } from "./anthropic_cache.ts";
 * import assert from "node:assert/strict";
 * const [a1, b1] = prefixKeys(["x", "y"]);
 * const [a2, b2] = prefixKeys(["x", "z"]);
 * assert.equal(a1, a2);
 * assert.notEqual(b1, b2);
 * ```
 */
export function prefixKeys(texts: readonly string[]): string[] {
  const keys: string[] = [];
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (const text of texts) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
      h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
    }
    // Separate blocks so ["ab", "c"] and ["a", "bc"] differ.
    h1 = Math.imul(h1 ^ 0x1f, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ 0x1f, 0x5bd1e995) >>> 0;
    keys.push(`${h1.toString(16)}${h2.toString(16)}:${keys.length}`);
  }
  return keys;
}
