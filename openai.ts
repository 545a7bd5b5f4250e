/**
 * Loom inside an OpenAI Agents SDK loop (`@openai/agents` 0.20, Responses
 * API): large function-tool results go into the result store and the model
 * sees a descriptor; the model reads and searches them with retrieval
 * function tools; `loomInputFilter` retires old tool outputs in batches as
 * the run's `callModelInputFilter`; and `promptCacheKey` names the prompt
 * cache by the digest of the stable prefix (docs/adapters.md).
 *
 * The SDK takes these values as they are; the signatures use small local
 * types ({@linkcode AgentsTool}, {@linkcode AgentsFunctionTool},
 * {@linkcode AgentsInputFilter}) that the SDK's values satisfy, so this
 * module's types never name the SDK's.
 *
 * @example Wire it into an agent run (type-checked; not run here)
 * ```ts
 * import { loomInputFilter, loomTools, promptCacheKey, retrievalTools } from "@loom/loom/openai";
 * import { ResultStore } from "@loom/loom/reference";
 * import { Agent, run, tool } from "@openai/agents";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 * const rows = tool({ name: "rows", description: "All rows", parameters: z.object({}), execute: () => "..." });
 *
 * const store = new ResultStore();
 * const instructions = "Answer from the rows.";
 * const tools = [...loomTools([rows], { store }), ...retrievalTools(store)];
 * const modelSettings = { providerData: { prompt_cache_key: promptCacheKey(instructions, tools) } };
 * const agent = new Agent({ name: "rows", instructions, tools, modelSettings });
 * const ask = (input: string) => run(agent, input, { callModelInputFilter: loomInputFilter({ store }) });
 * assert.equal(typeof ask, "function");
 * assert.match(modelSettings.providerData.prompt_cache_key, /^loom-[0-9a-f]{32}$/);
 * ```
 * @module
 */
export {
  type AdapterOptions,
  type AgentsFunctionTool,
  type AgentsInputFilter,
  type AgentsTool,
  loomInputFilter,
  loomTools,
  promptCacheKey,
  retrievalTools,
} from "./lib/adapters/openai.ts";
export {
  type SessionStore,
  sessionStore,
} from "./lib/adapters/session_result_store.ts";
