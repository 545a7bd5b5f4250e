// A request's bytes by part (context report version 2): the parts partition
// the serialized request, and descriptors, previews and lookup answers are
// counted where they sit, with their JSON escaping.
import assert from "node:assert/strict";
import { Briefing } from "../../lib/briefing/briefing.ts";
import {
  escapedBytes,
  PART_NAMES,
  type PartBytes,
} from "../../lib/briefing/part_bytes.ts";
import { requestBytes } from "../../lib/briefing/turn_request.ts";
import { ResultStore } from "../../lib/store/result_store.ts";

const TOOL = {
  name: "select_action",
  description: "Pick the next action",
  input_schema: { type: "object" },
};

const sum = (parts: PartBytes) => PART_NAMES.reduce((n, p) => n + parts[p], 0);

async function inspected(policy: "legacy" | "bounded", answers: unknown[]) {
  const results = new ResultStore();
  // Quotes, newlines and a two-byte character: escaping counts.
  const text = 'const s = "é";\n'.repeat(300);
  const d = await results.put(text, {
    origin: "repository.inspect src/a.ts",
    capture: "complete",
  });
  const briefing = new Briefing({
    policy,
    intent: "Fix the bug",
    instructions: "Be careful",
    results,
  });
  briefing.record({
    sequence: 1,
    action: "repository.inspect",
    arguments: { paths: ["src/a.ts"] },
    report: { kind: "inspected", files: [{ path: "src/a.ts", descriptor: d }] },
  });
  const request = briefing.request({
    phase: "selection",
    tool: TOOL,
    candidates: ["tests.run"],
    lookupAnswers: answers,
    notes: ["Step 1 was fine"],
  });
  return { request, parts: briefing.lastTurn!.parts, descriptor: d };
}

Deno.test("Bytes by part add up to the request's bytes under both policies", async () => {
  for (const policy of ["legacy", "bounded"] as const) {
    const { request, parts } = await inspected(policy, [
      { selected_text: 'x "y"\n' },
    ]);
    assert.equal(sum(parts), requestBytes(request), policy);
    for (const name of PART_NAMES) {
      if (name !== "topic" || policy === "bounded") {
        assert.ok(parts[name] > 0, `${policy}: ${name} is ${parts[name]}`);
      }
    }
  }
});

Deno.test("A legacy preview counts as an inline result, the rest of its descriptor as a descriptor", async () => {
  const { parts, descriptor } = await inspected("legacy", []);
  const preview = escapedBytes(JSON.stringify(descriptor.preview));
  assert.equal(parts.tool_results_inline, preview);
  assert.ok(parts.descriptors > 0);
  assert.equal(parts.attention > 0, true, "the notes");
});

Deno.test("Bounded events carry compact descriptors and no preview; lookup answers are inline results", async () => {
  const answer = { selected_text: "line 1\nline 2" };
  const { parts } = await inspected("bounded", [answer]);
  assert.equal(
    parts.tool_results_inline,
    escapedBytes(JSON.stringify(answer)),
  );
  assert.ok(parts.descriptors > 0);
  const none = await inspected("bounded", []);
  assert.equal(none.parts.tool_results_inline, 0);
  assert.equal(none.parts.descriptors, parts.descriptors);
});
