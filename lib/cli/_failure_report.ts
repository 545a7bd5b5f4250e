/**
 * The context report of a `loom run` that fails after its arguments were
 * parsed but before its slice started (a missing workspace, an unreadable
 * `--intent-file`, a bad `--session` root or persistence config, a session
 * that cannot be resumed, a model that cannot be used): the failure and no
 * requests, as a `suspended` outcome (`provider_error` for the model). A
 * started slice writes its own report.
 *
 * @module
 */
import type { ContextPolicy } from "../briefing/briefing.ts";
import { ContextReportBuilder } from "../briefing/context_report.ts";
import { isLoomError, messageOf } from "../errors.ts";
import { ProviderError } from "../providers/provider_error.ts";

/** Writes the report of a run that failed before its slice started. */
export interface StartupReport {
  /** The policy the report names (the default until a session says otherwise). */
  policy: ContextPolicy;
  /** The model spec the report names, once known. */
  model: string | undefined;
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
 * @param model The model spec the run asked for, when known.
 * @returns The report writer; its clock starts now.
 */
export function startupReport(
  path: string | undefined,
  policy: ContextPolicy,
  model?: string,
): StartupReport {
  const started = performance.now();
  const report: StartupReport = {
    policy,
    model,
    fail: async (error: unknown): Promise<never> => {
      if (path !== undefined) {
        const message = messageOf(error);
        const code = isLoomError(error) && error.code !== "usage"
          ? `${error.code}: `
          : "";
        const built = new ContextReportBuilder(report.policy).build(
          {
            // A model that cannot be used is a provider error, as in a slice.
            stop: error instanceof ProviderError
              ? "provider_error"
              : "suspended",
            detail: `The slice did not start: ${code}${message}`,
          },
          {
            modelCalls: 0,
            elapsedMs: Math.round((performance.now() - started) * 1000) / 1000,
            ...(report.model === undefined ? {} : { model: report.model }),
          },
        );
        try {
          await Deno.writeTextFile(path, JSON.stringify(built, null, 2) + "\n");
        } catch {
          // The checks before the start test this path; when it cannot be
          // written, the error being reported is about it (or names worse).
        }
      }
      throw error;
    },
  };
  return report;
}
