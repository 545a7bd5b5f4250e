/**
 * GitHub's own workflow and action-manifest parser
 * (`npm:@actions/workflow-parser`, the one the Actions VS Code extension and
 * language server use), loaded under Deno.
 *
 * The package imports its schema as `import WorkflowSchema from
 * "../workflow-v1.0.min.json"`, without an import attribute, which Deno
 * refuses ("Attempted to load JSON module without specifying \"type\":
 * \"json\""). A `node:module` load hook, registered only while the parser
 * loads, answers such an import with a one-line module that imports the same
 * file under `with { type: "json" }` and re-exports it: the schema is parsed
 * by Deno's own JSON loader, byte for byte the file the package ships.
 */
import { registerHooks } from "node:module";

const hooks = registerHooks({
  load(url, context, nextLoad) {
    if (url.endsWith(".json") && context.importAttributes?.type === undefined) {
      return {
        format: "module",
        source: `import data from ${
          JSON.stringify(url)
        } with { type: "json" };\nexport default data;\n`,
        shortCircuit: true,
      };
    }
    return nextLoad(url, context);
  },
});
let parser: typeof import("@actions/workflow-parser");
let actions: typeof import("@actions/workflow-parser/actions/index");
try {
  parser = await import("@actions/workflow-parser");
  // The action manifest parser (action.yml against GitHub's action schema,
  // `action-v1.0.json`), shipped in the same package.
  actions = await import("@actions/workflow-parser/actions/index");
} finally {
  hooks.deregister();
}

/** A parsed action manifest, as GitHub's converter types it. */
export type ActionTemplate =
  import("@actions/workflow-parser/actions/index").ActionTemplate;

/**
 * The errors GitHub's parser reports for an action manifest (action.yml,
 * checked against its strict action schema: required `name`, `description`
 * and `runs`, known keys only, `shell` on every composite `run` step, valid
 * expressions), and the typed manifest when there are none.
 */
export function actionErrors(
  name: string,
  content: string,
): { errors: string[]; action: ActionTemplate | undefined } {
  const result = actions.parseAction(
    { name, content },
    new parser.NoOperationTraceWriter(),
  );
  const errors = result.context.errors.getErrors().map((e) => e.message);
  if (errors.length > 0 || result.value === undefined) {
    return {
      errors: errors.length > 0
        ? errors
        : [`${name}: the parser returned no action`],
      action: undefined,
    };
  }
  const action = actions.convertActionTemplate(result.context, result.value);
  const late = result.context.errors.getErrors().map((e) => e.message);
  return { errors: late, action: late.length > 0 ? undefined : action };
}

/**
 * The errors GitHub's parser reports for a workflow file, as its messages
 * (`ci.yml (Line: 5, Col: 5): Unexpected value 'stepz'`); none for a valid one.
 */
export function workflowErrors(name: string, content: string): string[] {
  const result = parser.parseWorkflow(
    { name, content },
    new parser.NoOperationTraceWriter(),
  );
  const errors = result.context.errors.getErrors().map((e) => e.message);
  if (errors.length === 0 && result.value === undefined) {
    return [`${name}: the parser returned no workflow`];
  }
  return errors;
}
