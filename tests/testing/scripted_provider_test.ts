import assert from "node:assert/strict";
import { ScriptedProvider } from "../../testing.ts";
import { ProviderError, runSlice } from "../../slice.ts";
import type { ModelCall } from "../../slice.ts";
import type { StepPhase } from "../../reference.ts";
import { tempWorkspace } from "../../testing.ts";

const call = (phase: StepPhase): ModelCall => ({
  phase,
  tool: phase === "selection" ? "select_action" : "action_arguments",
  request: { system: [], messages: [], tools: [], tool_choice: null },
} as unknown as ModelCall);

Deno.test("ScriptedProvider answers with the scripted arguments and null usage", async () => {
  const provider = new ScriptedProvider([
    { arguments: { action: "tests.run" } },
    { phase: "arguments", arguments: (c: ModelCall) => ({ seen: c.phase }) },
  ]);
  const first = await provider.call(call("selection"));
  assert.deepEqual(first.arguments, { action: "tests.run" });
  assert.deepEqual(first.usage, {
    input_tokens: null,
    output_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
  });
  assert.equal(first.final_usage, true);
  const second = await provider.call(call("arguments"));
  assert.deepEqual(second.arguments, { seen: "arguments" });
  assert.equal(provider.remaining, 0);
  assert.deepEqual(provider.recorded.map((r) => r.tool), [
    "select_action",
    "action_arguments",
  ]);
});

Deno.test("ScriptedProvider fails like a recording past its end or on the wrong phase", async () => {
  const provider = new ScriptedProvider([{
    phase: "arguments",
    arguments: {},
  }]);
  await assert.rejects(
    provider.call(call("selection")),
    (e: unknown) =>
      e instanceof ProviderError && e.code === "recording_mismatch",
  );
  await provider.call(call("arguments"));
  await assert.rejects(
    provider.call(call("selection")),
    (e: unknown) =>
      e instanceof ProviderError && e.code === "recording_exhausted",
  );
});

Deno.test("ScriptedProvider drives a slice that edits, tests and completes", async () => {
  await using workspace = await tempWorkspace({ "a.txt": "old\n" });
  const provider = new ScriptedProvider([
    { phase: "selection", arguments: { action: "repository.edit" } },
    {
      phase: "arguments",
      arguments: { files: [{ path: "a.txt", contents: "new\n" }] },
    },
    { phase: "selection", arguments: { action: "slice.complete" } },
    { phase: "arguments", arguments: { summary: "Edited a.txt" } },
  ]);
  const outcome = await runSlice({
    intent: "Replace old by new",
    workspace: workspace.path,
    maxSteps: 4,
    provider,
  });
  assert.equal(outcome.stop, "completed", outcome.detail);
  assert.equal(await Deno.readTextFile(`${workspace.path}/a.txt`), "new\n");
});
