import assert from "node:assert/strict";
import {
  checkAnthropicRequest,
  checkOpenAIRequest,
} from "../../lib/providers/request_rules.ts";
import { providerRequestBody } from "../../lib/providers/request_body.ts";
import { runSlice } from "../../lib/slice/run.ts";
import { stepAnswer, stepTool } from "../../lib/slice/_tools.ts";
import { ScriptedProvider } from "../../lib/testing/scripted_provider.ts";
import { tempWorkspace } from "../../lib/testing/temp_workspace.ts";
import type { ContextReport } from "../../lib/briefing/context_report.ts";
import { tempDir } from "../_kit.ts";

Deno.test("stepTool() has an object root with one required step and no root combinator", () => {
  for (const bounded of [false, true]) {
    const schema = stepTool(bounded).input_schema as Record<string, unknown>;
    assert.equal(schema["type"], "object");
    assert.deepEqual(schema["required"], ["step"]);
    for (const key of ["anyOf", "oneOf", "allOf", "enum", "not"]) {
      assert.equal(key in schema, false, key);
    }
    const tool = stepTool(bounded);
    const request = {
      system: [{ type: "text" as const, text: "Rules" }],
      messages: [{
        role: "user" as const,
        content: [{ type: "text" as const, text: "Hi" }],
      }],
      tool,
      tool_choice: { type: "tool" as const, name: tool.name },
    };
    assert.deepEqual(
      checkAnthropicRequest(
        providerRequestBody("anthropic", request, "claude-sonnet-4-5"),
      ),
      [],
    );
    assert.deepEqual(
      checkOpenAIRequest(providerRequestBody("openai", request, "gpt-5")),
      [],
    );
  }
});

Deno.test("stepAnswer() takes the answer out of step, and older bare answers as they are", () => {
  assert.deepEqual(stepAnswer({ step: { action: "tests.run" } }), {
    value: { action: "tests.run" },
    reparsed: false,
  });
  // A recording made before the wrapper holds the bare answer.
  assert.deepEqual(stepAnswer({ action: "tests.run" }), {
    value: { action: "tests.run" },
    reparsed: false,
  });
  assert.deepEqual(stepAnswer({ $list_results: 0 }), {
    value: { $list_results: 0 },
    reparsed: false,
  });
});

Deno.test("stepAnswer() reparses a step that is a JSON string of an object, and nothing else", () => {
  assert.deepEqual(stepAnswer({ step: '{"action": "tests.run"}' }), {
    value: { action: "tests.run" },
    reparsed: true,
  });
  for (const step of ["tests.run", "[1, 2]", '"text"', "null", "{"]) {
    assert.deepEqual(stepAnswer({ step }), { value: step, reparsed: false });
  }
  // Beside another key, step is not the wrapper: the arguments stay as given.
  const args = { step: '{"action": "tests.run"}', other: 1 };
  assert.deepEqual(stepAnswer(args), { value: args, reparsed: false });
});

async function run(
  script: ConstructorParameters<typeof ScriptedProvider>[0],
): Promise<
  { outcome: Awaited<ReturnType<typeof runSlice>>; report: ContextReport }
> {
  await using workspace = await tempWorkspace({ "README.md": "hello\n" });
  await using dir = await tempDir();
  const path = `${dir.path}/report.json`;
  const outcome = await runSlice({
    intent: "Finish",
    workspace: workspace.path,
    maxSteps: 2,
    provider: new ScriptedProvider(script),
  }, { contextReport: path });
  return { outcome, report: JSON.parse(await Deno.readTextFile(path)) };
}

Deno.test("a reply whose step is a JSON string is accepted and counted in the context report", async () => {
  const { outcome, report } = await run([
    { phase: "selection", arguments: { step: '{"action": "slice.complete"}' } },
    { phase: "arguments", arguments: { step: '{"summary": "Done"}' } },
  ]);
  assert.equal(outcome.stop, "completed", outcome.detail);
  assert.equal(outcome.summary, "Done");
  assert.equal(report.arguments_reparsed, 2);
});

Deno.test("a reply whose step is a string that is not a JSON object is still refused", async () => {
  const { outcome, report } = await run([
    { phase: "selection", arguments: { step: "slice.complete" } },
    { phase: "selection", arguments: { step: { action: "slice.complete" } } },
    { phase: "arguments", arguments: { step: { summary: "Done" } } },
  ]);
  assert.equal(outcome.stop, "completed", outcome.detail);
  assert.equal(outcome.refusals, 1);
  assert.equal(report.arguments_reparsed, 0);
});
