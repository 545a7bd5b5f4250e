/**
 * Closed zod schemas of the slice's action arguments, and the JSON Schemas
 * the model sees, generated from them with `z.toJSONSchema`. Internal: the
 * public face is `actions.ts` (plain interfaces and functions).
 *
 * The reference schema is the one of `lib/reference/schema.ts`, reused so
 * that argument generation and expansion agree on one shape.
 *
 * @module
 */
import { z } from "zod";
import { referenceSchema } from "../reference/schema.ts";

/** The four actions of a slice. */
export type ActionName =
  | "repository.inspect"
  | "repository.edit"
  | "tests.run"
  | "slice.complete";

/**
 * How an action's result is persisted by a session: `self_bounding` actions
 * read arbitrary paths back and are never written to `tool-results/`;
 * `external` ones are written above their threshold.
 */
export type PersistenceClass = "self_bounding" | "external";

/** When an action is offered as a candidate. */
export type Admission =
  /** Every step. */
  | "always"
  /** Only when a test command is configured. */
  | "tests_configured"
  /** Only when the latest test run validates the latest revision (or no test command is configured). */
  | "tests_validated";

/**
 * One entry of the action registry: everything the instructions, the tool
 * surface, the candidates and the persistence declarations are derived from.
 */
export interface ActionSpec {
  /** The action name, e.g. `repository.inspect`. */
  readonly name: ActionName;
  /** One sentence the model reads beside the action's schema. */
  readonly description: string;
  /** The argument shape as the instructions show it, e.g. `{paths}`. */
  readonly signature: string;
  /** How a session persists the action's results. */
  readonly persistence: PersistenceClass;
  /** When the action is a candidate. */
  readonly admission: Admission;
}

/** Arguments of `repository.inspect`. */
export interface InspectArguments {
  /** Workspace-relative POSIX paths, 1 to 16. */
  paths: string[];
}

/** A reference to stored content inside composed edit contents. */
export interface EditReference {
  /** `result-<n>` (or `event-<n>`). */
  result: string;
  /** SHA-256 of the whole stored content, 64 lowercase hex digits. */
  sha256: string;
  /** What to select. */
  select:
    | { kind: "whole" }
    | { kind: "bytes"; start: number; end: number }
    | { kind: "lines"; start: number; end: number }
    | { kind: "json_pointer"; pointer: string };
  /** `text` (default) or `json`. */
  rendering?: "text" | "json";
}

/** One segment of composed edit contents. */
export type EditSegment = { literal: string } | { ref: EditReference };

/** One file of `repository.edit`, as the model may write it. */
export interface EditFileArguments {
  /** Workspace-relative POSIX path. */
  path: string;
  /** Literal text, or segments composed from stored results. */
  contents: string | { segments: EditSegment[] };
}

/** Arguments of `repository.edit`, as the model may write them. */
export interface EditArguments {
  /** 1 to 16 files. */
  files: EditFileArguments[];
  /** Optional note on the change. */
  message?: string;
}

/** Arguments of `repository.edit` after expansion: every body is text. */
export interface ExpandedEditArguments {
  /** 1 to 16 files with literal contents. */
  files: { path: string; contents: string }[];
  /** Optional note on the change. */
  message?: string;
}

/** Arguments of `tests.run`: none. */
export type TestsRunArguments = Record<string, never>;

/** Arguments of `slice.complete`. */
export interface CompleteArguments {
  /** What the slice achieved. */
  summary: string;
}

/** Most paths one inspect or edit may name. */
export const MAX_PATHS = 16;
/** Most segments one file's composed contents may hold. */
export const MAX_SEGMENTS = 256;

const pathSchema = z.string().describe(
  "Workspace-relative POSIX path, e.g. src/a.ts",
);

/** `repository.inspect {paths}`. */
export const inspectSchema = z.strictObject({
  paths: z.array(pathSchema).min(1).max(MAX_PATHS),
});

const segmentSchema = z.union([
  z.strictObject({ literal: z.string() }),
  z.strictObject({ ref: referenceSchema }),
]);

const composedSchema = z.strictObject({
  segments: z.array(segmentSchema).max(MAX_SEGMENTS),
});

/** `repository.edit {files, message?}` as generated (segments allowed). */
export const editSchema = z.strictObject({
  files: z.array(z.strictObject({
    path: pathSchema,
    contents: z.union([z.string(), composedSchema]),
  })).min(1).max(MAX_PATHS),
  message: z.string().optional(),
});

/** `repository.edit` after expansion: what commission admits. */
export const expandedEditSchema = z.strictObject({
  files: z.array(z.strictObject({
    path: z.string(),
    contents: z.string(),
  })).min(1).max(MAX_PATHS),
  message: z.string().optional(),
});

/** `tests.run {}`. */
export const testsRunSchema = z.strictObject({});

/** `slice.complete {summary}`. */
export const completeSchema = z.strictObject({ summary: z.string() });

/** The schema the model's arguments are generated against, per action. */
export const ARGUMENT_SCHEMAS: Readonly<Record<ActionName, z.ZodType>> = {
  "repository.inspect": inspectSchema,
  "repository.edit": editSchema,
  "tests.run": testsRunSchema,
  "slice.complete": completeSchema,
};

/**
 * The slice's actions in candidate order, each with its description.
 *
 * @example
 * ```ts
 * import { ACTIONS } from "./_schema.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(ACTIONS.map((a) => a.name), [
 *   "repository.inspect",
 *   "repository.edit",
 *   "tests.run",
 *   "slice.complete",
 * ]);
 * ```
 */
export const ACTIONS: readonly ActionSpec[] = Object.freeze([
  {
    name: "repository.inspect",
    description:
      "Read 1 to 16 workspace files as UTF-8 text; each becomes a stored result you can reference.",
    signature: "{paths}",
    persistence: "self_bounding",
    admission: "always",
  },
  {
    name: "repository.edit",
    description:
      "Write 1 to 16 whole files atomically, from literal text or segments of stored results; each edit makes a new workspace revision.",
    signature: "{files, message?}",
    persistence: "external",
    admission: "always",
  },
  {
    name: "tests.run",
    description:
      "Run the configured test command on the current revision; its output tail becomes a stored result.",
    signature: "{}",
    persistence: "external",
    admission: "tests_configured",
  },
  {
    name: "slice.complete",
    description:
      "Finish the slice with a summary; admitted only when the tests validate the latest revision or no test command is configured.",
    signature: "{summary}",
    persistence: "external",
    admission: "tests_validated",
  },
]);

/**
 * The admissible actions of a step, in registry order, from each entry's
 * {@linkcode Admission}.
 *
 * @param state Whether a test command is configured and whether the latest
 *   test run validates the latest revision.
 * @returns The candidate action names.
 *
 * @example
 * ```ts
 * import { admissibleActions } from "./_schema.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   admissibleActions({ testConfigured: true, validated: false }),
 *   ["repository.inspect", "repository.edit", "tests.run"],
 * );
 * ```
 */
export function admissibleActions(state: {
  readonly testConfigured: boolean;
  readonly validated: boolean;
}): ActionName[] {
  return ACTIONS.filter((a) =>
    a.admission === "always" ||
    (a.admission === "tests_configured" && state.testConfigured) ||
    (a.admission === "tests_validated" &&
      (state.validated || !state.testConfigured))
  ).map((a) => a.name);
}

/**
 * Tells whether a string names one of the slice's actions.
 *
 * @param name Any string.
 * @returns `true` for the four action names.
 *
 * @example
 * ```ts
 * import { isActionName } from "./_schema.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isActionName("tests.run"), true);
 * assert.equal(isActionName("shell.exec"), false);
 * ```
 */
export function isActionName(name: string): name is ActionName {
  return Object.hasOwn(ARGUMENT_SCHEMAS, name);
}

/**
 * The JSON Schema of an action's arguments, generated from its closed zod
 * schema (every object has `additionalProperties: false`). Deterministic:
 * the same action always yields the same object.
 *
 * @param action One of the four action names.
 * @returns A JSON Schema object without the `$schema` key.
 * @throws {RangeError} When `action` is not an action name.
 *
 * @example
 * ```ts
 * import { actionJsonSchema } from "./_schema.ts";
 * import assert from "node:assert/strict";
 * const schema = actionJsonSchema("repository.inspect");
 * assert.equal(schema.type, "object");
 * assert.equal(schema.additionalProperties, false);
 * assert.deepEqual(schema.required, ["paths"]);
 * ```
 */
export function actionJsonSchema(action: string): Record<string, unknown> {
  if (!isActionName(action)) {
    throw new RangeError(
      `Cannot make a schema for ${
        JSON.stringify(action)
      }: it is not an action of the slice`,
    );
  }
  const schema = z.toJSONSchema(ARGUMENT_SCHEMAS[action], {
    io: "input",
  }) as Record<string, unknown>;
  delete schema["$schema"];
  return schema;
}

/**
 * The JSON Schema of the selection call: `{"action": <one of candidates>}`,
 * closed.
 *
 * @param candidates The admissible action names, in order.
 * @returns A JSON Schema object without the `$schema` key.
 * @throws {RangeError} When `candidates` is empty.
 *
 * @example
 * ```ts
 * import { selectActionSchema } from "./_schema.ts";
 * import assert from "node:assert/strict";
 * const schema = selectActionSchema(["repository.inspect", "tests.run"]);
 * assert.deepEqual(
 *   (schema.properties as { action: { enum: string[] } }).action.enum,
 *   ["repository.inspect", "tests.run"],
 * );
 * assert.equal(schema.additionalProperties, false);
 * ```
 */
export function selectActionSchema(
  candidates: readonly string[],
): Record<string, unknown> {
  if (candidates.length === 0) {
    throw new RangeError(
      "Cannot make a selection schema: there is no candidate action",
    );
  }
  const schema = z.toJSONSchema(
    z.strictObject({
      action: z.enum(candidates as [string, ...string[]]),
    }),
    { io: "input" },
  ) as Record<string, unknown>;
  delete schema["$schema"];
  return schema;
}
