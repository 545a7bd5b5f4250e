/**
 * The two model stages of a step. Each stage asks for one forced tool call
 * and answers lookups until the model gives a real answer or exceeds the
 * stage's lookup budget.
 *
 * @module
 */
import { messageOf } from "../errors.ts";
import type { Briefing } from "../briefing/briefing.ts";
import type {
  AddRequestOptions,
  ContextReportBuilder,
  RequestPart,
} from "../briefing/context_report.ts";
import type { TurnRequest, TurnTool } from "../briefing/turn_request.ts";
import type { ModelProvider, ModelReply } from "../providers/model_provider.ts";
import { ProviderError } from "../providers/provider_error.ts";
import { MAX_REPLY_DEPTH, nestsDeeperThan } from "../providers/reply_depth.ts";
import {
  isLookupRequest,
  LookupBudgetError,
  LookupSession,
} from "../reference/lookup_session.ts";
import type { ResultStore } from "../store/result_store.ts";
import { type SliceStoppedError, stopped } from "./_stopped.ts";
import type { StepPhase } from "../reference/lookup_session.ts";
import type { LastTurn } from "./run_state.ts";
import { stepAnswer } from "./_tools.ts";
import type { SliceTrace } from "./_slice_trace.ts";

/** Counters shared by every stage of a run. */
export interface RunCounters {
  /**
   * Calls that returned an answer: where a resumed recorded model continues.
   * Every call made, failed ones included, is a report line.
   */
  modelCalls: number;
  modelMs: number;
  retrievals: number;
  bytesTotal: number;
  bytesPeak: number;
  /** Request bytes of the latest call (for progress lines). */
  lastRequestBytes: number;
  /** Calls of the current step (for progress lines). */
  stepCalls: number;
  /** Protocol failures in a row; any usable reply resets it. */
  protocolFailures: number;
  /** Replies whose `step` argument was a JSON string, parsed. */
  argumentsReparsed: number;
}

/** What every stage needs. */
export interface StageContext {
  readonly provider: ModelProvider;
  readonly briefing: Briefing;
  readonly results: ResultStore;
  readonly report: ContextReportBuilder;
  readonly counters: RunCounters;
  readonly signal: AbortSignal | undefined;
  /** The step being taken (the report's lines carry it). */
  readonly step: () => number;
  /** Told about every request built (session snapshots rebuild the last one). */
  readonly onRequest?: (turn: TurnRecord) => void;
  /**
   * Called every `waitingNoticeMs` while a model call is in flight, with the
   * time waited so far.
   */
  readonly onWaiting?: (phase: StepPhase, elapsedMs: number) => void;
  /** Interval of `onWaiting` in milliseconds. */
  readonly waitingNoticeMs: number;
  /** The run's telemetry. */
  readonly trace: SliceTrace;
}

/** A request described without its text: a `LastTurn` before its step is known. */
export type TurnRecord = Omit<LastTurn, "sequence">;

/** How a stage ended. */
export type StageOutcome =
  | { readonly kind: "answer"; readonly value: unknown }
  | { readonly kind: "budget_exhausted"; readonly detail: string }
  /** The reply broke the protocol; the step is refused with this error's message. */
  | { readonly kind: "protocol"; readonly error: ProviderError };

/** Options of {@linkcode runStage}. */
export interface StageOptions {
  /** The step (1-based), for telemetry. */
  readonly step: number;
  readonly phase: StepPhase;
  readonly tool: TurnTool;
  readonly candidates: readonly string[];
  readonly notes: readonly string[];
}

/**
 * Runs one stage: builds a request, calls the model, answers lookups, until
 * an answer arrives or a ninth lookup exceeds the budget.
 *
 * @throws {SliceStoppedError} On provider failure, capacity or abort.
 */
export async function runStage(
  ctx: StageContext,
  options: StageOptions,
): Promise<StageOutcome> {
  const session = new LookupSession({
    results: ctx.results,
    ...(ctx.briefing.history === undefined
      ? {}
      : { history: ctx.briefing.history }),
    stage: options.phase,
  });
  const answers: unknown[] = [];
  const asked: unknown[] = [];
  try {
    while (true) {
      const request = buildRequest(ctx, options, answers);
      ctx.onRequest?.({
        phase: options.phase,
        candidates: options.candidates,
        notes: options.notes,
        lookups: [...asked],
        retired: ctx.briefing.lastTurn?.retired ?? 0,
        results: ctx.results.count,
      });
      const reply = await callModel(ctx, options, request);
      if (reply instanceof ProviderError) {
        return { kind: "protocol", error: reply };
      }
      const answer = unwrapStep(ctx, request, reply);
      if (answer instanceof ProviderError) {
        return { kind: "protocol", error: answer };
      }
      if (!isLookupRequest(answer)) {
        return { kind: "answer", value: answer };
      }
      try {
        answers.push(await session.answer(answer));
        asked.push(answer);
      } catch (error) {
        if (error instanceof LookupBudgetError) {
          return {
            kind: "budget_exhausted",
            detail: `A ninth lookup in ${
              options.phase === "selection"
                ? "selection"
                : "argument generation"
            } exceeded the budget of 8 lookups per stage`,
          };
        }
        throw error;
      }
    }
  } finally {
    ctx.counters.retrievals += session.retrievals;
  }
}

/**
 * The stage's answer inside a reply (see {@linkcode stepAnswer}): a `step`
 * that came as a JSON string is counted, and must not nest deeper than the
 * limit a reply's arguments have.
 */
function unwrapStep(
  ctx: StageContext,
  request: TurnRequest,
  reply: ModelReply,
): unknown {
  const { value, reparsed } = stepAnswer(reply.arguments);
  if (!reparsed) return value;
  ctx.counters.argumentsReparsed += 1;
  if (nestsDeeperThan(value, MAX_REPLY_DEPTH)) {
    ctx.counters.protocolFailures += 1;
    return new ProviderError(
      "provider_protocol",
      `The ${request.tool_choice.name} call's step nests deeper than ${MAX_REPLY_DEPTH} levels; send flat arguments as the tool's schema describes`,
      { problem: "too_deep", usage: reply.usage },
    );
  }
  return value;
}

/**
 * Throws the `interrupted` stop when the run's signal has fired.
 *
 * @throws {SliceStoppedError} `interrupted`, naming the signal's reason.
 */
export function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw interrupted(signal);
}

function interrupted(signal: AbortSignal): SliceStoppedError {
  const reason = signal.reason;
  const why = reason instanceof Error
    ? reason.message
    : typeof reason === "string"
    ? reason
    : "the embedder aborted the run";
  return stopped("interrupted", `The run was interrupted: ${why}`, {
    cause: reason,
  });
}

function buildRequest(
  ctx: StageContext,
  options: StageOptions,
  answers: readonly unknown[],
): TurnRequest {
  stopIfAborted(ctx.signal);
  try {
    return ctx.briefing.request({
      phase: options.phase,
      tool: options.tool,
      candidates: options.candidates,
      lookupAnswers: answers,
      notes: options.notes,
    });
  } catch (error) {
    throw capacityStop(error) ?? error;
  }
}

/**
 * One model call: a usable reply, or a protocol failure as a value (the
 * call counts either way); every other provider failure stops the run.
 */
async function callModel(
  ctx: StageContext,
  options: StageOptions,
  request: TurnRequest,
): Promise<ModelReply | ProviderError> {
  const counters = ctx.counters;
  ctx.trace.checkpoint(
    ctx.briefing.checkpoints,
    ctx.briefing.lastTurn?.retired ?? 0,
  );
  const span = ctx.trace.modelCall(options.step, options.phase);
  const started = performance.now();
  const onWaiting = ctx.onWaiting;
  const notice = onWaiting === undefined ? undefined : setInterval(
    () => onWaiting(options.phase, performance.now() - started),
    ctx.waitingNoticeMs,
  );
  let reply: ModelReply;
  try {
    reply = await ctx.trace.within(span, () =>
      ctx.provider.call({
        phase: options.phase,
        tool: options.phase === "selection"
          ? "select_action"
          : "action_arguments",
        request,
        ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
      }));
    if (nestsDeeperThan(reply.arguments, MAX_REPLY_DEPTH)) {
      throw new ProviderError(
        "provider_protocol",
        `The ${request.tool_choice.name} call's arguments nest deeper than ${MAX_REPLY_DEPTH} levels; send flat arguments as the tool's schema describes`,
        { problem: "too_deep", usage: reply.usage },
      );
    }
  } catch (error) {
    clearInterval(notice);
    if (error instanceof ProviderError && error.code === "provider_contract") {
      // Refused before sending: no call was made, none is counted.
      ctx.trace.modelCallEnded(span, request, 0, { error });
      throw providerStop(error);
    }
    const elapsed = performance.now() - started;
    counters.modelMs += elapsed;
    counters.stepCalls += 1;
    const usage = error instanceof ProviderError ? error.usage : null;
    const line = ctx.report.addRequest(request, {
      phase: options.phase,
      elapsedMs: elapsed,
      ...partsOf(ctx.provider, request),
      ...turnFigures(ctx),
      ...(usage === null ? {} : { usage }),
      finalUsage: false,
    });
    count(counters, line.request_bytes);
    ctx.trace.modelCallEnded(span, request, line.request_bytes, { error });
    if (ctx.signal?.aborted) throw interrupted(ctx.signal);
    if (error instanceof ProviderError && error.code === "provider_protocol") {
      // The reply came (a recording moved on): a resume continues after it.
      counters.modelCalls += 1;
      counters.protocolFailures += 1;
      return error;
    }
    throw providerStop(error);
  }
  clearInterval(notice);
  const elapsed = performance.now() - started;
  counters.modelMs += elapsed;
  counters.modelCalls += 1;
  counters.stepCalls += 1;
  counters.protocolFailures = 0;
  const line = ctx.report.addRequest(request, {
    phase: options.phase,
    elapsedMs: elapsed,
    ...partsOf(ctx.provider, request),
    ...turnFigures(ctx),
    usage: reply.usage,
    finalUsage: reply.final_usage,
  });
  count(counters, line.request_bytes);
  ctx.trace.modelCallEnded(span, request, line.request_bytes, { reply });
  return reply;
}

/** The `provider_error` stop of a failed call (`provider_failed`: not a ProviderError). */
function providerStop(error: unknown): SliceStoppedError {
  const code = error instanceof ProviderError ? error.code : "provider_failed";
  const message = messageOf(error);
  return stopped("provider_error", `${code}: ${clipDetail(message)}`, {
    cause: error,
  });
}

/** Keeps a foreign error's message to one short line. */
function clipDetail(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** The report's figures of the request the briefing built last. */
function turnFigures(
  ctx: StageContext,
): Pick<AddRequestOptions, "step" | "checkpoint" | "bytesByPart"> {
  const turn = ctx.briefing.lastTurn;
  return {
    step: ctx.step(),
    checkpoint: (turn?.retired ?? 0) > 0,
    ...(turn === undefined ? {} : { bytesByPart: turn.parts }),
  };
}

/** The provider's body parts, for prefix figures in the provider's order. */
export function partsOf(
  provider: ModelProvider,
  request: TurnRequest,
): { parts?: readonly RequestPart[] } {
  const parts = provider.requestParts?.(request);
  return parts === undefined ? {} : { parts };
}

function count(counters: RunCounters, bytes: number): void {
  counters.bytesTotal += bytes;
  counters.bytesPeak = Math.max(counters.bytesPeak, bytes);
  counters.lastRequestBytes = bytes;
}

/**
 * Maps the briefing's capacity failures (a full archive, a bounded request
 * whose mandatory content cannot fit) to a `capacity` stop.
 */
export function capacityStop(error: unknown): SliceStoppedError | undefined {
  if (!(error instanceof RangeError)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (code !== "capacity" && code !== "request_too_large") return undefined;
  return stopped("capacity", `${code}: ${error.message}`, {
    cause: error,
  });
}
