/**
 * Test doubles, for **embedders testing their own code around Loom**: a
 * model provider that plays replies given inline, and a disposable
 * temporary workspace.
 *
 * @example Drive a slice from a script
 * ```ts
 * import { ScriptedProvider, tempWorkspace } from "@loom/loom/testing";
 * import { runSlice } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * await using workspace = await tempWorkspace({ "notes.txt": "todo\n" });
 * const outcome = await runSlice({
 *   intent: "Nothing to change",
 *   workspace: workspace.path,
 *   maxSteps: 2,
 *   provider: new ScriptedProvider([
 *     { arguments: { action: "slice.complete" } },
 *     { arguments: { summary: "Nothing to change" } },
 *   ]),
 * });
 * assert.equal(outcome.stop, "completed");
 * ```
 * @module
 */
export { ScriptedProvider } from "./lib/testing/scripted_provider.ts";
export { tempWorkspace } from "./lib/testing/temp_workspace.ts";
