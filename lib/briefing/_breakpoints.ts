/**
 * Anthropic cache breakpoints, planned where the byte prefix of consecutive
 * requests really repeats (at most 4, mindful of the 20-block lookback):
 *
 * 1. the intent block: tools, system and intent never change during a run;
 * 2. the last retained block of the transcript or event tail: everything up
 *    to it repeats in the next request until a roll or a checkpoint;
 * 3. when the tail grew by more than 20 blocks since the previous request
 *    (and nothing rolled), the previous request's last breakpoint again, so
 *    the next lookup starts from an entry that exists.
 *
 * Volatile blocks (stage, candidates, lookup answers, notes) come after the
 * last breakpoint.
 *
 * @module
 */
import type { EphemeralCacheControl as CacheControl } from "../context/message.ts";
import {
  turnBlocks,
  type TurnMessage,
  type TurnRequest,
  type TurnTextBlock,
} from "./turn_request.ts";

/** Blocks before a breakpoint that Anthropic checks for an earlier cache entry. */
export const LOOKBACK_BLOCKS = 20;

/** Where the previous request's last breakpoint was. */
export interface PlacedBreakpoint {
  /** Index among all system and message blocks, in prefix order. */
  readonly index: number;
  /** Its block text. */
  readonly text: string;
}

/** What to place. */
export interface BreakpointPlan {
  /** Text of the block ending the run-long stable part (the intent). */
  readonly stable: string;
  /** Text of the last block that the next request repeats. */
  readonly last: string;
  /** The previous request's last breakpoint, when nothing rolled since. */
  readonly previous: PlacedBreakpoint | undefined;
  /** TTL of every breakpoint; omitted means the provider's 5m. */
  readonly ttl: "5m" | "1h" | undefined;
}

/**
 * Places the breakpoints of `plan` on a request without any.
 *
 * @returns The request and its last breakpoint.
 */
export function placeBreakpoints(
  request: TurnRequest,
  plan: BreakpointPlan,
): { request: TurnRequest; last: PlacedBreakpoint | undefined } {
  const blocks = turnBlocks(request);
  const stable = blocks.findIndex((b) => b.text === plan.stable);
  let last = -1;
  for (let i = blocks.length - 1; i > stable; i--) {
    if (blocks[i]?.text === plan.last) {
      last = i;
      break;
    }
  }
  const marks = new Set<number>();
  if (stable >= 0) marks.add(stable);
  if (last >= 0) {
    const previous = plan.previous;
    if (
      previous !== undefined && last - previous.index > LOOKBACK_BLOCKS &&
      previous.index > stable && blocks[previous.index]?.text === previous.text
    ) {
      marks.add(previous.index);
    }
    marks.add(last);
  }
  const cc: CacheControl = plan.ttl === undefined
    ? { type: "ephemeral" }
    : { type: "ephemeral", ttl: plan.ttl };
  let index = 0;
  const mark = (block: TurnTextBlock): TurnTextBlock => {
    const { cache_control: _drop, ...plain } = block;
    return marks.has(index++) ? { ...plain, cache_control: cc } : plain;
  };
  const system = request.system.map(mark);
  const messages: TurnMessage[] = request.messages.map((m) => ({
    role: m.role,
    content: m.content.map(mark),
  }));
  const end = last >= 0 ? last : stable;
  return {
    request: { ...request, system, messages },
    last: end >= 0 ? { index: end, text: blocks[end]?.text ?? "" } : undefined,
  };
}
