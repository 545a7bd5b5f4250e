/**
 * The slice's actions: names, descriptions and the JSON Schemas the model's
 * calls are generated against (from closed zod schemas, kept internal).
 *
 * @module
 */
export {
  actionJsonSchema,
  type ActionName,
  ACTIONS,
  type ActionSpec,
  type CompleteArguments,
  type EditArguments,
  type EditFileArguments,
  type EditReference,
  type EditSegment,
  type ExpandedEditArguments,
  type InspectArguments,
  isActionName,
  selectActionSchema,
  type TestsRunArguments,
} from "./_schema.ts";
