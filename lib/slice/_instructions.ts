/** The fixed instructions of a slice briefing, derived from the action registry. */
import { ACTIONS } from "./_schema.ts";

/**
 * The instructions shown intact at the start of every request. They depend
 * only on the run's configuration, so they never disturb the cached prefix.
 */
export function sliceInstructions(
  testCommand: readonly string[] | undefined,
): string {
  const tests = testCommand === undefined
    ? "No test command is configured: slice.complete is offered at any time."
    : `The test command is ${
      JSON.stringify(testCommand.join(" "))
    }. tests.run runs it on the current revision of the workspace; slice.complete is offered only while the latest test run passed on the latest revision.`;
  return [
    "You are the coding agent of a governed slice over a local workspace. Work toward the intent one action per step.",
    "Each step has two stages, named at the end of every request: in selection, choose one of the candidate actions; in arguments, give the chosen action's arguments. Answer every request by calling the loom_step tool with one argument, step: a JSON object holding either the stage's answer or one lookup.",
    "Actions:",
    ...ACTIONS.map((a) => `- ${a.name} ${a.signature}: ${a.description}`),
    "Paths are relative to the workspace root. Absolute paths, paths leaving the workspace, symlinks leading outside and writes into .git are refused.",
    "A refused step still counts toward the step budget; the next request says why it was refused.",
    tests,
  ].join("\n");
}
