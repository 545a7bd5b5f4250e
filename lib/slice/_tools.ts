/**
 * The one tool of a run, `loom_step`: a union of the selection, every
 * action's arguments and the lookups of the policy, built from the action
 * registry so that every request of a run carries the same bytes.
 *
 * @module
 */
import type { TurnTool } from "../briefing/turn_request.ts";
import { actionJsonSchema, ACTIONS, selectActionSchema } from "./_schema.ts";

const REFERENCE: Record<string, unknown> = {
  type: "object",
  properties: {
    result: { type: "string", description: "result-<n> or event-<n>" },
    sha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
    select: {
      anyOf: [
        closed({ kind: { const: "whole" } }),
        closed({
          kind: { const: "bytes" },
          start: { type: "integer", minimum: 0 },
          end: { type: "integer", minimum: 0 },
        }),
        closed({
          kind: { const: "lines" },
          start: { type: "integer", minimum: 1 },
          end: { type: "integer", minimum: 1 },
        }),
        closed({
          kind: { const: "json_pointer" },
          pointer: { type: "string" },
        }),
      ],
    },
    rendering: { enum: ["text", "json"] },
  },
  required: ["result", "sha256", "select"],
  additionalProperties: false,
};

function closed(properties: Record<string, unknown>): Record<string, unknown> {
  return {
    type: "object",
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

const OFFSET = { type: "integer", minimum: 0 };

/** The lookup alternatives of a policy, as JSON Schemas. */
function lookupSchemas(bounded: boolean): Record<string, unknown>[] {
  const ref = { $ref: "#/$defs/reference" };
  const lookups = [
    closed({ $read_result: ref }),
    closed({ $list_results: OFFSET }),
  ];
  if (bounded) {
    lookups.push(
      closed({ $read_history: ref }),
      closed({ $list_history: OFFSET }),
    );
  }
  return lookups;
}

/** The name of the run's one tool. */
export const STEP_TOOL_NAME = "loom_step";

/**
 * The run's one tool, `loom_step`, identical in every request of a run so
 * that the tools at the front of the provider's cache prefix never change:
 * its argument is a selection `{"action": <any action>}`, the arguments of
 * any action of the registry, or a lookup of the policy. Which of these a
 * stage admits (the candidates, the chosen action) is told after the last
 * cache breakpoint, and Loom checks the answer itself.
 *
 * @param bounded Whether history lookups are offered.
 * @returns The tool of every stage of the run.
 */
export function stepTool(bounded: boolean): TurnTool {
  return {
    name: STEP_TOOL_NAME,
    description:
      'Answer the current stage named at the end of the request: in selection {"action": <one of the candidate actions>}, in arguments the chosen action\'s arguments; in either stage one lookup instead.',
    input_schema: {
      type: "object",
      anyOf: [
        selectActionSchema(ACTIONS.map((a) => a.name)),
        ...ACTIONS.map((a) => ({
          description: `Arguments of ${a.name}`,
          ...actionJsonSchema(a.name),
        })),
        ...lookupSchemas(bounded),
      ],
      $defs: { reference: REFERENCE },
    },
  };
}
