/**
 * Loom inside an Anthropic SDK loop (`@anthropic-ai/sdk`, its tool runner or
 * your own): large tool results go into the result store and the model sees
 * a descriptor; the model reads and searches them with runnable retrieval
 * tools; and `prepare` shapes each `messages.create` body — batch retirement
 * of old tool results, at most 4 cache breakpoints on the stable prefix. The
 * tool runner has no per-request hook: `loomMiddleware` runs `prepare` in
 * the client's `middleware`; create the runner with `thread: false`
 * (docs/adapters.md).
 *
 * The runner takes these values as they are; the signatures use small local
 * types ({@linkcode AnthropicTool}, {@linkcode RunnableTool}) that the SDK's
 * values satisfy, so this module's types never name the SDK's.
 *
 * @example Wire it into the tool runner (type-checked; not run here)
 * ```ts
 * import { loomMiddleware, loomTools, retrievalTools } from "@loom/loom/anthropic";
 * import { ResultStore } from "@loom/loom/reference";
 * import Anthropic from "@anthropic-ai/sdk";
 * import { betaZodTool } from "@anthropic-ai/sdk/helpers/beta/zod";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 * const rows = betaZodTool({ name: "rows", description: "All rows", inputSchema: z.object({}), run: () => "..." });
 *
 * const store = new ResultStore();
 * const client = new Anthropic({ middleware: [loomMiddleware({ store })] });
 * const ask = (content: string) => client.beta.messages.toolRunner({
 *   model: "claude-sonnet-4-5", max_tokens: 1024, thread: false, messages: [{ role: "user", content }],
 *   tools: [...loomTools([rows], { store }), ...retrievalTools(store)],
 * });
 * assert.equal(typeof ask, "function");
 * ```
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
  type AnthropicClientMiddleware,
  type AnthropicTool,
  loomMiddleware,
  loomTools,
  prepare,
  retrievalTools,
  type RunnableTool,
} from "./lib/adapters/anthropic.ts";
export {
  type SessionStore,
  sessionStore,
} from "./lib/adapters/session_result_store.ts";
