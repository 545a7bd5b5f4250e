/**
 * Loom: a context engine for LLM agents.
 *
 * - **Compose**: build prompts from entries in six ordered sections and render
 *   them as text or as Anthropic/OpenAI messages whose stable prefix caches.
 * - **Govern**: keep large tool results out of the prompt behind verified
 *   references, bound the working context, and run governed coding slices.
 *
 * @example
 * ```ts
 * import { VERSION } from "@loom/loom";
 * import assert from "node:assert/strict";
 * assert.match(VERSION, /^\d+\.\d+\.\d+$/);
 * ```
 * @module
 */
export { VERSION } from "./lib/version.ts";
export { type CodedError, isCodedError } from "./lib/errors.ts";
export {
  type CacheControl,
  requestBytes,
  serializeTurnRequest,
  stableStringify,
  type TurnMessage,
  type TurnRequest,
  type TurnTextBlock,
  type TurnTool,
} from "./lib/briefing/turn_request.ts";
