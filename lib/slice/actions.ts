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
  admissibleActions,
  type Admission,
  type CompleteArguments,
  type EditArguments,
  type EditFileArguments,
  type EditReference,
  type EditSegment,
  type ExpandedEditArguments,
  type InspectArguments,
  isActionName,
  type PersistenceClass,
  selectActionSchema,
  type TestsRunArguments,
} from "./_schema.ts";
