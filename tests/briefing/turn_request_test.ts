import assert from "node:assert/strict";
import {
  requestBytes,
  serializeTurnRequest,
  stableStringify,
  textEndOffset,
  type TurnRequest,
} from "../../lib/briefing/turn_request.ts";

const encoder = new TextEncoder();

function request(texts: string[], marked: number): TurnRequest {
  return {
    system: [{
      type: "text",
      text: "Rules ✓",
      cache_control: { type: "ephemeral" },
    }],
    messages: [{
      role: "user",
      content: texts.map((text, i) =>
        i === marked
          ? { type: "text", text, cache_control: { type: "ephemeral" } }
          : { type: "text", text }
      ),
    }],
    tool: {
      name: "select_action",
      description: "Pick",
      input_schema: { type: "object", required: ["action"] },
    },
    tool_choice: { type: "tool", name: "select_action" },
  };
}

Deno.test("serializeTurnRequest() writes system, messages, tool, tool_choice in that order", () => {
  const json = serializeTurnRequest(request(["a"], 0));
  assert.deepEqual(Object.keys(JSON.parse(json)), [
    "system",
    "messages",
    "tool",
    "tool_choice",
  ]);
  assert.ok(
    json.startsWith(
      '{"system":[{"type":"text","text":"Rules ✓","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[',
    ),
  );
  assert.equal(
    requestBytes(request(["a"], 0)),
    encoder.encode(json).byteLength,
  );
});

Deno.test("serializeTurnRequest() gives equal bytes whatever order objects were built in", () => {
  const a = request(["x", "y"], 1);
  const b = JSON.parse(stableStringify(a)) as TurnRequest; // every key reordered
  assert.equal(serializeTurnRequest(b), serializeTurnRequest(a));
  assert.deepEqual(
    JSON.parse(serializeTurnRequest(a)),
    JSON.parse(stableStringify(a)),
  );
});

Deno.test("A moving breakpoint keeps the serialized prefix through the earlier block's text", () => {
  const before = request(["intent", "event 1"], 1);
  const after = {
    ...request(["intent", "event 1", "event 2"], 2),
    tool: { name: "action_arguments", description: "Args", input_schema: {} },
  };
  const prev = encoder.encode(serializeTurnRequest(before));
  const next = encoder.encode(serializeTurnRequest(after));
  const end = textEndOffset(before, { message: 0, block: 1 });
  assert.deepEqual(next.subarray(0, end), prev.subarray(0, end));
  assert.equal(
    new TextDecoder().decode(prev.subarray(end - 9, end)),
    '"event 1"',
  );
  assert.equal(
    textEndOffset(before, { message: "system", block: 0 }),
    encoder.encode('{"system":[{"type":"text","text":"Rules ✓"').byteLength,
  );
  assert.throws(
    () => textEndOffset(before, { message: 0, block: 5 }),
    RangeError,
  );
});
