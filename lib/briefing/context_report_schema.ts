/**
 * The closed schema of the context report and its reader: the one shape of
 * a report line, shared by the session journal (which keeps the lines of a
 * stopped run) and `loom report` (which renders a report file).
 *
 * @module
 */
import { z } from "zod";
import { LoomError, mapError, messageOf } from "../errors.ts";
import { describeIssue } from "../reference/schema.ts";
import {
  CONTEXT_REPORT_VERSION,
  type ContextReport,
  type ContextReportRequest,
  type StopReason,
} from "./context_report.ts";
import { PART_NAMES, type PartName } from "./part_bytes.ts";

/** A context report file that cannot be read as one. */
export class ContextReportError
  extends LoomError.TypeError<"ContextReportError"> {}

const count = z.number().int().nonnegative();
const nullableCount = count.nullable();

const partBytes = z.strictObject(
  Object.fromEntries(PART_NAMES.map((name) => [name, count])) as Record<
    PartName,
    typeof count
  >,
);

/**
 * One request line of a context report. `first_divergence` reads as `null`
 * when absent (lines written before it existed); the fields of version 2
 * (`step`, `checkpoint`, `bytes_by_part`, `cache_order_bytes`,
 * `cache_breakpoints`) stay absent in lines of version 1.
 */
export const contextReportRequestSchema: z.ZodType<
  ContextReportRequest,
  unknown
> = z.strictObject({
  phase: z.enum(["selection", "arguments"]),
  request_bytes: count,
  prefix_stable_bytes: count,
  first_divergence: z.strictObject({ offset: count, part: z.string() })
    .nullable().default(null),
  elapsed_ms: z.number().nonnegative(),
  final_usage: z.boolean(),
  input_tokens: nullableCount,
  cache_read_tokens: nullableCount,
  cache_write_tokens: nullableCount,
  output_tokens: nullableCount,
  step: count.exactOptional(),
  checkpoint: z.boolean().exactOptional(),
  bytes_by_part: partBytes.exactOptional(),
  cache_order_bytes: count.exactOptional(),
  cache_breakpoints: z.array(count).exactOptional(),
});

/** Every {@linkcode StopReason}: how a report and a session journal end. */
export const STOP_REASONS = [
  "completed",
  "step_budget",
  "refused",
  "suspended",
  "capacity",
  "confinement_unavailable",
  "provider_error",
  "interrupted",
] as const satisfies readonly StopReason[];

const revision = z.string().nullable();

const reportSchema: z.ZodType<ContextReport, unknown> = z.strictObject({
  version: z.literal(CONTEXT_REPORT_VERSION, {
    error:
      `must be ${CONTEXT_REPORT_VERSION} (or absent, version 1); a newer Loom wrote this report`,
  }).exactOptional(),
  policy: z.enum(["legacy", "bounded"]),
  outcome: z.strictObject({ stop: z.enum(STOP_REASONS), detail: z.string() }),
  requests: z.array(contextReportRequestSchema),
  checkpoints: count,
  retrievals: count,
  arguments_reparsed: count,
  model_calls: count,
  elapsed_ms: z.number().nonnegative(),
  model: z.string().nullable(),
  steps: count,
  revision,
  tests_validate_latest_revision: z.boolean(),
  tests: z.array(z.strictObject({
    step: count,
    exit_code: z.number().int(),
    timed_out: z.boolean(),
    revision,
  })),
});

/**
 * Reads a context report file's text.
 *
 * @param text The file's text.
 * @param source The file name, for messages.
 * @returns The report.
 * @throws {ContextReportError} `report_invalid` naming the file and the
 *   first key at fault, when the text is not JSON or not a context report.
 *
 * @example
 * ```ts
 * import { ContextReportBuilder } from "./context_report.ts";
 * import { readContextReport } from "./context_report_schema.ts";
 * import assert from "node:assert/strict";
 * const report = new ContextReportBuilder("bounded").build(
 *   { stop: "step_budget", detail: "Out of steps" },
 *   { steps: 3, elapsedMs: 5 },
 * );
 * assert.deepEqual(readContextReport(JSON.stringify(report), "r.json"), report);
 * assert.throws(() => readContextReport("{}", "r.json"), /r\.json is not a context report/);
 * ```
 */
export function readContextReport(text: string, source: string): ContextReport {
  const json: unknown = mapError(
    () => JSON.parse(text),
    (error) =>
      new ContextReportError(
        "report_invalid",
        `Context report ${source} is not JSON: ${messageOf(error)}`,
        { cause: error },
      ),
  );
  const parsed = reportSchema.safeParse(json);
  if (!parsed.success) {
    throw new ContextReportError(
      "report_invalid",
      `Context report ${source} is not a context report: ${
        describeIssue(parsed.error)
      }`,
    );
  }
  return parsed.data;
}
