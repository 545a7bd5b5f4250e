/**
 * Execution of commissioned actions in the workspace executor, and the typed
 * reports made from what it returns.
 *
 * @module
 */
import {
  type EditedReport,
  editedReport,
  type ExecutionReport,
  type InspectedFile,
  type InspectedReport,
  type TestsRunReport,
} from "../briefing/report.ts";
import type { ResultDescriptor, ResultStore } from "../store/result_store.ts";
import { clipMessage, clipModelText } from "./_clip.ts";
import { revisionId, revisionNamesTree } from "./revision.ts";

/** The executor operations the loop uses (WorkspaceExecutor's shape). */
export interface Effects {
  inspect(
    paths: string[],
  ): Promise<
    { path: string; text?: string; code?: string; error?: string }[]
  >;
  edit(
    files: { path: string; contents: string }[],
  ): Promise<{ files: { path: string; utf8_bytes: number; sha256: string }[] }>;
  survey(): Promise<{ digest: string }>;
  runTests(): Promise<{
    exit_code: number;
    timed_out: boolean;
    output_tail: string;
    confinement: string;
    tree_before: string;
    tree_after: string;
  }>;
  close(): void | Promise<void>;
  /** How the tests are confined, `null` without a test command. */
  readonly testConfinement?: "bubblewrap" | "deno" | "unconfined" | null;
}

/** Mutable workspace facts of a run. */
export interface WorkspaceFacts {
  /** Admitted edits so far. */
  edits: number;
  /** The latest revision; `null` before any edit. */
  revision: string | null;
  /**
   * Digest of the tree the latest revision names (or of the unedited
   * workspace); `null` when unknown, e.g. after a failed rollback, or
   * before the first edit of a run without a test command (nothing
   * compares with it there).
   */
  digest: string | null;
}

/** Inspects files and stores each one read as a complete result. */
export async function inspectFiles(
  effects: Effects,
  results: ResultStore,
  paths: string[],
): Promise<InspectedReport> {
  const read = await effects.inspect(paths);
  const files: InspectedFile[] = [];
  for (const file of read) {
    if (file.text === undefined) {
      // The path is the model's and the reason may repeat it: both are
      // clipped so a long path cannot outgrow a bounded request.
      const path = clipModelText(file.path);
      files.push(
        file.code === undefined || file.code === "not_found"
          ? { path, missing: true }
          : {
            path,
            error: {
              code: file.code,
              reason: clipMessage(file.error ?? file.code, {
                paths: [file.path],
              }),
            },
          },
      );
      continue;
    }
    const descriptor = await results.put(file.text, {
      origin: `repository.inspect ${file.path}`,
      capture: "complete",
    });
    files.push({ path: file.path, descriptor });
  }
  return { kind: "inspected", files };
}

/**
 * Writes files atomically and makes the new revision, named after the
 * whole tree the edit left.
 */
export async function editFiles(
  effects: Effects,
  facts: WorkspaceFacts,
  files: { path: string; contents: string }[],
): Promise<EditedReport> {
  let written;
  try {
    written = await effects.edit(files);
  } catch (error) {
    // A failed rollback may leave the tree changed: nothing validates it.
    if ((error as { code?: unknown }).code === "rollback_failed") {
      facts.digest = null;
    }
    throw error;
  }
  const { digest } = await effects.survey();
  facts.edits += 1;
  facts.revision = revisionId(facts.edits, digest);
  facts.digest = digest;
  return editedReport(facts.revision, written.files);
}

/**
 * Runs the tests and stores the output tail. The run tests the latest
 * revision only when the tree it ran on is that revision's tree and did not
 * change while it ran; otherwise its `tested_revision` names the tree
 * (`tree-<12 hex>`), which no revision equals, so it validates nothing.
 */
export async function runTests(
  effects: Effects,
  results: ResultStore,
  facts: WorkspaceFacts,
  command: readonly string[],
): Promise<TestsRunReport> {
  const run = await effects.runTests();
  let tested = facts.revision;
  let note = "";
  if (run.tree_before !== run.tree_after) {
    tested = `tree-${run.tree_before.slice(0, 12)}-changed`;
    note =
      " The workspace tree changed while the test ran (or just before it, after the executor last looked), so this run validates no revision.";
  } else if (run.tree_before !== facts.digest) {
    tested = `tree-${run.tree_before.slice(0, 12)}`;
    note =
      " The workspace tree differs from the latest revision's (it changed outside an edit), so this run validates no revision; an edit makes a new one.";
  }
  const output = await results.put(run.output_tail, {
    origin: `tests.run ${command.join(" ")}`,
    capture: "partial",
  });
  return {
    kind: "tests_run",
    exit_code: run.exit_code,
    timed_out: run.timed_out,
    tested_revision: tested,
    output,
    confinement: run.confinement + note,
  };
}

/**
 * The descriptors of a report whose results the store could not keep (it
 * was full, or a result passed 16 MiB): they carry a preview but no
 * reference.
 *
 * @param report The report of a step.
 * @returns The unkept descriptors, in report order.
 */
export function unkeptResults(report: ExecutionReport): ResultDescriptor[] {
  const descriptors = report.kind === "inspected"
    ? report.files.flatMap((f) => f.descriptor ?? [])
    : report.kind === "tests_run"
    ? [report.output]
    : [];
  return descriptors.filter((d) => d.result_unavailable !== undefined);
}

/**
 * Performs a commissioned action (all but `slice.complete`) and makes its
 * report.
 *
 * @param effects The executor.
 * @param run The run's result store, workspace facts and test command.
 * @param action The action.
 * @param args Its commissioned arguments.
 * @returns The report.
 * @throws {TypeError} For an action the executor does not perform.
 */
export async function performAction(
  effects: Effects,
  run: {
    readonly results: ResultStore;
    readonly facts: WorkspaceFacts;
    readonly test: readonly string[];
  },
  action: string,
  args: unknown,
): Promise<ExecutionReport> {
  switch (action) {
    case "repository.inspect":
      return await inspectFiles(effects, run.results, [
        ...(args as { paths: string[] }).paths,
      ]);
    case "repository.edit":
      return await editFiles(
        effects,
        run.facts,
        (args as { files: { path: string; contents: string }[] }).files.map((
          f,
        ) => ({ path: f.path, contents: f.contents })),
      );
    case "tests.run":
      return await runTests(effects, run.results, run.facts, run.test);
    default:
      throw new TypeError(`Cannot execute unknown action ${action}`);
  }
}

/**
 * Why a step's first unkept result stops a bounded run (compact descriptors
 * have no preview, so the model would be blind to it), or `undefined` when
 * the store kept every result.
 *
 * @param report The step's report.
 * @param store The run's result store, for its counts.
 * @returns The stop detail's first sentence.
 */
export function unkeptDetail(
  report: ExecutionReport,
  store: ResultStore,
): string | undefined {
  const unkept = unkeptResults(report)[0];
  if (unkept === undefined) return undefined;
  const why = unkept.result_unavailable === "too_large"
    ? `it has ${unkept.utf8_bytes} bytes, more than the 16 MiB a result may hold`
    : `the result store is full (${store.count} results, ${store.totalBytes} bytes; it holds at most 1,024 results and 64 MiB)`;
  return `${unkept.result_unavailable}: Cannot keep the result of ${
    clipModelText(unkept.origin)
  }: ${why}, and a bounded briefing cannot show a result without a reference`;
}

/**
 * Surveys the tree the latest revision (or the unedited workspace) names,
 * into `facts.digest`: in the executor's worker while the first step asks
 * the model. The first action waits for it (nothing changes the tree
 * before); a run that ends before its first action never does.
 *
 * @param effects The executor.
 * @param facts The run's workspace facts (a resumed run's revision set).
 * @returns The survey to await, the first time only (`null` after).
 */
export function surveyBaseline(
  effects: Effects,
  facts: WorkspaceFacts,
): () => Promise<void> | null {
  let baseline: Promise<void> | null = effects.survey().then(({ digest }) => {
    const revision = facts.revision;
    facts.digest = revision === null || revisionNamesTree(revision, digest)
      ? digest
      : null;
  });
  baseline.catch(() => {});
  return () => {
    const wait = baseline;
    baseline = null;
    return wait;
  };
}
