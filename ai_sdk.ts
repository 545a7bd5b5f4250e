/**
 * Loom inside an AI SDK loop (`ai` 7): large tool results go into the
 * result store and the model sees a descriptor; the model reads and
 * searches them with `read_result`, `find_in_result` and `list_results`;
 * a language-model middleware retires old tool results in batches and
 * places the cache breakpoints on the stable prefix (docs/adapters.md); and
 * {@linkcode codeTool} lets the model write code that calls the tools in a
 * confined sandbox (docs/code.md).
 *
 * The SDK's own tools, models and `wrapLanguageModel` take these values as
 * they are; the signatures use small local types ({@linkcode AiSdkTool},
 * {@linkcode RetrievalTool}, {@linkcode AiSdkMiddleware}) that the SDK's
 * values satisfy, so this module's types never name the SDK's.
 *
 * @example Wire it into `generateText` (type-checked; not run here)
 * ```ts
 * import { loomMiddleware, loomTools, retrievalTools } from "@loom/loom/ai-sdk";
 * import { ResultStore } from "@loom/loom/reference";
 * import { createAnthropic } from "@ai-sdk/anthropic";
 * import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from "ai";
 * import assert from "node:assert/strict";
 * const rows = tool({ inputSchema: jsonSchema<{ q?: string }>({ type: "object" }), execute: () => "..." });
 *
 * const store = new ResultStore();
 * const ask = (prompt: string) => generateText({
 *   model: wrapLanguageModel({ model: createAnthropic()("claude-sonnet-4-5"), middleware: loomMiddleware({ store }) }),
 *   tools: { ...loomTools({ rows }, { store }), ...retrievalTools(store) },
 *   stopWhen: stepCountIs(20),
 *   prompt,
 * });
 * assert.equal(typeof ask, "function");
 * assert.deepEqual(Object.keys(retrievalTools(store)), ["read_result", "find_in_result", "list_results"]);
 * ```
 * @module
 */
export {
  type AdapterOptions,
  type AiSdkMiddleware,
  type AiSdkTool,
  type CodeAiTool,
  codeTool,
  type CodeToolOptions,
  loomMiddleware,
  loomTools,
  type RetrievalTool,
  retrievalTools,
  type RetrievalToolSet,
} from "./lib/adapters/ai_sdk.ts";
export { CodeError, type CodeErrorDetails } from "./lib/code/code_error.ts";
export {
  type SessionStore,
  sessionStore,
} from "./lib/adapters/session_result_store.ts";
