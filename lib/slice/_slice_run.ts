/**
 * The step loop of a slice: selection → arguments → expansion → commission
 * → execution → report, with a session snapshot after every acknowledged step.
 *
 * @module
 */
import type { Briefing, ContextPolicy } from "../briefing/briefing.ts";
import { ContextReportBuilder } from "../briefing/context_report.ts";
import type { ActionRecord, ExecutionReport } from "../briefing/report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import { WorkingState } from "../briefing/working_state.ts";
import type { ModelProvider } from "../providers/model_provider.ts";
import { DEFAULT_MODEL_TIMEOUT_MS } from "../providers/create_provider.ts";
import type { ProviderError } from "../providers/provider_error.ts";
import { ResultStore } from "../store/result_store.ts";
import { ResumedResultStore } from "./_resumed_store.ts";
import { isLoomError, messageOf } from "../errors.ts";
import { commission } from "./commission.ts";
import { protectedPaths } from "./_setup.ts";
import { revisionNamesTree } from "./revision.ts";
import { admissibleActions } from "./_schema.ts";
import {
  editFiles,
  type Effects,
  inspectFiles,
  runTests,
  unkeptResults,
  type WorkspaceFacts,
} from "./_execute.ts";
import { expandEdit } from "./_expand_edit.ts";
import { clipMessage, clipModelText } from "./_clip.ts";
import { round, writeContextReport } from "./_finish.ts";
import { sliceBriefing } from "./first_request.ts";
import { formatDuration } from "../display.ts";
import { describe, progressLine, waitingLine } from "./_progress.ts";
import type { RunOptions, SliceRequest, StepProgress } from "./request.ts";
import { restoreContext } from "./_restore.ts";
import { parseSelection } from "./_selection.ts";
import { sliceProvider, startExecutor } from "./_setup.ts";
import {
  capacityStop,
  type RunCounters,
  runStage,
  type StageContext,
  stopIfAborted,
} from "./_stages.ts";
import { SliceStoppedError, stopped } from "./_stopped.ts";
import { stepTool } from "./_tools.ts";
import type { SliceOutcome } from "./outcome.ts";
import type { StopReason } from "../briefing/context_report.ts";
import {
  type LastTurn,
  type SessionHookParts,
  sessionHookParts,
  type SliceResume,
  type SliceSnapshot,
  type SliceState,
} from "./run_state.ts";
import type { StepPhase } from "../reference/lookup_session.ts";
import { SliceTrace } from "./_trace.ts";

const DEFAULT_MAX_REFUSALS = 8;
/** Replies in a row that break the protocol before the run stops. */
export const MAX_PROTOCOL_FAILURES = 3;
const DEFAULT_WAITING_NOTICE_MS = 5_000;

/** One run of a slice: the step loop and its state. */
export class SliceRun {
  readonly #request: SliceRequest;
  readonly #options: RunOptions;
  readonly #session: SessionHookParts | undefined;
  readonly #policy: ContextPolicy;
  readonly #report: ContextReportBuilder;
  readonly #started = performance.now();
  readonly #results: ResultStore;
  readonly #counters: RunCounters = {
    modelCalls: 0,
    modelMs: 0,
    retrievals: 0,
    bytesTotal: 0,
    bytesPeak: 0,
    lastRequestBytes: 0,
    stepCalls: 0,
    protocolFailures: 0,
    argumentsReparsed: 0,
  };
  readonly #facts: WorkspaceFacts = {
    edits: 0,
    revision: null,
    digest: null,
  };
  #briefing: Briefing | undefined;
  #steps = 0;
  /** The last step with a progress line, and where the current step is. */
  #progressed = 0;
  #stage: { phase: StepPhase; action: string | null } = {
    phase: "selection",
    action: null,
  };
  #refusals = 0;
  #consecutiveRefusals = 0;
  #summary: string | null = null;
  #notes: string[] = [];
  readonly #records: ActionRecord[] = [];
  #lastTurn: LastTurn | null = null;
  #snapshotted = -1;
  /** The embedder's signal joined with the run timeout. */
  #signal: AbortSignal | undefined;
  #testConfinement: SliceOutcome["test_confinement"] = null;
  readonly #trace: SliceTrace;

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
    this.#trace = new SliceTrace({
      spec: typeof provider === "string" ? provider : provider.spec,
      policy,
      workspace: request.workspace,
      ...(this.#session?.telemetry === undefined
        ? {}
        : { session: this.#session.telemetry }),
      checkpoints: this.#session?.resume?.checkpoints ?? 0,
    });
  }

  /**
   * Runs the slice to its end and writes the context report.
   *
   * @returns How the slice ended.
   */
  async execute(): Promise<SliceOutcome> {
    let outcome: SliceOutcome | undefined;
    try {
      outcome = await this.#trace.run(() => this.#runAndReport());
      return outcome;
    } finally {
      this.#trace.end(
        outcome?.stop ?? "internal",
        outcome?.detail ?? "Internal failure",
        this.#steps,
      );
    }
  }

  async #runAndReport(): Promise<SliceOutcome> {
    let stop: StopReason;
    let detail: string;
    let failure: unknown;
    const runTimeout = this.#startRunTimeout();
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
        if (stop === "interrupted") this.#dropUnfinishedStep();
        // The step that failed gets its progress line too.
        if (this.#steps > this.#progressed) {
          const { phase, action } = this.#stage;
          this.#progress(this.#steps, phase, action, `stopped (${stop})`);
        }
      } else {
        stop = "suspended";
        detail = `Internal failure: ${messageOf(error)}`;
        failure = error;
      }
    }
    clearTimeout(runTimeout);
    const outcome = this.#outcome(stop, detail);
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
    const bounded = this.#policy === "bounded";
    const briefing = sliceBriefing(
      request,
      this.#options,
      this.#policy,
      this.#results,
    );
    this.#briefing = briefing;
    const ctx: StageContext = {
      provider,
      briefing,
      results: this.#results,
      report: this.#report,
      counters: this.#counters,
      signal: this.#signal,
      step: () => this.#steps,
      onRequest: (turn) => {
        this.#lastTurn = { ...turn, sequence: this.#steps };
      },
      waitingNoticeMs: this.#options.waitingNoticeMs ??
        DEFAULT_WAITING_NOTICE_MS,
      trace: this.#trace,
      ...(this.#options.onWaiting === undefined ? {} : {
        onWaiting: (phase, elapsedMs) =>
          this.#options.onWaiting?.(
            waitingLine({
              step: this.#steps,
              maxSteps: request.maxSteps,
              phase,
              elapsedMs,
              timeoutMs: typeof request.provider === "string"
                ? this.#options.modelTimeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS
                : this.#options.modelTimeoutMs,
            }),
            { step: this.#steps, phase, elapsed_ms: round(elapsedMs) },
          ),
      }),
    };
    const resume = this.#session?.resume;
    if (resume !== undefined) {
      await this.#restore(resume, briefing, bounded, provider);
    }
    const testConfigured = request.test !== undefined;
    const protect = testConfigured ? protectedPaths(request, workspace) : null;
    // The tree the latest revision (or the unedited workspace) names: only
    // test runs and the completion after them compare with it, so a run
    // without a test command does not survey the workspace at start. The
    // survey runs in the executor's worker while the first step asks the
    // model; the first action waits for it (nothing changes the tree before).
    let baseline: Promise<void> | null = testConfigured
      ? effects.survey().then(({ digest }) => {
        const revision = this.#facts.revision;
        this.#facts.digest =
          revision === null || revisionNamesTree(revision, digest)
            ? digest
            : null;
      })
      : null;
    // A run that ends before its first action never waits for it.
    baseline?.catch(() => {});
    // One tool for the whole run: byte-identical tools and tool_choice in
    // every request keep the front of the provider's cache prefix stable.
    const tool = stepTool(bounded);
    const maxRefusals = this.#options.maxConsecutiveRefusals ??
      DEFAULT_MAX_REFUSALS;

    while (this.#steps < request.maxSteps) {
      if (this.#snapshotted !== this.#steps) await this.#snapshot(null);
      stopIfAborted(this.#signal);
      const sequence = ++this.#steps;
      this.#counters.stepCalls = 0;
      this.#stage = { phase: "selection", action: null };
      const validated = !testConfigured ||
        briefing.workingState.tests_validate_latest_revision;
      const candidates = admissibleActions({ testConfigured, validated });
      const notes = this.#notes;
      this.#notes = [];

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
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }
      const chosen = parseSelection(selection.value, candidates);
      if (!chosen.ok) {
        this.#refuse(sequence, chosen.action, {}, chosen, "selection");
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
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
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }
      if (generated.kind === "protocol") {
        this.#protocolRefusal(sequence, generated.error, "arguments", action);
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }
      const args = generated.value;
      this.#trace.actionStarted(action, sequence);

      // Expansion of edit segments, then commission.
      const expanded = action === "repository.edit"
        ? await expandEdit(args, this.#results)
        : { ok: true as const, args };
      if (!expanded.ok) {
        this.#refuse(sequence, action, args, expanded, "arguments");
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
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
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }

      // Execution.
      if (baseline !== null) {
        await baseline;
        baseline = null;
      }
      if (
        action === "slice.complete" && testConfigured &&
        (await effects.survey()).digest !== this.#facts.digest
      ) {
        this.#refuse(sequence, action, args, {
          code: "tests_not_validated",
          reason:
            "Cannot complete the slice: the workspace changed after the tests validated it (run the tests on the current tree first)",
        }, "arguments");
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }
      if (action === "slice.complete") {
        const summary = (admitted.args as { summary?: unknown }).summary;
        this.#summary = typeof summary === "string" ? summary : "";
        this.#trace.closeAction(undefined, "completed");
        this.#progress(sequence, "arguments", action, "completed");
        const revision = this.#facts.revision ?? "the unedited workspace";
        return {
          stop: "completed",
          detail: testConfigured
            ? `The model completed the slice after tests validated ${revision}`
            : "The model completed the slice (no test command configured)",
        };
      }
      let report: ExecutionReport;
      try {
        report = await this.#execute(effects, action, admitted.args);
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
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }
      this.#consecutiveRefusals = 0;
      this.#record(sequence, action, args, report, "arguments");
      if (bounded) this.#stopWhenUnkept(sequence, action, report);
    }
    if (this.#consecutiveRefusals >= maxRefusals) {
      return {
        stop: "refused",
        detail:
          `${this.#consecutiveRefusals} consecutive steps were refused; the last: ${
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

  async #execute(
    effects: Effects,
    action: string,
    args: unknown,
  ): Promise<ExecutionReport> {
    switch (action) {
      case "repository.inspect":
        return await inspectFiles(
          effects,
          this.#results,
          [...(args as { paths: string[] }).paths],
        );
      case "repository.edit":
        return await editFiles(
          effects,
          this.#facts,
          (args as { files: { path: string; contents: string }[] }).files.map((
            f,
          ) => ({ path: f.path, contents: f.contents })),
        );
      case "tests.run":
        return await runTests(
          effects,
          this.#results,
          this.#facts,
          this.#request.test?.command ?? [],
        );
      default:
        throw new TypeError(`Cannot execute unknown action ${action}`);
    }
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
    const failures = this.#counters.protocolFailures;
    if (failures >= MAX_PROTOCOL_FAILURES) {
      throw stopped(
        "provider_error",
        `provider_protocol: ${failures} replies in a row broke the protocol; the last: ${error.message}`,
        { cause: error },
      );
    }
  }

  /** An interrupted step that recorded nothing does not count as taken. */
  #dropUnfinishedStep(): void {
    const last = this.#records[this.#records.length - 1];
    if (this.#steps > 0 && last?.sequence !== this.#steps) this.#steps -= 1;
  }

  /** Joins the embedder's signal with the run timeout; returns its timer. */
  #startRunTimeout(): ReturnType<typeof setTimeout> | undefined {
    const ms = this.#options.runTimeoutMs;
    const embedder = this.#options.signal;
    if (ms === undefined) {
      this.#signal = embedder;
      return undefined;
    }
    const controller = new AbortController();
    const timer = setTimeout(
      () =>
        controller.abort(
          new Error(`the run timeout of ${formatDuration(ms)} ran out`),
        ),
      ms,
    );
    this.#signal = embedder === undefined
      ? controller.signal
      : AbortSignal.any([embedder, controller.signal]);
    return timer;
  }

  #refuse(
    sequence: number,
    action: string,
    args: unknown,
    refusal: { readonly code: string; readonly reason: string },
    phase: StepPhase,
  ): void {
    this.#refusals += 1;
    this.#consecutiveRefusals += 1;
    this.#notes.push(
      `Step ${sequence} (${action}) was refused (${refusal.code}): ${refusal.reason}`,
    );
    this.#record(sequence, action, args, {
      kind: "refused",
      code: refusal.code,
      reason: refusal.reason,
    }, phase);
  }

  #record(
    sequence: number,
    action: string,
    args: unknown,
    report: ExecutionReport,
    phase: StepPhase,
  ): void {
    const record: ActionRecord = {
      sequence,
      action,
      arguments: args,
      report,
    };
    let full: SliceStoppedError | undefined;
    try {
      this.#briefing?.record(record);
    } catch (error) {
      full = capacityStop(error);
      if (full === undefined) throw error;
    }
    // The step took effect even when the archive cannot hold its event:
    // keep it in the records (outcome, session), the progress and the detail.
    this.#records.push(record);
    if (phase === "arguments") {
      this.#trace.actionEnded(args, report, this.#results);
    }
    this.#progress(sequence, phase, action, describe(report));
    if (full !== undefined) {
      throw stopped(
        "capacity",
        `${full.message}; ${tookEffect(sequence, action, report)}`,
        { cause: full.cause },
      );
    }
  }

  /**
   * Under the bounded policy a result the store could not keep would leave
   * the model blind to it (compact descriptors have no preview): stop with
   * `capacity` once the step is recorded.
   */
  #stopWhenUnkept(
    sequence: number,
    action: string,
    report: ExecutionReport,
  ): void {
    const unkept = unkeptResults(report)[0];
    if (unkept === undefined) return;
    const store = this.#results;
    const why = unkept.result_unavailable === "too_large"
      ? `it has ${unkept.utf8_bytes} bytes, more than the 16 MiB a result may hold`
      : `the result store is full (${store.count} results, ${store.totalBytes} bytes; it holds at most 1,024 results and 64 MiB)`;
    throw stopped(
      "capacity",
      `${unkept.result_unavailable}: Cannot keep the result of ${
        clipModelText(unkept.origin)
      }: ${why}, and a bounded briefing cannot show a result without a reference; ${
        tookEffect(sequence, action, report)
      }`,
    );
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
      request_bytes: this.#counters.lastRequestBytes,
      model_calls: this.#counters.stepCalls,
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
    this.#snapshotted = this.#steps;
  }

  /** The run state snapshots and the outcome are built from. */
  #state(): SliceState {
    const c = this.#counters;
    return {
      steps: this.#steps,
      modelCalls: c.modelCalls,
      records: this.#records,
      edits: this.#facts.edits,
      revision: this.#facts.revision,
      refusals: this.#refusals,
      consecutiveRefusals: this.#consecutiveRefusals,
      retrievals: c.retrievals,
      argumentsReparsed: c.argumentsReparsed,
      bytesTotal: c.bytesTotal,
      bytesPeak: c.bytesPeak,
      modelMs: c.modelMs,
      notes: [...this.#notes],
      archived: this.#briefing?.archivedCount ?? 0,
      checkpoints: this.#briefing?.checkpoints ?? 0,
      lastTurn: this.#lastTurn,
      requests: this.#report.requests,
    };
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
    this.#steps = resume.steps;
    this.#refusals = resume.refusals;
    this.#consecutiveRefusals = resume.consecutiveRefusals;
    this.#notes = [...resume.notes];
    this.#facts.edits = resume.edits;
    this.#facts.revision = resume.revision;
    const c = this.#counters;
    c.modelCalls = resume.modelCalls;
    c.retrievals = resume.retrievals;
    c.argumentsReparsed = resume.argumentsReparsed;
    c.bytesTotal = resume.bytesTotal;
    c.bytesPeak = resume.bytesPeak;
    c.modelMs = resume.modelMs;
    this.#records.push(...resume.records);
    this.#lastTurn = resume.lastTurn;
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

  #outcome(stop: StopReason, detail: string): SliceOutcome {
    // From the records, which also hold a step the archive could not take.
    const state = WorkingState.from(this.#records);
    const s = this.#state();
    return {
      stop,
      // Said where every reader looks: summary, JSON and context report.
      detail: this.#testConfinement === "unconfined"
        ? `${detail}; the tests ran UNCONFINED (--unconfined-tests)`
        : detail,
      completed: stop === "completed",
      steps: s.steps,
      // Every call made, failed ones included: each added a report line.
      model_calls: s.requests.length,
      revision: s.revision,
      latest_test: state.latest_test,
      tests_validate_latest_revision: state.tests_validate_latest_revision,
      test_confinement: this.#testConfinement,
      refusals: s.refusals,
      policy: this.#policy,
      checkpoints: s.checkpoints,
      retrievals: s.retrievals,
      request_bytes: { total: s.bytesTotal, peak: s.bytesPeak },
      elapsed_ms: round(performance.now() - this.#started),
      model_ms: round(s.modelMs),
      summary: stop === "completed" ? this.#summary : null,
      context_report: this.#options.contextReport ?? null,
    };
  }

  async #writeReport(outcome: SliceOutcome): Promise<void> {
    const path = this.#options.contextReport;
    if (path === undefined) return;
    const provider = this.#request.provider;
    await writeContextReport(path, this.#report, outcome, {
      argumentsReparsed: this.#counters.argumentsReparsed,
      records: this.#records,
      model: typeof provider === "string" ? provider : provider.spec,
    });
  }
}

/** A step's effect for a stop detail: `step 7 (tests.run) took effect: tests exit 0 on …`. */
function tookEffect(
  sequence: number,
  action: string,
  report: ExecutionReport,
): string {
  return report.kind === "refused"
    ? `step ${sequence} (${action}) was ${describe(report)}`
    : `step ${sequence} (${action}) took effect: ${describe(report)}`;
}
