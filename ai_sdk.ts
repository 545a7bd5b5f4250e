/**
 * Loom inside an AI SDK loop (`ai` 7): large tool results go into the
 * result store and the model sees a descriptor; the model reads and
 * searches them with `read_result`, `find_in_result` and `list_results`;
 * and a language-model middleware retires old tool results in batches and
 * places the cache breakpoints on the stable prefix (docs/adapters.md).
 *
 * @example Wire it into `generateText`
 * ```ts
 * import { loomMiddleware, loomTools, retrievalTools } from "@loom/loom/ai-sdk";
 * import { ResultStore } from "@loom/loom/reference";
 * import { jsonSchema, tool } from "ai";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const tools = {
 *   ...loomTools({ rows: tool({ inputSchema: jsonSchema({ type: "object" }), execute: () => "..." }) }, { store }),
 *   ...retrievalTools(store),
 * };
 * const middleware = loomMiddleware({ store, budgetBytes: 48 * 1024 });
 * // generateText({ model: wrapLanguageModel({ model, middleware }), tools, … })
 * assert.deepEqual(Object.keys(tools), ["rows", "read_result", "find_in_result", "list_results"]);
 * assert.equal(middleware.specificationVersion, "v4");
 * ```
 * @module
 */
export {
  type AdapterOptions,
  loomMiddleware,
  loomTools,
  retrievalTools,
  type RetrievalToolSet,
} from "./lib/adapters/ai_sdk.ts";
