/** Checks a turn request's cache_control markers against Anthropic's limits. */

import { turnBlocks, type TurnRequest } from "../briefing/turn_request.ts";
import { CompileOptionsError } from "../context/errors.ts";

/** Anthropic accepts at most this many cache breakpoints per request. */
export const MAX_CACHE_BREAKPOINTS = 4;

/**
 * Throws unless the request carries at most 4 markers (prefix order: system,
 * then messages) with every 1h marker before any 5m one.
 * Returns the number of markers.
 */
export function checkCacheMarkers(request: TurnRequest): number {
  const blocks = turnBlocks(request);
  let count = 0;
  let seenShort = false;
  for (const block of blocks) {
    const cc = block.cache_control;
    if (cc === undefined) continue;
    count += 1;
    const ttl = cc.ttl ?? "5m";
    if (ttl === "5m") seenShort = true;
    else if (seenShort) {
      throw new CompileOptionsError(
        "cache_ttl_order",
        `Cannot send a 1h cache breakpoint after a 5m one: Anthropic requires 1h breakpoints first`,
      );
    }
  }
  if (count > MAX_CACHE_BREAKPOINTS) {
    throw new CompileOptionsError(
      "too_many_breakpoints",
      `Cannot send ${count} cache breakpoints: Anthropic allows at most ${MAX_CACHE_BREAKPOINTS} per request`,
    );
  }
  return count;
}
