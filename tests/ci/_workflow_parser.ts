/**
 * GitHub's own workflow parser (`npm:@actions/workflow-parser`, the one the
 * Actions VS Code extension and language server use), loaded under Deno.
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
try {
  parser = await import("@actions/workflow-parser");
} finally {
  hooks.deregister();
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
