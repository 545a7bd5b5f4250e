/**
 * The working state of wire-formats.md: what the run has established,
 * derived only from typed execution reports. A file whose text claims the
 * tests passed changes nothing; a pass on revision A does not validate B.
 *
 * @module
 */
import type { ResultReference } from "../store/result_store.ts";
import type { ActionRecord, ExecutionReport } from "./report.ts";

/** At most this many recent artifact references are kept. */
export const MAX_RECENT_ARTIFACTS = 8;

/** The latest test run, as the working state shows it. */
export interface LatestTest {
  /** Exit code of the test program. */
  readonly exit_code: number;
  /** Whether the run timed out. */
  readonly timed_out: boolean;
  /** Revision tested; `null` for the unedited workspace. */
  readonly tested_revision: string | null;
}

/** The latest refusal. */
export interface LatestRefusal {
  /** Sequence of the refused step. */
  readonly sequence: number;
  /** Why it was refused. */
  readonly reason: string;
}

/** Working state JSON, exactly the closed object of wire-formats.md. */
export interface WorkingStateJson {
  /** Revision of the latest admitted edit, or `null` before any edit. */
  readonly latest_revision: string | null;
  /** The latest test run, or `null`. */
  readonly latest_test: LatestTest | null;
  /** The latest refusal, or `null`. */
  readonly latest_refusal: LatestRefusal | null;
  /** References of the most recent stored artifacts, oldest first, ≤ 8. */
  readonly recent_artifacts: readonly ResultReference[];
  /**
   * True only when the latest test exited 0, did not time out, and ran on
   * the latest revision (`null` = the unedited workspace before any edit).
   */
  readonly tests_validate_latest_revision: boolean;
}

/**
 * Incremental working state: apply records in sequence order, read the JSON
 * at any time. Applying a record costs O(1), independent of history length.
 *
 * @example
 * ```ts
 * import { WorkingState } from "./working_state.ts";
 * import assert from "node:assert/strict";
 * const state = WorkingState.from([
 *   { sequence: 1, action: "repository.edit", arguments: {}, report: { kind: "edited", revision: "rev-1-aaaaaaaaaaaa", files: [] } },
 *   { sequence: 2, action: "tests.run", arguments: {}, report: {
 *     kind: "tests_run", exit_code: 0, timed_out: false, tested_revision: "rev-1-aaaaaaaaaaaa", confinement: "none",
 *     output: { origin: "tests.run", capture: "partial", utf8_bytes: 2, preview: "ok", preview_truncated: false, preview_start_byte: 0, preview_end_byte: 2 },
 *   } },
 *   { sequence: 3, action: "repository.edit", arguments: {}, report: { kind: "edited", revision: "rev-2-bbbbbbbbbbbb", files: [] } },
 * ]);
 * assert.equal(state.latest_revision, "rev-2-bbbbbbbbbbbb");
 * assert.equal(state.tests_validate_latest_revision, false);
 * ```
 */
export class WorkingState {
  #latestRevision: string | null = null;
  #latestTest: LatestTest | null = null;
  #latestRefusal: LatestRefusal | null = null;
  #artifacts: ResultReference[] = [];

  /**
   * Derives the working state from action records in sequence order.
   *
   * @param records The records of the run so far.
   * @returns The working state JSON.
   */
  static from(records: Iterable<ActionRecord>): WorkingStateJson {
    const state = new WorkingState();
    for (const record of records) state.apply(record);
    return state.toJSON();
  }

  /**
   * Folds one record into the state. Only its typed report is read.
   *
   * @param record The next action record.
   */
  apply(record: ActionRecord): void {
    const report: ExecutionReport = record.report;
    switch (report.kind) {
      case "edited":
        this.#latestRevision = report.revision;
        return;
      case "tests_run":
        this.#latestTest = {
          exit_code: report.exit_code,
          timed_out: report.timed_out,
          tested_revision: report.tested_revision,
        };
        this.#remember(report.output.reference);
        return;
      case "refused":
        this.#latestRefusal = {
          sequence: record.sequence,
          reason: report.reason,
        };
        return;
      case "inspected":
        for (const file of report.files) {
          this.#remember(file.descriptor?.reference);
        }
        return;
    }
  }

  /**
   * The working state as wire-formats.md JSON.
   *
   * @returns A fresh closed object.
   */
  toJSON(): WorkingStateJson {
    const test = this.#latestTest;
    return {
      latest_revision: this.#latestRevision,
      latest_test: test,
      latest_refusal: this.#latestRefusal,
      recent_artifacts: [...this.#artifacts],
      tests_validate_latest_revision: test !== null && test.exit_code === 0 &&
        !test.timed_out && test.tested_revision === this.#latestRevision,
    };
  }

  #remember(reference: ResultReference | undefined): void {
    if (reference === undefined) return;
    this.#artifacts.push(reference);
    if (this.#artifacts.length > MAX_RECENT_ARTIFACTS) this.#artifacts.shift();
  }
}
