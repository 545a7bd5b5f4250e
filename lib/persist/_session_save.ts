/**
 * What one save of a slice session writes: the records acknowledged since
 * the last save, the results they produced catalogued by the persistence
 * rule, and the result files to write. The owner's handle keeps one
 * {@linkcode SaveCursor}, plans each save with it, writes, and commits the
 * plan once the journal record is durable.
 *
 * @module
 */
import type { ActionRecord } from "../briefing/report.ts";
import type { SliceSnapshot } from "../slice/run_state.ts";
import type { StoredResult } from "../store/result_store.ts";
import type { ParsedSession } from "./_read_session.ts";
import { type CatalogueEntry, describeIssue, laterSchema } from "./_schema.ts";
import { classify, type ResultOrigin, stepRecord } from "./_session_records.ts";
import { catalogueResult } from "./_session_results.ts";
import type { SessionSaveInfo } from "./session_types.ts";

/** How far the journal got: records and report lines saved so far. */
interface Saved {
  readonly records: number;
  readonly requests: number;
}

/** One planned save: the journal record and the result files before it. */
export interface SavePlan {
  /** The step record to append. */
  readonly record: Record<string, unknown>;
  /** Results catalogued as files (those in `written` exist already). */
  readonly files: readonly StoredResult[];
  /** What the save catalogues, but for the files it writes. */
  readonly info: Omit<SessionSaveInfo, "written">;
  readonly saved: Saved;
  readonly next: number;
  readonly pending: string[];
}

/** Where the next save of a session starts: what the journal holds. */
export class SaveCursor {
  /** Digests whose result files the session holds. */
  readonly written: Set<string> = new Set<string>();
  readonly #origins = new Map<string, ResultOrigin>();
  /** Results seen without a producing record yet (normally none). */
  #pending: string[] = [];
  #saved: Saved;
  #nextResult: number;

  /** @param parsed The opened session's journal, or none for a new one. */
  constructor(parsed: ParsedSession | undefined) {
    this.#saved = {
      records: parsed?.state.records.length ?? 0,
      requests: parsed?.state.requests.length ?? 0,
    };
    let next = 1;
    for (const id of parsed?.catalogue.keys() ?? []) {
      next = Math.max(next, Number(id.slice("result-".length)) + 1);
    }
    this.#nextResult = next;
    if (parsed !== undefined) {
      classify(parsed.state.records as ActionRecord[], this.#origins);
    }
  }

  /**
   * The save of `snapshot` as record `seq` of the session at `where`.
   *
   * @throws {TypeError} When records or report lines shrank, or the
   *   snapshot would not make a valid record.
   */
  plan(
    where: string,
    seq: number,
    snapshot: SliceSnapshot,
    overrides: Readonly<Record<string, number>>,
  ): SavePlan {
    if (
      snapshot.records.length < this.#saved.records ||
      snapshot.requests.length < this.#saved.requests
    ) {
      throw new TypeError(
        `Cannot save session ${where}: records and report lines only grow, but the snapshot has fewer than were saved`,
      );
    }
    classify(snapshot.records.slice(this.#saved.records), this.#origins);
    const results: Record<string, CatalogueEntry> = {};
    const files: StoredResult[] = [];
    const skipped: string[] = [];
    const counts = { persisted: 0, inline: 0, reread: 0 };
    const pending: string[] = [];
    const ids = [...this.#pending];
    let next = this.#nextResult;
    while (snapshot.results.get(`result-${next}`) !== undefined) {
      ids.push(`result-${next}`);
      next += 1;
    }
    for (const id of ids) {
      const result = snapshot.results.get(id);
      if (result === undefined) continue;
      const origin = this.#origins.get(id);
      // No acknowledged record produced it (yet): never stored unless one does.
      if (origin === undefined) pending.push(id);
      const entry = origin === undefined
        ? undefined
        : catalogueResult(result, origin, overrides);
      if (entry === undefined) {
        skipped.push(result.id);
        continue;
      }
      results[result.id] = entry;
      const kind = Object.keys(entry.source)[0] as keyof typeof counts;
      counts[kind] += 1;
      if (kind === "persisted") files.push(result);
    }
    const record = stepRecord(seq, snapshot, this.#saved, results);
    const valid = laterSchema.safeParse(JSON.parse(JSON.stringify(record)));
    if (!valid.success) {
      throw new TypeError(
        `Cannot save session ${where}: the snapshot is invalid: ${
          describeIssue(valid.error)
        }`,
      );
    }
    return {
      record,
      files,
      info: { ...counts, skipped },
      saved: {
        records: snapshot.records.length,
        requests: snapshot.requests.length,
      },
      next,
      pending,
    };
  }

  /** Moves the cursor past a plan whose record is now durable. */
  commit(plan: SavePlan): void {
    this.#saved = plan.saved;
    this.#nextResult = plan.next;
    this.#pending = plan.pending;
  }
}
