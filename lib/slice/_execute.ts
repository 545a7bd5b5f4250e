/**
 * Execution of commissioned actions in the workspace executor, and the typed
 * reports made from what it returns.
 *
 * @module
 */
import type {
  EditedReport,
  ExecutionReport,
  InspectedFile,
  InspectedReport,
  TestsRunReport,
} from "../briefing/report.ts";
import type { ResultDescriptor, ResultStore } from "../store/result_store.ts";
import { revisionId } from "./revision.ts";

/** The executor operations the loop uses (WorkspaceExecutor's shape). */
export interface Effects {
  inspect(
    paths: string[],
  ): Promise<{ path: string; text?: string; error?: string }[]>;
  edit(
    files: { path: string; contents: string }[],
  ): Promise<{ files: { path: string; utf8_bytes: number; sha256: string }[] }>;
  runTests(): Promise<{
    exit_code: number;
    timed_out: boolean;
    output_tail: string;
    confinement: string;
  }>;
  close(): void | Promise<void>;
}

/** Mutable workspace facts of a run. */
export interface WorkspaceFacts {
  /** Admitted edits so far. */
  edits: number;
  /** The latest revision; `null` before any edit. */
  revision: string | null;
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
      files.push({ path: file.path, missing: true });
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

/** Writes files atomically and makes the new revision. */
export async function editFiles(
  effects: Effects,
  facts: WorkspaceFacts,
  files: { path: string; contents: string }[],
): Promise<EditedReport> {
  const written = await effects.edit(files);
  facts.edits += 1;
  facts.revision = revisionId(facts.edits, files);
  return {
    kind: "edited",
    revision: facts.revision,
    files: written.files.map((f) => ({
      path: f.path,
      utf8_bytes: f.utf8_bytes,
      sha256: f.sha256,
    })),
  };
}

/** Runs the tests on the current revision and stores the output tail. */
export async function runTests(
  effects: Effects,
  results: ResultStore,
  facts: WorkspaceFacts,
  command: readonly string[],
): Promise<TestsRunReport> {
  const tested = facts.revision;
  const run = await effects.runTests();
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
    confinement: run.confinement,
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
