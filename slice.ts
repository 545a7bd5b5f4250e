/**
 * Run a governed coding slice, for **embedders driving a model over a local
 * workspace**: one run function, its request, options and outcome, the two
 * context policies, the session hooks (made by `@loom/loom/session`), and
 * the model providers (recorded replay, Anthropic, OpenAI-compatible) with
 * the interface a custom provider implements.
 *
 * @example Run a slice with a provider that completes at once
 * ```ts
 * import { runSlice } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * const usage = { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null };
 * const outcome = await runSlice({
 *   intent: "Say hello",
 *   workspace,
 *   maxSteps: 3,
 *   provider: {
 *     spec: "scripted:complete",
 *     call: ({ phase }) =>
 *       Promise.resolve({
 *         arguments: phase === "selection" ? { action: "slice.complete" } : { summary: "Nothing to do" },
 *         usage,
 *         final_usage: true,
 *       }),
 *   },
 * });
 * assert.equal(outcome.stop, "completed");
 * await Deno.remove(workspace, { recursive: true });
 * ```
 * @module
 */
export { runSlice } from "./lib/slice/run.ts";
export {
  type RunOptions,
  type SliceRequest,
  SliceRequestError,
  type SliceTest,
  type StepProgress,
} from "./lib/slice/request.ts";
export {
  type SliceOutcome,
  type SliceTestResult,
} from "./lib/slice/outcome.ts";
export { SliceSessionHooks } from "./lib/slice/run_state.ts";
export { type ContextPolicy } from "./lib/briefing/briefing.ts";
export { type StopReason } from "./lib/briefing/context_report.ts";
export {
  type TurnMessage,
  type TurnRequest,
  type TurnTextBlock,
  type TurnTool,
} from "./lib/briefing/turn_request.ts";
export {
  type ModelCall,
  type ModelProvider,
  type ModelReply,
  type ModelToolName,
  type ModelUsage,
} from "./lib/providers/model_provider.ts";
export { ProviderError } from "./lib/providers/provider_error.ts";
export {
  RecordedProvider,
  type RecordedProviderOptions,
} from "./lib/providers/recorded_provider.ts";
export {
  createProvider,
  type CreateProviderOptions,
} from "./lib/providers/create_provider.ts";
