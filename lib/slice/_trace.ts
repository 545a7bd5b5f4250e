/**
 * A slice's telemetry: the `invoke_agent loom` span around the run, a
 * `chat {model}` span per provider request, an `execute_tool {action}` span
 * per action that reached commission, and retirement checkpoints and test
 * runs as span events. The loop calls these few methods; what goes on the
 * spans (and, by `LOOM_OTEL_CONTENT`, which content) is decided here, and
 * nothing is built unless a span records.
 *
 * @module
 */
import type { ExecutionReport } from "../briefing/report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import type { ModelReply } from "../providers/model_provider.ts";
import type { ResultDescriptor, ResultStore } from "../store/result_store.ts";
import type { StepPhase } from "../reference/lookup_session.ts";
import {
  endAgentSpan,
  endModelCall,
  endToolSpan,
  type ModelCallSpan,
  type ModelTarget,
  modelTarget,
  startAgentSpan,
  startModelCall,
  startToolSpan,
  type ToolSpan,
} from "../telemetry/gen_ai.ts";
import { retirementEvent, testRunEvent } from "../telemetry/events.ts";
import type { ContentReference } from "../telemetry/content.ts";
import {
  type Context,
  contextOf,
  errorTypeOf,
  type Span,
  withSpan,
} from "../telemetry/tracing.ts";
import { messageOf } from "../errors.ts";

/** The agent name of every slice. */
const AGENT = "loom";

/** Where a run's results can be read back, when it has a session. */
export interface TraceSession {
  /** The session's name (`gen_ai.conversation.id`). */
  readonly id: string;
  /** The session root or redacted store location. */
  readonly location: string;
}

/** What a run's trace starts from. */
export interface TraceStart {
  /** The model spec. */
  readonly spec: string;
  /** The context policy. */
  readonly policy: string;
  /** The workspace. */
  readonly workspace: string;
  /** The session, when the run has one. */
  readonly session?: TraceSession;
  /** The checkpoints a resumed run starts from. */
  readonly checkpoints?: number;
}

/**
 * The telemetry of one slice run, recording: the `SliceTrace` of
 * `_slice_trace.ts` that `openSliceTrace` loads when something can record.
 */
export class RecordingSliceTrace {
  readonly #span: Span;
  readonly #context: Context;
  readonly #target: ModelTarget;
  readonly #workspace: string;
  readonly #session: TraceSession | undefined;
  #checkpoints: number;
  #action: ToolSpan | undefined;

  /**
   * Starts the agent span.
   *
   * @param start The model spec, policy, workspace, session and the
   *   checkpoints a resumed run starts from.
   */
  constructor(start: TraceStart) {
    this.#target = modelTarget(start.spec);
    this.#workspace = start.workspace;
    this.#session = start.session;
    this.#checkpoints = start.checkpoints ?? 0;
    this.#span = startAgentSpan({
      agent: AGENT,
      ...this.#target,
      policy: start.policy,
      ...(start.session === undefined ? {} : { sessionId: start.session.id }),
    });
    this.#context = contextOf(this.#span);
  }

  /**
   * Runs the slice with the agent span active (so Deno's `fetch` spans and
   * an SDK's spans nest under it).
   */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return withSpan(this.#span, fn);
  }

  /** Ends the agent span with how the run stopped. */
  end(stop: string, detail: string, steps: number): void {
    this.closeAction(undefined);
    endAgentSpan(this.#span, { stop, detail, steps });
  }

  /**
   * Notes a retirement checkpoint when the briefing made one while
   * building the latest request.
   */
  checkpoint(checkpoints: number, retired: number): void {
    if (checkpoints <= this.#checkpoints) return;
    this.#checkpoints = checkpoints;
    retirementEvent(this.#span, { retired, checkpoints });
  }

  /** Starts the span of one provider request. */
  modelCall(step: number, phase: StepPhase): ModelCallSpan {
    return startModelCall(this.#context, this.#target, { step, stage: phase });
  }

  /** Runs a provider request with its span active. */
  within<T>(call: ModelCallSpan | undefined, fn: () => Promise<T>): Promise<T> {
    return call === undefined ? fn() : withSpan(call.span, fn);
  }

  /** Ends a provider request's span: its reply, or its failure. */
  modelCallEnded(
    call: ModelCallSpan | undefined,
    request: TurnRequest,
    requestBytes: number,
    outcome: { readonly reply: ModelReply } | { readonly error: unknown },
  ): void {
    if (call === undefined) return;
    const reply = "reply" in outcome ? outcome.reply : undefined;
    const error = "error" in outcome ? outcome.error : undefined;
    const usage = reply?.usage ??
      (error as { usage?: ModelReply["usage"] | null } | undefined)?.usage;
    endModelCall(call, {
      requestBytes,
      ...(usage === undefined ? {} : { usage }),
      ...(reply?.response === undefined ? {} : { response: reply.response }),
      ...(error === undefined
        ? {}
        : { error: { type: errorTypeOf(error), message: messageOf(error) } }),
      content: () => ({
        system: request.system,
        messages: request.messages,
        tool: request.tool,
        ...(reply === undefined ? {} : { arguments: reply.arguments }),
      }),
    });
  }

  /** Starts the span of an action whose arguments arrived. */
  actionStarted(action: string, step: number): void {
    this.closeAction(undefined);
    this.#action = startToolSpan(this.#context, {
      tool: action,
      callId: `step-${step}`,
      agent: AGENT,
      step,
    });
  }

  /**
   * Ends the action's span with its report: `ok`, or `refused` with the
   * refusal's code as `error.type`; a test run adds its event.
   */
  actionEnded(
    args: unknown,
    report: ExecutionReport,
    results: ResultStore,
  ): void {
    const tool = this.#action;
    if (tool === undefined) return;
    this.#action = undefined;
    if (report.kind === "tests_run") {
      testRunEvent(tool.span, {
        exitCode: report.exit_code,
        timedOut: report.timed_out,
        revision: report.tested_revision,
      });
    }
    endToolSpan(tool, {
      outcome: report.kind === "refused" ? "refused" : "ok",
      ...(report.kind === "refused"
        ? { error: { type: report.code, message: report.reason } }
        : {}),
      content: {
        arguments: () => args,
        result: () => resultText(report, results),
        references: () => this.#references(report),
      },
    });
  }

  /** Ends the action's span with `completed` (`slice.complete`) or a failure. */
  closeAction(failure: unknown, outcome = "stopped"): void {
    const tool = this.#action;
    if (tool === undefined) return;
    this.#action = undefined;
    endToolSpan(tool, {
      outcome,
      ...(failure === undefined ? {} : {
        error: { type: errorTypeOf(failure), message: messageOf(failure) },
      }),
    });
  }

  /** The references of what an action stored, for `reference` mode. */
  #references(report: ExecutionReport): ContentReference[] {
    const out: ContentReference[] = [];
    const add = (d: ResultDescriptor | undefined, location?: string) => {
      if (d?.result === undefined || d.sha256 === undefined) return;
      out.push({
        result: d.result,
        sha256: d.sha256,
        bytes: d.utf8_bytes,
        media_type: "text/plain",
        ...(location === undefined ? {} : { location }),
      });
    };
    if (report.kind === "inspected") {
      // Re-readable from the workspace file while it is unchanged.
      for (const f of report.files) {
        add(f.descriptor, `${this.#workspace}/${f.path}`);
      }
    } else if (report.kind === "tests_run") {
      add(report.output, this.#session?.location);
    }
    return out;
  }
}

/** The text of what an action produced, for `full` mode. */
function resultText(
  report: ExecutionReport,
  results: ResultStore,
): string | undefined {
  const text = (d: ResultDescriptor | undefined) => {
    const stored = d?.result === undefined ? undefined : results.get(d.result);
    return stored === undefined
      ? undefined
      : new TextDecoder().decode(stored.bytes);
  };
  if (report.kind === "inspected") {
    return JSON.stringify(
      report.files.map((f) => ({
        path: f.path,
        ...(f.descriptor === undefined ? {} : { text: text(f.descriptor) }),
        ...(f.missing ? { missing: true } : {}),
        ...(f.error === undefined ? {} : { error: f.error.code }),
      })),
    );
  }
  if (report.kind === "tests_run") {
    return JSON.stringify({
      exit_code: report.exit_code,
      timed_out: report.timed_out,
      output: text(report.output),
    });
  }
  return JSON.stringify(report);
}
