/**
 * Loom inside an Anthropic SDK loop (`@anthropic-ai/sdk`, its tool runner or
 * your own): large tool results go into the result store and the model sees
 * a descriptor; the model reads and searches them with runnable retrieval
 * tools; and `prepare` shapes each `messages.create` body — batch retirement
 * of old tool results, at most 4 cache breakpoints on the stable prefix. The
 * tool runner has no per-request hook: run `prepare` in the client's
 * `middleware` and create the runner with `thread: false` (docs/adapters.md).
 *
 * @example Shape a request body
 * ```ts
 * import { prepare } from "@loom/loom/anthropic";
 * import assert from "node:assert/strict";
 * const body = await prepare({
 *   model: "claude-sonnet-4-5",
 *   max_tokens: 1024,
 *   messages: [{ role: "user", content: "Hi" }],
 * }, { budgetBytes: 48 * 1024 });
 * assert.deepEqual(body.messages, [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] }]);
 * ```
 * @module
 */
export {
  type AdapterOptions,
  loomTools,
  prepare,
  retrievalTools,
  type RunnableTool,
} from "./lib/adapters/anthropic.ts";
