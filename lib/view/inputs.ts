/**
 * The files a viewer reads besides sessions: report files (a context
 * report of either version, or a gateway's `--report`), recordings (the
 * model's replies) and request logs — each checked by its own reader, and
 * grouped into runs.
 *
 * @module
 */
import { z } from "zod";
import type { ContextReport } from "../briefing/context_report.ts";
import { readContextReport } from "../briefing/context_report_schema.ts";
import { LoomError, messageOf } from "../errors.ts";
import type { SessionReader } from "../persist/session_reader.ts";
import { RecordedProvider } from "../providers/recorded_provider.ts";
import { describeIssue } from "../reference/schema.ts";
import type { RequestLogReader } from "./request_log_reader.ts";

/** An input file the viewer cannot use. */
export class ViewInputError extends LoomError.TypeError<"ViewInputError"> {}

/** Per-tool figures of a gateway (`loom mcp --servers … --report FILE`). */
export interface GatewayToolFigures {
  /** Calls. */
  readonly calls: number;
  /** Calls answered with a descriptor (offloaded to the store). */
  readonly offloaded: number;
  /** Serialized bytes received from the upstream. */
  readonly bytes_received: number;
  /** Serialized bytes sent to the host. */
  readonly bytes_to_host: number;
}

/** A gateway's report file. */
export interface GatewayReport {
  /** `loom-gateway-report/1`. */
  readonly format: "loom-gateway-report/1";
  /** Figures by tool: `server/tool` for upstream tools, retrieval tools by name. */
  readonly tools: Readonly<Record<string, GatewayToolFigures>>;
}

const count = z.number().int().nonnegative();
const gatewaySchema: z.ZodType<GatewayReport, unknown> = z.strictObject({
  format: z.literal("loom-gateway-report/1"),
  tools: z.record(
    z.string(),
    z.strictObject({
      calls: count,
      offloaded: count,
      bytes_received: count,
      bytes_to_host: count,
    }),
  ),
});

/** A report file: a context report or a gateway report. */
export type ReportFile =
  | { readonly kind: "context"; readonly report: ContextReport }
  | { readonly kind: "gateway"; readonly report: GatewayReport };

/**
 * Reads a report file of either kind (told apart by the gateway report's
 * `format`).
 *
 * @param path The file.
 * @returns The report.
 * @throws {ViewInputError} `view_input_invalid` when it cannot be read or
 *   is not a gateway report as it claims.
 * @throws {ContextReportError} When it is not a context report.
 *
 * @example
 * ```ts
 * import { readReportFile } from "./inputs.ts";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, JSON.stringify({ format: "loom-gateway-report/1", tools: {} }));
 * assert.equal((await readReportFile(path)).kind, "gateway");
 * await Deno.remove(path);
 * ```
 */
export async function readReportFile(path: string): Promise<ReportFile> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new ViewInputError(
      "view_input_invalid",
      `Cannot read the report ${path}: ${messageOf(error)}`,
      { cause: error },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // readContextReport names the JSON error.
    return { kind: "context", report: readContextReport(text, path) };
  }
  if ((json as { format?: unknown })?.format === "loom-gateway-report/1") {
    const parsed = gatewaySchema.safeParse(json);
    if (!parsed.success) {
      throw new ViewInputError(
        "view_input_invalid",
        `${path} is not a gateway report: ${describeIssue(parsed.error)}`,
      );
    }
    return { kind: "gateway", report: parsed.data };
  }
  return { kind: "context", report: readContextReport(text, path) };
}

/** One reply of a recording: what the model answered. */
export interface RecordedReply {
  /** `selection` or `arguments`. */
  readonly phase: string;
  /** The tool call's arguments. */
  readonly arguments: unknown;
}

/**
 * Reads a recording's replies, checked by the replay's own reader.
 *
 * @param path A `loom-recording/1` file.
 * @returns The replies, in order.
 * @throws {ProviderError} `recording_invalid` when it is not a recording.
 */
export async function readRecordingFile(
  path: string,
): Promise<RecordedReply[]> {
  RecordedProvider.load(path);
  const { calls } = JSON.parse(await Deno.readTextFile(path)) as {
    calls: { phase: string; arguments: unknown }[];
  };
  return calls.map((c) => ({ phase: c.phase, arguments: c.arguments }));
}

/**
 * One run the viewer shows: a session, a report file, a recording, or a
 * report with the recording and request log given after it.
 */
export interface ViewSource {
  /** `r1`, `r2`, … in the order given. */
  readonly id: string;
  /** What the run is called: a session's name or a file's. */
  readonly name: string;
  /** Where it lives: a path or `store#name`. */
  readonly where: string;
  /** A session, read-only. */
  readonly session?: SessionReader;
  /** A report file. */
  readonly report?: ReportFile;
  /** The model's replies. */
  readonly replies?: readonly RecordedReply[];
  /** The requests as sent. */
  readonly requests?: RequestLogReader;
}
