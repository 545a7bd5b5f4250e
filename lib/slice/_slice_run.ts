/**
 * The step loop of a slice: selection → arguments → expansion → commission
 * → execution → report, with a session snapshot after every acknowledged step.
 * What the run has done lives in its ledger (`_run_ledger.ts`); performing
 * actions in `_execute.ts`; the outcome and report in `_finish.ts`.
 *
 * @module
 */
import type { Briefing, ContextPolicy } from "../briefing/briefing.ts";
import { ContextReportBuilder } from "../briefing/context_report.ts";
import type { ExecutionReport } from "../briefing/report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import type { ModelProvider } from "../providers/model_provider.ts";
import type { ProviderError } from "../providers/provider_error.ts";
import { ResultStore } from "../store/result_store.ts";
import { ResumedResultStore } from "./_resumed_store.ts";
import { isLoomError, messageOf } from "../errors.ts";
import { commission } from "./commission.ts";
import { protectedPaths } from "./_setup.ts";
import { admissibleActions } from "./_schema.ts";
import {
  type Effects,
  performAction,
  surveyBaseline,
  unkeptDetail,
} from "./_execute.ts";
import { expandEdit } from "./_expand_edit.ts";
import { clipMessage } from "./_clip.ts";
import { sliceOutcome, writeContextReport } from "./_finish.ts";
import { sliceBriefing } from "./first_request.ts";
import { progressLine, tookEffect, waitingNotice } from "./_progress.ts";
import type { RunOptions, SliceRequest, StepProgress } from "./request.ts";
import { restoreContext } from "./_restore.ts";
import { parseSelection } from "./_selection.ts";
import { runSignal, sliceProvider, startExecutor } from "./_setup.ts";
import { runStage, type StageContext, stopIfAborted } from "./_stages.ts";
import { SliceStoppedError, stopped } from "./_stopped.ts";
import { stepTool } from "./_tools.ts";
import type { SliceOutcome } from "./outcome.ts";
import type { StopReason } from "../briefing/context_report.ts";
import {
  type SessionHookParts,
  sessionHookParts,
  type SliceResume,
  type SliceSnapshot,
  type SliceState,
} from "./run_state.ts";
import type { StepPhase } from "../reference/lookup_session.ts";
import {
  openSliceTrace,
  QUIET_TRACE,
  type SliceTrace,
  type TraceStart,
} from "./_slice_trace.ts";
import type { TurnTool } from "../briefing/turn_request.ts";
import {
  dropUnfinishedStep,
  ledgerState,
  newLedger,
  recordStep,
  refuseStep,
  restoreLedger,
  type RunLedger,
  type StepSinks,
} from "./_run_ledger.ts";

const DEFAULT_MAX_REFUSALS = 8;
/** Replies in a row that break the protocol before the run stops. */
export const MAX_PROTOCOL_FAILURES = 3;
const DEFAULT_WAITING_NOTICE_MS = 5_000;

/** What every step of a run works with. */
interface StepSetting {
  readonly ctx: StageContext;
  readonly effects: Effects;
  /** The workspace's real path. */
  readonly workspace: string;
  /** The run's one tool. */
  readonly tool: TurnTool;
  readonly testConfigured: boolean;
  readonly protect: ReturnType<typeof protectedPaths> | null;
  /**
   * The survey of the tree the latest revision names, the first time an
   * action is about to run (`null` after, or without a test command).
   */
  readonly baseline: () => Promise<void> | null;
}

/** One run of a slice: the step loop; its state is the ledger's. */
export class SliceRun {
  readonly #request: SliceRequest;
  readonly #options: RunOptions;
  readonly #session: SessionHookParts | undefined;
  readonly #policy: ContextPolicy;
  readonly #report: ContextReportBuilder;
  readonly #started = performance.now();
  readonly #results: ResultStore;
  /** Steps, records, refusals, notes, counters and workspace facts. */
  readonly #ledger: RunLedger = newLedger();
  #briefing: Briefing | undefined;
  /** The last step with a progress line, and where the current step is. */
  #progressed = 0;
  #stage: { phase: StepPhase; action: string | null } = {
    phase: "selection",
    action: null,
  };
  #summary: string | null = null;
  #snapshotted = -1;
  /** The embedder's signal joined with the run timeout. */
  #signal: AbortSignal | undefined;
  #testConfinement: SliceOutcome["test_confinement"] = null;
  readonly #traceStart: TraceStart;
  #trace: SliceTrace = QUIET_TRACE;

  /**
   * Prepares a run; nothing starts until {@linkcode SliceRun.execute}.
   *
   * @param request The validated request.
   * @param options The validated options.
   * @param policy The context policy.
   */
  constructor(
    request: SliceRequest,
    options: RunOptions,
    policy: ContextPolicy,
  ) {
    this.#request = request;
    this.#options = options;
    this.#policy = policy;
    this.#report = new ContextReportBuilder(policy);
    this.#session = options.session === undefined
      ? undefined
      : sessionHookParts(options.session);
    this.#results = this.#session?.resume === undefined
      ? new ResultStore()
      : new ResumedResultStore();
    const provider = request.provider;
    this.#traceStart = {
      spec: typeof provider === "string" ? provider : provider.spec,
      policy,
      workspace: request.workspace,
      ...(this.#session?.telemetry === undefined
        ? {}
        : { session: this.#session.telemetry }),
      checkpoints: this.#session?.resume?.checkpoints ?? 0,
    };
  }

  /**
   * Runs the slice to its end and writes the context report.
   *
   * @returns How the slice ended.
   */
  async execute(): Promise<SliceOutcome> {
    let outcome: SliceOutcome | undefined;
    this.#trace = await openSliceTrace(this.#traceStart);
    try {
      outcome = await this.#trace.run(() => this.#runAndReport());
      return outcome;
    } finally {
      this.#trace.end(
        outcome?.stop ?? "internal",
        outcome?.detail ?? "Internal failure",
        this.#ledger.steps,
      );
    }
  }

  async #runAndReport(): Promise<SliceOutcome> {
    let stop: StopReason;
    let detail: string;
    let failure: unknown;
    const { signal, timer } = runSignal(this.#options);
    this.#signal = signal;
    try {
      const provider = sliceProvider(this.#request, this.#options);
      const workspace = await Deno.realPath(this.#request.workspace);
      const effects = await startExecutor(
        this.#request,
        workspace,
        this.#options,
      );
      this.#testConfinement = effects.testConfinement ?? null;
      try {
        ({ stop, detail } = await this.#loop(provider, effects, workspace));
      } finally {
        await effects.close();
      }
    } catch (error) {
      this.#trace.closeAction(error);
      if (error instanceof SliceStoppedError) {
        stop = error.stop;
        detail = error.message;
        if (stop === "interrupted") dropUnfinishedStep(this.#ledger);
        // The step that failed gets its progress line too.
        const steps = this.#ledger.steps;
        if (steps > this.#progressed) {
          const { phase, action } = this.#stage;
          this.#progress(steps, phase, action, `stopped (${stop})`);
        }
      } else {
        stop = "suspended";
        detail = `Internal failure: ${messageOf(error)}`;
        failure = error;
      }
    }
    clearTimeout(timer);
    const outcome = sliceOutcome(stop, detail, this.#state(), {
      policy: this.#policy,
      testConfinement: this.#testConfinement,
      summary: this.#summary,
      elapsedMs: performance.now() - this.#started,
      contextReport: this.#options.contextReport ?? null,
    });
    if (this.#briefing !== undefined && this.#session !== undefined) {
      try {
        await this.#snapshot(stop);
      } catch (error) {
        failure ??= error;
      }
    }
    await this.#writeReport(outcome);
    if (failure !== undefined) throw failure;
    return outcome;
  }

  async #loop(
    provider: ModelProvider,
    effects: Effects,
    workspace: string,
  ): Promise<{ stop: StopReason; detail: string }> {
    const request = this.#request;
    const ledger = this.#ledger;
    const bounded = this.#policy === "bounded";
    const briefing = sliceBriefing(
      request,
      this.#options,
      this.#policy,
      this.#results,
    );
    this.#briefing = briefing;
    const onWaiting = waitingNotice(request, this.#options, () => ledger.steps);
    const ctx: StageContext = {
      provider,
      briefing,
      results: this.#results,
      report: this.#report,
      counters: ledger.counters,
      signal: this.#signal,
      step: () => ledger.steps,
      onRequest: (turn) => {
        ledger.lastTurn = { ...turn, sequence: ledger.steps };
      },
      waitingNoticeMs: this.#options.waitingNoticeMs ??
        DEFAULT_WAITING_NOTICE_MS,
      trace: this.#trace,
      ...(onWaiting === undefined ? {} : { onWaiting }),
    };
    const resume = this.#session?.resume;
    if (resume !== undefined) {
      await this.#restore(resume, briefing, bounded, provider);
    }
    const testConfigured = request.test !== undefined;
    const protect = testConfigured ? protectedPaths(request, workspace) : null;
    // One tool for the whole run: byte-identical tools and tool_choice in
    // every request keep the front of the provider's cache prefix stable.
    const tool = stepTool(bounded);
    const maxRefusals = this.#options.maxConsecutiveRefusals ??
      DEFAULT_MAX_REFUSALS;

    const step: StepSetting = {
      ctx,
      effects,
      workspace,
      tool,
      testConfigured,
      protect,
      // Only test runs and the completion after them compare with the tree,
      // so a run without a test command does not survey it at start.
      baseline: testConfigured
        ? surveyBaseline(effects, ledger.facts)
        : () => null,
    };
    while (ledger.steps < request.maxSteps) {
      if (this.#snapshotted !== ledger.steps) await this.#snapshot(null);
      stopIfAborted(this.#signal);
      const completed = await this.#step(++ledger.steps, step);
      if (completed !== undefined) return completed;
      if (ledger.consecutiveRefusals >= maxRefusals) break;
    }
    if (ledger.consecutiveRefusals >= maxRefusals) {
      return {
        stop: "refused",
        detail:
          `${ledger.consecutiveRefusals} consecutive steps were refused; the last: ${
            briefing.workingState.latest_refusal?.reason ?? "unknown"
          }`,
      };
    }
    return {
      stop: "step_budget",
      detail:
        `The step budget of ${request.maxSteps} steps ran out before completion`,
    };
  }

  /**
   * One step: selection, arguments, expansion, commission, execution. A
   * refusal is recorded and the step ends; `slice.complete`, once admitted,
   * ends the run.
   *
   * @returns How the run ended, or `undefined` to take the next step.
   */
  async #step(
    sequence: number,
    setting: StepSetting,
  ): Promise<{ stop: StopReason; detail: string } | undefined> {
    const ledger = this.#ledger;
    const { ctx, effects, workspace, tool, testConfigured, protect } = setting;
    ledger.counters.stepCalls = 0;
    this.#stage = { phase: "selection", action: null };
    const validated = !testConfigured ||
      ctx.briefing.workingState.tests_validate_latest_revision;
    const candidates = admissibleActions({ testConfigured, validated });
    const notes = ledger.notes;
    ledger.notes = [];

    // Selection.
    const selection = await runStage(ctx, {
      step: sequence,
      phase: "selection",
      tool,
      candidates,
      notes,
    });
    if (selection.kind === "budget_exhausted") {
      this.#record(sequence, "select_action", {}, {
        kind: "refused",
        code: "budget_exhausted",
        reason: `${selection.detail}; the run is suspended`,
      }, "selection");
      throw stopped("suspended", selection.detail);
    }
    if (selection.kind === "protocol") {
      this.#protocolRefusal(sequence, selection.error, "selection");
      return undefined;
    }
    const chosen = parseSelection(selection.value, candidates);
    if (!chosen.ok) {
      this.#refuse(sequence, chosen.action, {}, chosen, "selection");
      return undefined;
    }
    const action = chosen.action;
    this.#stage = { phase: "arguments", action };

    // Argument generation.
    const generated = await runStage(ctx, {
      step: sequence,
      phase: "arguments",
      tool,
      candidates: [action],
      notes: [],
    });
    if (generated.kind === "budget_exhausted") {
      this.#refuse(sequence, action, {}, {
        code: "budget_exhausted",
        reason: `${generated.detail}; the step is refused`,
      }, "arguments");
      return undefined;
    }
    if (generated.kind === "protocol") {
      this.#protocolRefusal(sequence, generated.error, "arguments", action);
      return undefined;
    }
    const args = generated.value;
    this.#trace.actionStarted(action, sequence);

    // Expansion of edit segments, then commission.
    const expanded = action === "repository.edit"
      ? await expandEdit(args, this.#results)
      : { ok: true as const, args };
    if (!expanded.ok) {
      this.#refuse(sequence, action, args, expanded, "arguments");
      return undefined;
    }
    const forbiddenRoots = this.#session?.forbiddenRoots;
    const admitted = await commission(action, expanded.args, {
      workspace,
      testConfigured,
      latestValidated: validated,
      ...(forbiddenRoots === undefined ? {} : { forbiddenRoots }),
      ...(protect === null ? {} : { protect }),
    });
    if (!admitted.ok) {
      this.#refuse(sequence, action, args, admitted, "arguments");
      return undefined;
    }

    // Execution.
    await setting.baseline();
    if (
      action === "slice.complete" && testConfigured &&
      (await effects.survey()).digest !== ledger.facts.digest
    ) {
      this.#refuse(sequence, action, args, {
        code: "tests_not_validated",
        reason:
          "Cannot complete the slice: the workspace changed after the tests validated it (run the tests on the current tree first)",
      }, "arguments");
      return undefined;
    }
    if (action === "slice.complete") {
      const summary = (admitted.args as { summary?: unknown }).summary;
      this.#summary = typeof summary === "string" ? summary : "";
      this.#trace.closeAction(undefined, "completed");
      this.#progress(sequence, "arguments", action, "completed");
      const revision = ledger.facts.revision ?? "the unedited workspace";
      return {
        stop: "completed",
        detail: testConfigured
          ? `The model completed the slice after tests validated ${revision}`
          : "The model completed the slice (no test command configured)",
      };
    }
    let report: ExecutionReport;
    try {
      report = await performAction(
        effects,
        {
          results: this.#results,
          facts: ledger.facts,
          test: this.#request.test?.command ?? [],
        },
        action,
        admitted.args,
      );
    } catch (error) {
      if (error instanceof SliceStoppedError) throw error;
      this.#refuse(sequence, action, args, {
        code: isLoomError(error) ? error.code : "execution_failed",
        reason: `The executor could not perform ${action}: ${
          clipMessage(
            messageOf(error),
            admitted.args,
          )
        }`,
      }, "arguments");
      return undefined;
    }
    ledger.consecutiveRefusals = 0;
    this.#record(sequence, action, args, report, "arguments");
    if (this.#policy === "bounded") {
      const unkept = unkeptDetail(report, this.#results);
      if (unkept !== undefined) {
        throw stopped(
          "capacity",
          `${unkept}; ${tookEffect(sequence, action, report)}`,
        );
      }
    }
    return undefined;
  }

  /**
   * Refuses a step whose reply broke the protocol; the model reads the
   * reason on its next request. The third failure in a row stops the run.
   */
  #protocolRefusal(
    sequence: number,
    error: ProviderError,
    phase: StepPhase,
    action = "select_action",
  ): void {
    const problem = error.problem ?? "malformed_response";
    this.#refuse(sequence, action, {}, {
      code: "provider_protocol",
      reason: `Your reply broke the protocol (${problem}): ${error.message}`,
    }, phase);
    const failures = this.#ledger.counters.protocolFailures;
    if (failures >= MAX_PROTOCOL_FAILURES) {
      throw stopped(
        "provider_error",
        `provider_protocol: ${failures} replies in a row broke the protocol; the last: ${error.message}`,
        { cause: error },
      );
    }
  }

  #refuse(
    sequence: number,
    action: string,
    args: unknown,
    refusal: { readonly code: string; readonly reason: string },
    phase: StepPhase,
  ): void {
    const step = { sequence, action, args, phase };
    refuseStep(this.#ledger, this.#sinks(), step, refusal);
  }

  #record(
    sequence: number,
    action: string,
    args: unknown,
    report: ExecutionReport,
    phase: StepPhase,
  ): void {
    const step = { sequence, action, args, phase };
    recordStep(this.#ledger, this.#sinks(), step, report);
  }

  /** Where steps are recorded besides the ledger (the briefing is built). */
  #sinks(): StepSinks {
    return {
      briefing: this.#briefing!,
      trace: this.#trace,
      results: this.#results,
      progress: (step, phase, action, outcome) =>
        this.#progress(step, phase, action, outcome),
    };
  }

  #progress(
    step: number,
    phase: StepPhase,
    action: string | null,
    outcome: string,
  ): void {
    this.#progressed = step;
    const onProgress = this.#options.onProgress;
    if (onProgress === undefined) return;
    const progress: StepProgress = {
      step,
      maxSteps: this.#request.maxSteps,
      phase,
      action,
      request_bytes: this.#ledger.counters.lastRequestBytes,
      model_calls: this.#ledger.counters.stepCalls,
      outcome,
    };
    onProgress(progressLine(progress), progress);
  }

  /** Hands the state after the latest acknowledged step to the session. */
  async #snapshot(stop: StopReason | null): Promise<void> {
    const session = this.#session;
    if (session === undefined) return;
    const snapshot: SliceSnapshot = {
      ...this.#state(),
      results: this.#results,
      stop,
    };
    await session.onSnapshot(snapshot);
    this.#snapshotted = this.#ledger.steps;
  }

  /** The run state snapshots and the outcome are built from. */
  #state(): SliceState {
    return ledgerState(this.#ledger, {
      archived: this.#briefing?.archivedCount ?? 0,
      checkpoints: this.#briefing?.checkpoints ?? 0,
      requests: this.#report.requests,
    });
  }

  /**
   * Continues from a stopped run: counters, results with their ids, the
   * briefing (records, retired events, checkpoints) and the report lines,
   * with the last request rebuilt so prefix measurement carries on.
   */
  async #restore(
    resume: SliceResume,
    briefing: Briefing,
    bounded: boolean,
    provider: ModelProvider,
  ): Promise<void> {
    restoreLedger(this.#ledger, resume);
    this.#snapshotted = resume.steps;
    await restoreContext(resume, {
      briefing,
      results: this.#results,
      report: this.#report,
      bounded,
      ...(provider.requestParts === undefined
        ? {}
        : { parts: (r: TurnRequest) => provider.requestParts?.(r) ?? [] }),
    });
  }

  async #writeReport(outcome: SliceOutcome): Promise<void> {
    const path = this.#options.contextReport;
    if (path === undefined) return;
    const provider = this.#request.provider;
    await writeContextReport(path, this.#report, outcome, {
      argumentsReparsed: this.#ledger.counters.argumentsReparsed,
      records: this.#ledger.records,
      model: typeof provider === "string" ? provider : provider.spec,
    });
  }
}
