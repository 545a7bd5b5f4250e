/**
 * The one place where a slice's run state meets its wire form: a snapshot
 * becomes a journal step record (snake_case counters from `SLICE_COUNTERS`,
 * only new records and report lines, compact descriptors), a step record
 * folds back into the state, and descriptors are expanded on load.
 *
 * @module
 */
import type { StopReason } from "../briefing/context_report.ts";
import {
  type ActionRecord,
  editedReport,
  type ExecutionReport,
} from "../briefing/report.ts";
import {
  SLICE_COUNTERS,
  type SliceCounter,
  type SliceSnapshot,
  type SliceState,
} from "../slice/run_state.ts";
import { compactArguments } from "../briefing/event.ts";
import {
  type CompactDescriptor,
  compactDescriptor,
  type ResultDescriptor,
} from "../store/result_store.ts";
import { previewOf } from "../store/preview.ts";
import {
  type CatalogueEntry,
  type JournalActionRecord as SessionRecord,
  snakeCase,
  type StepRecord,
} from "./_schema.ts";
import {
  TOOL_DECLARATIONS,
  type ToolDeclaration,
  toolDeclaration,
} from "./tool_policy.ts";

/** The tool (and, for inspections, the path) that produced a result. */
export interface ResultOrigin {
  tool: string;
  path?: string;
}

/** Adds which tool (and, for inspections, which path) produced each result. */
export function classify(
  records: readonly ActionRecord[],
  out: Map<string, ResultOrigin>,
): void {
  for (const record of records) {
    const report = record.report;
    if (report.kind === "inspected") {
      for (const file of report.files) {
        const id = file.descriptor?.result;
        if (id !== undefined) {
          out.set(id, { tool: record.action, path: file.path });
        }
      }
    } else if (report.kind === "tests_run") {
      const id = report.output.result;
      if (id !== undefined) out.set(id, { tool: record.action });
    }
  }
}

/** The declaration of a built-in tool, or `undefined` when it has none. */
export function declarationOf(tool: string): ToolDeclaration | undefined {
  return Object.hasOwn(TOOL_DECLARATIONS, tool)
    ? toolDeclaration(tool)
    : undefined;
}

/** The record as the session keeps it: compact arguments, no previews. */
function compactRecord(record: ActionRecord): SessionRecord {
  return {
    sequence: record.sequence,
    action: record.action,
    arguments:
      compactArguments(record.action, record.arguments, record.report) ??
        null,
    report: compactReport(record.report),
  };
}

/** The report of a record without previews. */
function compactReport(
  report: ExecutionReport,
): SessionRecord["report"] {
  switch (report.kind) {
    case "inspected":
      return {
        kind: report.kind,
        files: report.files.map((f) => ({
          path: f.path,
          ...(f.descriptor === undefined
            ? {}
            : { descriptor: compactDescriptor(f.descriptor) }),
          ...(f.missing === true ? { missing: true as const } : {}),
          ...(f.error === undefined ? {} : { error: { ...f.error } }),
        })),
      };
    case "edited": {
      // The record's type is the schema's, with mutable arrays.
      const { revision, files } = editedReport(report.revision, report.files);
      return { kind: "edited", revision, files: [...files] };
    }
    case "tests_run":
      return {
        kind: report.kind,
        exit_code: report.exit_code,
        timed_out: report.timed_out,
        tested_revision: report.tested_revision,
        output: compactDescriptor(report.output),
        confinement: report.confinement,
      };
    case "refused":
      return { kind: report.kind, code: report.code, reason: report.reason };
  }
}

/** Rebuilds full descriptors (previews from the restored bytes). */
export function expandRecord(
  record: ActionRecord,
  bytesById: ReadonlyMap<string, Uint8Array>,
): ActionRecord {
  const report = record.report;
  if (report.kind === "inspected") {
    return {
      ...record,
      report: {
        kind: "inspected",
        files: report.files.map((f) =>
          f.descriptor === undefined
            ? f
            : { ...f, descriptor: expandDescriptor(f.descriptor, bytesById) }
        ),
      },
    };
  }
  if (report.kind === "tests_run") {
    return {
      ...record,
      report: { ...report, output: expandDescriptor(report.output, bytesById) },
    };
  }
  return record;
}

/** Rebuilds full descriptors (previews from the restored bytes). */
function expandDescriptor(
  compact: CompactDescriptor,
  bytesById: ReadonlyMap<string, Uint8Array>,
): ResultDescriptor {
  const bytes = compact.result === undefined
    ? undefined
    : bytesById.get(compact.result);
  const preview = bytes === undefined
    ? {
      // Without restorable bytes the preview cannot be rebuilt: it is never stored.
      preview: "",
      preview_truncated: compact.utf8_bytes > 0,
      preview_start_byte: 0,
      preview_end_byte: 0,
    }
    : previewOf(bytes, compact.capture);
  const out: ResultDescriptor = {
    ...(compact.result === undefined ? {} : { result: compact.result }),
    ...(compact.sha256 === undefined ? {} : { sha256: compact.sha256 }),
    origin: compact.origin,
    capture: compact.capture,
    utf8_bytes: compact.utf8_bytes,
    ...preview,
    ...(compact.reference === undefined
      ? {}
      : { reference: compact.reference }),
    ...(compact.result_unavailable === undefined
      ? {}
      : { result_unavailable: compact.result_unavailable }),
  };
  return out;
}

/** The state a journal folds into: records still compact. */
export interface JournalState extends Omit<SliceState, "records"> {
  readonly records: SessionRecord[];
  readonly requests: SliceState["requests"][number][];
  /** How the run ended, or `null`. */
  readonly stop: StopReason | null;
}

/** The state before the first step. */
export function emptyState(): JournalState {
  return {
    ...Object.fromEntries(SLICE_COUNTERS.map((name) => [name, 0])) as {
      [K in SliceCounter]: number;
    },
    revision: null,
    notes: [],
    lastTurn: null,
    stop: null,
    records: [],
    requests: [],
  };
}

/** The step record of a snapshot, with what is new since `saved`. */
export function stepRecord(
  seq: number,
  snapshot: SliceSnapshot,
  saved: { readonly records: number; readonly requests: number },
  results: Record<string, CatalogueEntry>,
): Record<string, unknown> {
  return {
    seq,
    type: "step",
    counters: Object.fromEntries(
      SLICE_COUNTERS.map((name) => [snakeCase(name), snapshot[name]]),
    ),
    revision: snapshot.revision,
    notes: [...snapshot.notes],
    last_turn: snapshot.lastTurn,
    stop: snapshot.stop,
    records: snapshot.records.slice(saved.records).map(compactRecord),
    requests: snapshot.requests.slice(saved.requests),
    results,
  };
}

/** The state after a step record (its records are checked by the caller). */
export function foldStep(
  state: JournalState,
  record: StepRecord,
): JournalState {
  state.records.push(...record.records);
  state.requests.push(...record.requests);
  return {
    ...state,
    ...Object.fromEntries(
      SLICE_COUNTERS.map((name) => [name, record.counters[snakeCase(name)]]),
    ),
    revision: record.revision,
    notes: record.notes,
    lastTurn: record.last_turn,
    stop: record.stop,
  };
}
