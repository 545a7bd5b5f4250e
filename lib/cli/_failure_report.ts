/**
 * The context report of a `loom run` that fails after its arguments were
 * parsed but before its slice started (a missing workspace, an unreadable
 * `--intent-file`, a bad `--session` root or persistence config, a session
 * that cannot be resumed): the failure and no requests. A started slice
 * writes its own report.
 *
 * @module
 */
import { ContextReportBuilder } from "../briefing/context_report.ts";
import type { CliIo } from "./_io.ts";

/** Writes the report of a run that failed before its slice started. */
export interface StartupReport {
  /** The policy the report names (the default until a session says otherwise). */
  policy: "legacy" | "bounded";
  /**
   * Writes the report when one was asked for, then rejects with `error`, so
   * callers can `throw await report.fail(error)` or `.catch(report.fail)`.
   */
  readonly fail: (error: unknown) => Promise<never>;
}

/**
 * Prepares the startup-failure report of one `loom run`.
 *
 * @param path The `--context-report` path, if any.
 * @param policy The context policy the run asked for.
 * @param io Where a report that cannot be written is mentioned.
 * @returns The report writer; its clock starts now.
 */
export function startupReport(
  path: string | undefined,
  policy: "legacy" | "bounded",
  io: CliIo,
): StartupReport {
  const started = performance.now();
  const report: StartupReport = {
    policy,
    fail: async (error: unknown): Promise<never> => {
      if (path !== undefined) {
        const message = error instanceof Error ? error.message : String(error);
        const built = new ContextReportBuilder(report.policy).build(
          {
            stop: "suspended",
            detail: `The slice did not start: ${message}`,
          },
          {
            modelCalls: 0,
            elapsedMs: Math.round((performance.now() - started) * 1000) / 1000,
          },
        );
        try {
          await Deno.writeTextFile(path, JSON.stringify(built, null, 2) + "\n");
        } catch (writeError) {
          io.err(
            `loom run: cannot write --context-report ${path}: ${
              writeError instanceof Error
                ? writeError.message
                : String(writeError)
            }\n`,
          );
        }
      }
      throw error;
    },
  };
  return report;
}
