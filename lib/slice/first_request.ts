/**
 * The briefing of a slice run, and the first request it builds: what
 * `loom run --dry-run` shows and checks without calling the model or
 * touching the workspace. The run builds its briefing here too, so the
 * dry run's request is the run's own first request.
 *
 * @module
 */
import { Briefing, type ContextPolicy } from "../briefing/briefing.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import { ResultStore } from "../store/result_store.ts";
import { sliceInstructions } from "./_instructions.ts";
import { admissibleActions } from "./_schema.ts";
import { stepTool } from "./_tools.ts";
import type { RunOptions, SliceRequest } from "./request.ts";

/**
 * The briefing of a run: its policy, intent, instructions and limits.
 *
 * @param request The slice request (intent, test command).
 * @param options The run options (briefing limits).
 * @param policy The context policy.
 * @param results The run's result store.
 * @returns A fresh briefing.
 */
export function sliceBriefing(
  request: Pick<SliceRequest, "intent" | "test">,
  options: Pick<RunOptions, "briefingLimits">,
  policy: ContextPolicy,
  results: ResultStore,
): Briefing {
  return new Briefing({
    policy,
    intent: request.intent,
    instructions: sliceInstructions(request.test?.command),
    results,
    ...(options.briefingLimits === undefined
      ? {}
      : { limits: options.briefingLimits }),
  });
}

/**
 * The first request of a new run: step 1's selection, with the run's one
 * tool and the candidates of an unedited workspace.
 *
 * @param request The slice request (intent, test command).
 * @param options Context policy (default `legacy`) and briefing limits.
 * @returns The turn request the run would send first.
 *
 * @example
 * ```ts
 * import { firstTurnRequest } from "./first_request.ts";
 * import assert from "node:assert/strict";
 * const request = firstTurnRequest({ intent: "Fix the bug" });
 * assert.equal(request.tool.name, "loom_step");
 * assert.deepEqual(request.tool_choice, { type: "tool", name: "loom_step" });
 * assert.ok(JSON.stringify(request.messages).includes("Fix the bug"));
 * ```
 */
export function firstTurnRequest(
  request: Pick<SliceRequest, "intent" | "test">,
  options: Pick<RunOptions, "briefingLimits" | "contextPolicy"> = {},
): TurnRequest {
  const policy = options.contextPolicy ?? "legacy";
  const briefing = sliceBriefing(request, options, policy, new ResultStore());
  const testConfigured = request.test !== undefined;
  return briefing.request({
    phase: "selection",
    tool: stepTool(policy === "bounded"),
    candidates: admissibleActions({
      testConfigured,
      validated: !testConfigured,
    }),
    lookupAnswers: [],
    notes: [],
  });
}
