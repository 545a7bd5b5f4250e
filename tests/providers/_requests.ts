import type { TurnRequest } from "../../lib/briefing/turn_request.ts";
import type { ModelCall } from "../../lib/providers/model_provider.ts";

/** A selection request with the briefing's cache markers (foundation 1h, convo 5m). */
export function selectionRequest(): TurnRequest {
  return {
    system: [
      { type: "text", text: "You are a careful engineer" },
      {
        type: "text",
        text: "Tool guidance",
        cache_control: { type: "ephemeral", ttl: "1h" },
      },
    ],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Intent: fix the bug" },
          {
            type: "text",
            text: "Recent events",
            cache_control: { type: "ephemeral" },
          },
          { type: "text", text: "Candidates: repository.inspect, tests.run" },
        ],
      },
    ],
    tool: {
      name: "select_action",
      description: "Choose the next action",
      input_schema: {
        type: "object",
        properties: {
          action: { type: "string", enum: ["repository.inspect", "tests.run"] },
        },
        required: ["action"],
        additionalProperties: false,
      },
    },
    tool_choice: { type: "tool", name: "select_action" },
  };
}

export function selectionCall(): ModelCall {
  return {
    phase: "selection",
    tool: "select_action",
    request: selectionRequest(),
  };
}

export function argumentsCall(): ModelCall {
  const base = selectionRequest();
  return {
    phase: "arguments",
    tool: "action_arguments",
    request: {
      ...base,
      tool: {
        name: "action_arguments",
        description: "Arguments of repository.inspect",
        input_schema: { type: "object" },
      },
      tool_choice: { type: "tool", name: "action_arguments" },
    },
  };
}
