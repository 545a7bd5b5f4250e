/**
 * The two forced tools of a step: `select_action` (an enum of the admissible
 * candidates) and `action_arguments` (the chosen action's JSON Schema), each
 * with the lookups of the policy as alternatives.
 *
 * @module
 */
import type { TurnTool } from "../briefing/turn_request.ts";
import { selectActionSchema } from "./_schema.ts";

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

/**
 * The `select_action` tool: `{"action": <one of the candidates>}` or a lookup.
 *
 * @param candidates The admissible actions this step.
 * @param bounded Whether history lookups are offered.
 * @returns The tool of the selection stage.
 */
export function selectActionTool(
  candidates: readonly string[],
  bounded: boolean,
): TurnTool {
  return {
    name: "select_action",
    description:
      "Choose the next action of the slice from the candidate actions, or send one lookup instead.",
    input_schema: {
      type: "object",
      anyOf: [
        selectActionSchema(candidates),
        ...lookupSchemas(bounded),
      ],
      $defs: { reference: REFERENCE },
    },
  };
}

/**
 * The `action_arguments` tool: the action's arguments or a lookup.
 *
 * @param action The chosen action.
 * @param schema The action's JSON Schema (a closed object).
 * @param bounded Whether history lookups are offered.
 * @returns The tool of the argument stage.
 */
export function actionArgumentsTool(
  action: string,
  schema: Readonly<Record<string, unknown>>,
  bounded: boolean,
): TurnTool {
  const { $schema: _ignored, $defs, ...body } = schema as Record<
    string,
    unknown
  >;
  const defs = {
    ...(isRecord($defs) ? $defs : {}),
    reference: REFERENCE,
  };
  return {
    name: "action_arguments",
    description: `Give the arguments of ${action}, or send one lookup instead.`,
    input_schema: {
      type: "object",
      anyOf: [body, ...lookupSchemas(bounded)],
      $defs: defs,
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
