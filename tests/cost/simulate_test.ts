/** priceRun on Anthropic bodies that carry tool calls and their results. */
import assert from "node:assert/strict";
import { priceRun } from "../../lib/cost/simulate.ts";
import { DEFAULT_PRICES } from "../../lib/cost/prices.ts";
import { claudeCounter } from "../../lib/cost/tokens.ts";

const result = Array.from({ length: 300 }, (_, i) => `row ${i}: value ${i * 7}`)
  .join("\n");

function body(system: unknown): Record<string, unknown> {
  return {
    model: "claude-sonnet-4-5",
    max_tokens: 64,
    system,
    messages: [
      { role: "user", content: "Go" },
      {
        role: "assistant",
        content: [{
          type: "tool_use",
          id: "t1",
          name: "rows",
          input: { from: 0 },
        }],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: result }],
      },
    ],
  };
}

Deno.test("priceRun counts a tool call's name and input, a tool result's content and a string system prompt", async () => {
  const counter = await claudeCounter();
  const price = async (system: unknown) =>
    (await priceRun([{ body: body(system), atMs: 0, reply: "" }], {
      wire: "anthropic",
      model: "claude-sonnet-4-5",
      prices: DEFAULT_PRICES,
    })).total.input_tokens;
  const framing = 3 * 4;
  const expected = counter.count("Go") + counter.count('rows{"from":0}') +
    counter.count(result) + framing;
  assert.equal(await price([]), expected);
  assert.equal(
    await price("Be brief"),
    expected + counter.count("Be brief"),
  );
  assert.equal(
    await price([{ type: "text", text: "Be brief" }]),
    expected + counter.count("Be brief"),
  );
});
