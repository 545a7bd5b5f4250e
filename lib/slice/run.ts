/**
 * The governed slice: a small coding loop over a local workspace. Each step
 * is selection (`select_action`) → argument generation (`action_arguments`)
 * → expansion of edit segments → commission → execution in the
 * permission-scoped executor → typed report → briefing. Refusals are events
 * the model is told about; they count as steps and the loop goes on.
 *
 * @module
 */
import type { ContextPolicy } from "../briefing/briefing.ts";
import {
  type RunOptions,
  type SliceRequest,
  validateRequest,
} from "./request.ts";
import { SliceRun } from "./_slice_run.ts";
import type { SliceOutcome } from "./outcome.ts";

/**
 * Runs a slice under the default `legacy` context policy (or the given
 * options).
 *
 * @param request The intent, workspace, test command, step budget and model.
 * @param options Context policy, report path, progress callback and more.
 * @returns How the slice ended.
 * @throws {SliceRequestError} When the request is malformed or the workspace
 *   is not a directory.
 *
 * @example
 * ```ts
 * import { runSlice } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * const model = {
 *   spec: "scripted:complete",
 *   call: ({ phase }: { phase: string }) =>
 *     Promise.resolve({
 *       arguments: phase === "selection"
 *         ? { action: "slice.complete" }
 *         : { summary: "Nothing to do" },
 *       usage: { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null },
 *       final_usage: true,
 *     }),
 * };
 * const outcome = await runSlice({ intent: "Say hello", workspace, maxSteps: 3, provider: model });
 * assert.equal(outcome.stop, "completed");
 * assert.equal(outcome.model_calls, 2);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export async function runSlice(
  request: SliceRequest,
  options: RunOptions = {},
): Promise<SliceOutcome> {
  validateRequest(request, options);
  const policy: ContextPolicy = options.contextPolicy ?? "legacy";
  const run = new SliceRun(request, options, policy);
  return await run.execute();
}
