/**
 * Typed execution reports: what the slice learns from the executor after an
 * action, and the action record the briefing keeps. Only these reports change
 * the working state; no file or output text can.
 *
 * @module
 */
import type { ResultDescriptor } from "../store/result_store.ts";

/**
 * One file of an inspection: its stored result, `missing: true`, or the
 * `error` that kept it unread.
 */
export interface InspectedFile {
  /** Workspace-relative path as commissioned. */
  readonly path: string;
  /** The stored result's descriptor (legacy form, with preview). */
  readonly descriptor?: ResultDescriptor;
  /** The file does not exist. */
  readonly missing?: true;
  /**
   * Why an existing file was not read: a stable code (`too_large`,
   * `binary_file`, `invalid_utf8`, `not_a_file`, `not_regular_file`, `hard_link`,
   * `symlink_escape`, …) and a reason naming workspace-relative paths only.
   */
  readonly error?: { readonly code: string; readonly reason: string };
}

/** One file written by an admitted edit: size and digest, never the body. */
export interface EditedFile {
  /** Workspace-relative path. */
  readonly path: string;
  /** UTF-8 size of the written contents. */
  readonly utf8_bytes: number;
  /** SHA-256 (64 lowercase hex) of the written contents. */
  readonly sha256: string;
}

/** `repository.inspect` ran: one entry per requested path. */
export interface InspectedReport {
  /** Discriminant. */
  readonly kind: "inspected";
  /** The inspected files in request order. */
  readonly files: readonly InspectedFile[];
}

/** `repository.edit` ran and produced a new workspace revision. */
export interface EditedReport {
  /** Discriminant. */
  readonly kind: "edited";
  /** The revision the edit produced, `rev-<n>-<12 hex>`. */
  readonly revision: string;
  /** The written files. */
  readonly files: readonly EditedFile[];
}

/**
 * The edited report of an edit that produced `revision`: each written
 * file's path, size and digest, and nothing else the files carry.
 *
 * @example
 * ```ts
 * import { editedReport } from "./report.ts";
 * import assert from "node:assert/strict";
 * const file = { path: "a.ts", utf8_bytes: 1, sha256: "0".repeat(64), contents: "x" };
 * assert.deepEqual(editedReport("rev-1-abc", [file]).files, [
 *   { path: "a.ts", utf8_bytes: 1, sha256: "0".repeat(64) },
 * ]);
 * ```
 */
export function editedReport(
  revision: string,
  files: readonly EditedFile[],
): EditedReport {
  return {
    kind: "edited",
    revision,
    files: files.map((f) => ({
      path: f.path,
      utf8_bytes: f.utf8_bytes,
      sha256: f.sha256,
    })),
  };
}

/** `tests.run` ran; its output tail is a partial stored result. */
export interface TestsRunReport {
  /** Discriminant. */
  readonly kind: "tests_run";
  /** Exit code of the test program (non-zero on failure). */
  readonly exit_code: number;
  /** Whether the run was stopped by its timeout. */
  readonly timed_out: boolean;
  /** Revision the tests ran on; `null` for the unedited workspace. */
  readonly tested_revision: string | null;
  /** Descriptor of the captured output tail. */
  readonly output: ResultDescriptor;
  /** What guarded the test process. */
  readonly confinement: string;
}

/** The step was refused (commission, selection, expansion, lookup budget). */
export interface RefusedReport {
  /** Discriminant. */
  readonly kind: "refused";
  /** Stable machine code of the refusal. */
  readonly code: string;
  /** Sentence-case reason shown to the model. */
  readonly reason: string;
}

/** What one action did, as the executor or the loop reported it. */
export type ExecutionReport =
  | InspectedReport
  | EditedReport
  | TestsRunReport
  | RefusedReport;

/** One step of a slice: the action, its compact arguments and its report. */
export interface ActionRecord {
  /** Step number, 1-based, strictly increasing within a run. */
  readonly sequence: number;
  /** The action name, e.g. `repository.inspect`. */
  readonly action: string;
  /**
   * The arguments as the model gave them. Edit bodies are compacted by the
   * briefing (see `compactArguments`) and never shown again in full.
   */
  readonly arguments: unknown;
  /** What happened. */
  readonly report: ExecutionReport;
}
