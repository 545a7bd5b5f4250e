/**
 * The one tool of a run, `loom_step`: one required property, `step`, whose
 * schema is the union of the selection, every action's arguments and the
 * lookups of the policy, built from the action registry so that every
 * request of a run carries the same bytes. The union sits under a property
 * because neither service takes one at the root of a tool's schema (see
 * `lib/providers/request_rules.ts`); {@linkcode stepAnswer} takes the
 * answer back out, and still reads the bare shape of older recordings.
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

/** The one property of the tool's argument, holding the stage's answer. */
export const STEP_PROPERTY = "step";

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
      'Answer the current stage named at the end of the request with {"step": <answer>}: in selection the answer is {"action": <one of the candidate actions>}, in arguments the chosen action\'s arguments; in either stage it may be one lookup instead. The step is a JSON object, not a string.',
    input_schema: {
      type: "object",
      properties: {
        [STEP_PROPERTY]: {
          description:
            "The stage's answer (a selection or the chosen action's arguments) or one lookup, as a JSON object",
          anyOf: [
            selectActionSchema(ACTIONS.map((a) => a.name)),
            ...ACTIONS.map((a) => ({
              description: `Arguments of ${a.name}`,
              ...actionJsonSchema(a.name),
            })),
            ...lookupSchemas(bounded),
          ],
        },
      },
      required: [STEP_PROPERTY],
      additionalProperties: false,
      $defs: { reference: REFERENCE },
    },
  };
}

/** What {@linkcode stepAnswer} found in a `loom_step` call's arguments. */
export interface StepAnswer {
  /** The stage's answer or lookup (as given, when it was not wrapped). */
  readonly value: unknown;
  /** Whether `step` came as a string holding a JSON object, parsed here. */
  readonly reparsed: boolean;
}

/**
 * The answer inside a `loom_step` call's arguments: the value of `step`.
 * Claude models are known to send a nested object argument as a
 * JSON-encoded string when the schema holds a union
 * (`{"step": "{\"action\": …}"}`): a string that parses to a JSON object is
 * taken as that object, and said so (`reparsed`). Any other string stays a
 * string, which the stage refuses as before. Arguments without the `step`
 * wrapper (the shape of recordings made before the wrapper) are the answer
 * itself.
 *
 * @param args The call's arguments.
 * @returns The answer, and whether it was reparsed from a string.
 */
export function stepAnswer(args: unknown): StepAnswer {
  if (
    args === null || typeof args !== "object" || Array.isArray(args) ||
    !Object.hasOwn(args, STEP_PROPERTY) || Object.keys(args).length !== 1
  ) {
    return { value: args, reparsed: false };
  }
  const value = (args as Record<string, unknown>)[STEP_PROPERTY];
  if (typeof value === "string") {
    const parsed = parseObject(value);
    if (parsed !== undefined) return { value: parsed, reparsed: true };
  }
  return { value, reparsed: false };
}

/** The JSON object a string holds, or `undefined`. */
function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" &&
        !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}
