/** The fixed instructions of a slice briefing. */

/** The actions a slice offers, in candidate order. */
export const ACTIONS = [
  "repository.inspect",
  "repository.edit",
  "tests.run",
  "slice.complete",
] as const;

/** One of the slice's actions. */
export type ActionName = typeof ACTIONS[number];

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
    "Actions:",
    "- repository.inspect {paths}: read up to 16 files; each becomes a stored result you can reference.",
    "- repository.edit {files, message?}: write whole files atomically; each edit makes a new workspace revision.",
    "- tests.run {}: run the configured test command; its output tail becomes a stored result.",
    "- slice.complete {summary}: finish the slice.",
    "Paths are relative to the workspace root. Absolute paths, paths leaving the workspace, symlinks leading outside and writes into .git are refused.",
    "A refused step still counts toward the step budget; the next request says why it was refused.",
    tests,
  ].join("\n");
}
