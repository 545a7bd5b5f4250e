/**
 * Loom inside an OpenAI Agents SDK loop (`@openai/agents` 0.20, Responses
 * API): large function-tool results go into the result store and the model
 * sees a descriptor; the model reads and searches them with retrieval
 * function tools; `loomInputFilter` retires old tool outputs in batches as
 * the run's `callModelInputFilter`; and `promptCacheKey` names the prompt
 * cache by the digest of the stable prefix (docs/adapters.md).
 *
 * @example Build the run's filter and cache key
 * ```ts
 * import { loomInputFilter, promptCacheKey, retrievalTools } from "@loom/loom/openai";
 * import { ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const tools = retrievalTools(store);
 * const callModelInputFilter = loomInputFilter({ store, budgetBytes: 48 * 1024 });
 * assert.equal(typeof callModelInputFilter, "function");
 * assert.match(promptCacheKey("Be brief", tools), /^loom-/);
 * ```
 * @module
 */
export {
  type AdapterOptions,
  loomInputFilter,
  loomTools,
  promptCacheKey,
  retrievalTools,
} from "./lib/adapters/openai.ts";
