/**
 * Compact events: the one-line JSON form of an action record that the
 * bounded policy shows in its recent-event tail and keeps in the archive.
 * Events carry sizes, digests and references, never bulk contents: an edit
 * shows `{path, utf8_bytes, sha256, omitted_from_context: true}` per file.
 *
 * @module
 */
import {
  type CompactDescriptor,
  compactDescriptor,
} from "../store/result_store.ts";
import { sha256Hex } from "../store/digest.ts";
import {
  type ActionRecord,
  type EditedFile,
  type EditedReport,
  editedReport,
  type ExecutionReport,
} from "./report.ts";
import { stableStringify } from "./turn_request.ts";
import { isPlainObject } from "../plain_object.ts";

/** An edited file as events show it: size and digest, body omitted. */
export interface CompactEditedFile extends EditedFile {
  /** Always `true`: the body is in the workspace, not in the context. */
  readonly omitted_from_context: true;
}

/** The compact report of an event. */
export type CompactReport =
  | {
    readonly kind: "inspected";
    readonly files: readonly ({
      readonly path: string;
      readonly missing?: true;
      readonly error?: { readonly code: string; readonly reason: string };
    })[];
  }
  | {
    readonly kind: "edited";
    readonly revision: string;
    readonly files: readonly CompactEditedFile[];
  }
  | {
    readonly kind: "tests_run";
    readonly exit_code: number;
    readonly timed_out: boolean;
    readonly tested_revision: string | null;
    readonly confinement: string;
  }
  | {
    readonly kind: "refused";
    readonly code: string;
    readonly reason: string;
  };

/** One event of wire-formats.md "Events (bounded policy)". */
export interface BriefingEvent {
  /** The action record's sequence; the archive id is `event-<sequence>`. */
  readonly sequence: number;
  /** The action name. */
  readonly action: string;
  /** Compact arguments: edit bodies replaced by size and digest. */
  readonly arguments: unknown;
  /** The compact report. */
  readonly report: CompactReport;
  /** Compact descriptors of the results the action stored. */
  readonly artifacts: readonly CompactDescriptor[];
}

const encoder = new TextEncoder();

/**
 * Builds the compact event of an action record.
 *
 * @param record The action record.
 * @returns The event, sharing no mutable state with the record.
 * @throws {TypeError} When the sequence is not a positive safe integer.
 *
 * @example
 * ```ts
 * import { toEvent } from "./event.ts";
 * import assert from "node:assert/strict";
 * const event = toEvent({
 *   sequence: 2,
 *   action: "repository.edit",
 *   arguments: { files: [{ path: "a.txt", contents: "new body" }] },
 *   report: { kind: "edited", revision: "rev-1-0123456789ab", files: [{ path: "a.txt", utf8_bytes: 8, sha256: "ab".repeat(32) }] },
 * });
 * assert.deepEqual(event.arguments, {
 *   files: [{ path: "a.txt", utf8_bytes: 8, sha256: "ab".repeat(32), omitted_from_context: true }],
 * });
 * ```
 */
export function toEvent(record: ActionRecord): BriefingEvent {
  if (!Number.isSafeInteger(record.sequence) || record.sequence < 1) {
    throw new TypeError(
      `Cannot make an event of sequence ${record.sequence}: sequences are positive integers`,
    );
  }
  const report = record.report;
  return {
    sequence: record.sequence,
    action: record.action,
    arguments: compactArguments(record.action, record.arguments, report),
    report: compactReport(report),
    artifacts: artifactsOf(report),
  };
}

/**
 * Serializes an event as one line of JSON: `sequence`, `action`,
 * `arguments`, `report`, `artifacts` in that order, nested objects with
 * sorted keys. These are also the bytes `$read_history` selects from.
 *
 * @param event The event.
 * @returns Compact JSON without a newline.
 *
 * @example
 * ```ts
 * import { serializeEvent } from "./event.ts";
 * import assert from "node:assert/strict";
 * const line = serializeEvent({
 *   sequence: 1,
 *   action: "tests.run",
 *   arguments: {},
 *   report: { kind: "refused", code: "no_tests", reason: "No test command" },
 *   artifacts: [],
 * });
 * assert.equal(line, '{"sequence":1,"action":"tests.run","arguments":{},"report":{"code":"no_tests","kind":"refused","reason":"No test command"},"artifacts":[]}');
 * ```
 */
export function serializeEvent(event: BriefingEvent): string {
  return `{"sequence":${event.sequence},"action":${
    JSON.stringify(event.action)
  },"arguments":${stableStringify(event.arguments ?? null)},"report":${
    stableStringify(event.report)
  },"artifacts":${stableStringify(event.artifacts)}}`;
}

/**
 * Replaces edit bodies in action arguments by their size and digest. For
 * an admitted edit the sizes and digests are the expanded ones from the
 * report; for a refused edit a literal body is measured as given and a
 * segment list is counted. Other actions' arguments are returned as given.
 *
 * @param action The action name.
 * @param args The arguments as the model gave them.
 * @param report The report, when known.
 * @returns Arguments safe to show again.
 *
 * @example
 * ```ts
 * import { compactArguments } from "./event.ts";
 * import assert from "node:assert/strict";
 * const args = compactArguments("repository.edit", {
 *   files: [{ path: "b.txt", contents: { segments: [{ literal: "x" }] } }],
 * });
 * assert.deepEqual(args, { files: [{ path: "b.txt", segments: 1, omitted_from_context: true }] });
 * ```
 */
export function compactArguments(
  action: string,
  args: unknown,
  report?: ExecutionReport,
): unknown {
  if (action !== "repository.edit" || !isPlainObject(args)) return args;
  const files = args["files"];
  if (!Array.isArray(files)) return args;
  const written = new Map<string, EditedFile>();
  if (report?.kind === "edited") {
    for (const f of report.files) written.set(f.path, f);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (key !== "files") out[key] = value;
  }
  out["files"] = files.map((file: unknown) => compactEditFile(file, written));
  return out;
}

function compactEditFile(
  file: unknown,
  written: ReadonlyMap<string, EditedFile>,
): unknown {
  if (!isPlainObject(file)) return file;
  const path = file["path"];
  const contents = file["contents"];
  const done = typeof path === "string" ? written.get(path) : undefined;
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(file)) {
    if (key !== "contents") rest[key] = value;
  }
  if (done !== undefined) {
    return {
      ...rest,
      utf8_bytes: done.utf8_bytes,
      sha256: done.sha256,
      omitted_from_context: true,
    };
  }
  if (typeof contents === "string") {
    const bytes = encoder.encode(contents);
    return {
      ...rest,
      utf8_bytes: bytes.byteLength,
      sha256: sha256Hex(bytes),
      omitted_from_context: true,
    };
  }
  if (isPlainObject(contents) && Array.isArray(contents["segments"])) {
    return {
      ...rest,
      segments: contents["segments"].length,
      omitted_from_context: true,
    };
  }
  return contents === undefined
    ? rest
    : { ...rest, omitted_from_context: true };
}

/** An edited report as the briefing shows it: sizes and digests, no bodies. */
export function compactEdited(
  report: EditedReport,
): Extract<CompactReport, { kind: "edited" }> {
  const { revision, files } = editedReport(report.revision, report.files);
  return {
    kind: "edited",
    revision,
    files: files.map((f) => ({ ...f, omitted_from_context: true })),
  };
}

function compactReport(report: ExecutionReport): CompactReport {
  switch (report.kind) {
    case "inspected":
      return {
        kind: "inspected",
        files: report.files.map((f) =>
          f.missing
            ? { path: f.path, missing: true }
            : f.error !== undefined
            ? {
              path: f.path,
              error: { code: f.error.code, reason: f.error.reason },
            }
            : { path: f.path }
        ),
      };
    case "edited":
      return compactEdited(report);
    case "tests_run":
      return {
        kind: "tests_run",
        exit_code: report.exit_code,
        timed_out: report.timed_out,
        tested_revision: report.tested_revision,
        confinement: report.confinement,
      };
    case "refused":
      return { kind: "refused", code: report.code, reason: report.reason };
  }
}

function artifactsOf(report: ExecutionReport): CompactDescriptor[] {
  switch (report.kind) {
    case "inspected": {
      const out: CompactDescriptor[] = [];
      for (const f of report.files) {
        if (f.descriptor !== undefined) {
          out.push(compactDescriptor(f.descriptor));
        }
      }
      return out;
    }
    case "tests_run":
      return [compactDescriptor(report.output)];
    default:
      return [];
  }
}
