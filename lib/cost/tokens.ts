/**
 * Token counters of the cost simulator: OpenAI's o200k encoding through
 * `gpt-tokenizer` (the tokenizer of the GPT-4o, GPT-4.1 and GPT-5 families),
 * and, for Claude, which has no official offline tokenizer, `ai-tokenizer`'s
 * Claude encoding. Counts are memoized by text: consecutive requests repeat
 * most of their blocks. The encodings are megabytes of tables, so each is
 * imported when its first counter is made (the bundle keeps them external,
 * like the provider SDKs: tools/bundle.ts).
 *
 * @module
 */

/** How the tokens of a figure were counted. */
export interface TokenizerInfo {
  /** `o200k_base (gpt-tokenizer)` or `claude (ai-tokenizer)`. */
  readonly name: string;
  /** Whether the counts approximate the provider's own. */
  readonly estimate: boolean;
  /** Relative error bound of a count, e.g. 0.02 for ±2%; 0 when exact. */
  readonly errorBound: number;
  /** Where the bound comes from. */
  readonly basis: string;
}

/** A memoizing token counter. */
export interface TokenCounter {
  /** What counts. */
  readonly info: TokenizerInfo;
  /** Tokens of a text. */
  count(text: string): number;
  /** Token ids of a text (for token-level prefix matching). */
  encode(text: string): readonly number[];
}

const CLAUDE_INFO: TokenizerInfo = {
  name: "claude (ai-tokenizer 1.0.6)",
  estimate: true,
  errorBound: 0.02,
  basis:
    "ai-tokenizer's published accuracy against the API's counts: 98.48% to 99.70% for claude-sonnet-4.5 (about 500 to 50k tokens); the bound is rounded up to ±2%",
};

const O200K_INFO: TokenizerInfo = {
  name: "o200k_base (gpt-tokenizer 4.0.0)",
  estimate: true,
  errorBound: 0.01,
  basis:
    "the models' own encoding; the chat template's framing tokens (a few per message and the tool rendering) are approximated, about ±1%",
};

function memoized(
  info: TokenizerInfo,
  count: (text: string) => number,
  toIds: (text: string) => readonly number[],
): TokenCounter {
  const counts = new Map<string, number>();
  return {
    info,
    count(text: string): number {
      let n = counts.get(text);
      if (n === undefined) {
        n = count(text);
        if (counts.size > 100_000) counts.clear();
        counts.set(text, n);
      }
      return n;
    },
    encode: toIds,
  };
}

/**
 * A counter for Claude models (an estimate; see its `info`).
 *
 * @returns A memoizing counter, once the encoding is loaded.
 *
 * @example
 * ```ts
 * import { claudeCounter } from "./tokens.ts";
 * import assert from "node:assert/strict";
 * const counter = await claudeCounter();
 * assert.ok(counter.count("Fix the failing test") > 0);
 * assert.equal(counter.info.estimate, true);
 * ```
 */
export async function claudeCounter(): Promise<TokenCounter> {
  const [{ Tokenizer }, claudeEncoding] = await Promise.all([
    import("ai-tokenizer"),
    import("ai-tokenizer/encoding/claude"),
  ]);
  const tokenizer = new Tokenizer(claudeEncoding);
  return memoized(
    CLAUDE_INFO,
    (text) => tokenizer.count(text),
    (text) => tokenizer.encode(text),
  );
}

/**
 * A counter for OpenAI's o200k models.
 *
 * @returns A memoizing counter, once the encoding is loaded.
 *
 * @example
 * ```ts
 * import { o200kCounter } from "./tokens.ts";
 * import assert from "node:assert/strict";
 * const counter = await o200kCounter();
 * assert.equal(counter.encode("hello world").length, counter.count("hello world"));
 * ```
 */
export async function o200kCounter(): Promise<TokenCounter> {
  const { countTokens, encode } = await import(
    "gpt-tokenizer/encoding/o200k_base"
  );
  return memoized(
    O200K_INFO,
    (text) => countTokens(text),
    (text) => encode(text),
  );
}
