/**
 * The governed slice: a small coding loop over a local workspace. Each step
 * is selection (`select_action`) → argument generation (`action_arguments`)
 * → expansion of edit segments → commission → execution in the
 * permission-scoped executor → typed report → briefing. Refusals are events
 * the model is told about; they count as steps and the loop goes on.
 *
 * @module
 */
import { Briefing, type ContextPolicy } from "../briefing/briefing.ts";
import {
  type ContextReport,
  ContextReportBuilder,
} from "../briefing/context_report.ts";
import type { ActionRecord, ExecutionReport } from "../briefing/report.ts";
import type { ModelProvider } from "../providers/model_provider.ts";
import { createProvider } from "../providers/create_provider.ts";
import { ProviderError } from "../providers/provider_error.ts";
import { expandEditContents } from "../reference/edit_contents.ts";
import { ResultStore, type StoredResult } from "../store/result_store.ts";
import { ResumedResultStore } from "./_resumed_store.ts";
import { LookupSession } from "../reference/lookup_session.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import { WorkspaceExecutor } from "../executor/workspace_executor.ts";
import { commission } from "./commission.ts";
import { actionJsonSchema } from "./_schema.ts";
import {
  editFiles,
  type Effects,
  inspectFiles,
  runTests,
  type WorkspaceFacts,
} from "./_execute.ts";
import { ACTIONS, sliceInstructions } from "./_instructions.ts";
import {
  capacityStop,
  type RunCounters,
  runStage,
  type StageContext,
} from "./_stages.ts";
import { SliceStopped } from "./_stopped.ts";
import { actionArgumentsTool, selectActionTool } from "./_tools.ts";
import type { SliceOutcome, SliceStop } from "./outcome.ts";
import type {
  LastTurn,
  SliceCheckpoint,
  SliceResume,
  SliceSessionHooks,
} from "./checkpoint.ts";

/** The test command of a slice. */
export interface SliceTest {
  /** Program and arguments, e.g. `["deno", "run", "check.ts"]`; run in the workspace. */
  readonly command: readonly string[];
  /** Milliseconds before the test run is stopped and reported as timed out. */
  readonly timeoutMs: number;
}

/** What a slice should do (compatible across versions; options go in {@linkcode RunOptions}). */
export interface SliceRequest {
  /** The task, shown intact to the model on every turn. */
  readonly intent: string;
  /** The workspace directory the slice may read and write. */
  readonly workspace: string;
  /** The test command; without it `slice.complete` is admissible at any time. */
  readonly test?: SliceTest;
  /** Steps before the slice stops with `step_budget`; refused steps count. */
  readonly maxSteps: number;
  /** A model spec (`recorded:PATH`, `anthropic:MODEL`, `openai:MODEL`) or a provider. */
  readonly provider: string | ModelProvider;
}

/** One progress report, given after every step. */
export interface StepProgress {
  /** The step number, 1-based. */
  readonly step: number;
  /** The step budget. */
  readonly maxSteps: number;
  /** The last stage the step reached. */
  readonly phase: "selection" | "arguments";
  /** The action selected, or `null` when selection failed. */
  readonly action: string | null;
  /** Bytes of the step's last request. */
  readonly request_bytes: number;
  /** Model calls of the step (lookups included). */
  readonly model_calls: number;
  /** Short outcome: `inspected 2 files`, `refused (path_escape)`, `completed`, … */
  readonly outcome: string;
}

/** Options of {@linkcode runWithOptions}. */
export interface RunOptions {
  /** `legacy` (rolling transcript, the default) or `bounded` (working context). */
  readonly contextPolicy?: "legacy" | "bounded";
  /** Path of the JSON context report; written at the end and when a started slice fails. */
  readonly contextReport?: string;
  /** Called after every step with a one-line summary and its fields. */
  readonly onProgress?: (line: string, progress: StepProgress) => void;
  /** Base URL of the provider API (OpenAI-compatible servers, proxies). */
  readonly baseUrl?: string;
  /** Aborting stops the run before its next model call with `suspended`. */
  readonly signal?: AbortSignal;
  /**
   * Consecutive refused steps after which the slice stops with `refused`
   * (default 8).
   */
  readonly maxConsecutiveRefusals?: number;
  /** Environment for provider API keys (default `Deno.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Session hooks: a checkpoint after every acknowledged step (awaited),
   * the state of a stopped run to continue from, and the session root that
   * commission must refuse. See `lib/persist` for the storage.
   */
  readonly session?: SliceSessionHooks;
}

/** A slice request or its options are malformed; nothing was started. */
export class SliceRequestError extends TypeError {
  /** Always `invalid_request`. */
  readonly code = "invalid_request";
  /**
   * Creates the error.
   *
   * @param message What is wrong and why.
   */
  constructor(message: string) {
    super(message);
    this.name = "SliceRequestError";
  }
}

const DEFAULT_MAX_REFUSALS = 8;

/**
 * Runs a slice under the default `legacy` context policy (or the given
 * options). Same as {@linkcode runWithOptions}.
 *
 * @param request The intent, workspace, test command, step budget and model.
 * @param options Context policy, report path, progress callback and more.
 * @returns How the slice ended.
 * @throws {SliceRequestError} When the request is malformed or the workspace
 *   is not a directory.
 *
 * @example
 * ```ts
 * import { runSlice } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * const model = {
 *   spec: "scripted:complete",
 *   call: ({ phase }: { phase: string }) =>
 *     Promise.resolve({
 *       arguments: phase === "selection"
 *         ? { action: "slice.complete" }
 *         : { summary: "Nothing to do" },
 *       usage: { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null },
 *       final_usage: true,
 *     }),
 * };
 * const outcome = await runSlice({ intent: "Say hello", workspace, maxSteps: 3, provider: model });
 * assert.equal(outcome.stop, "completed");
 * assert.equal(outcome.model_calls, 2);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export function runSlice(
  request: SliceRequest,
  options: RunOptions = {},
): Promise<SliceOutcome> {
  return runWithOptions(request, options);
}

/**
 * The embedder entry: runs a slice with explicit {@linkcode RunOptions}.
 * Provider, confinement, capacity and budget failures end the run with an
 * outcome (never a throw); the context report, when asked for, is written in
 * every case once the request is valid.
 *
 * @param request The intent, workspace, test command, step budget and model.
 * @param options Context policy, report path, progress callback and more.
 * @returns How the slice ended.
 * @throws {SliceRequestError} When the request is malformed.
 * @throws {Error} Internal failures after the start, once the report
 *   (stop `suspended`) is written.
 *
 * @example
 * ```ts
 * import { runWithOptions } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${workspace}/notes.txt`, "hello\n");
 * const script = [{ action: "repository.inspect" }, { paths: ["notes.txt"] }];
 * const model = {
 *   spec: "scripted:inspect",
 *   call: () =>
 *     Promise.resolve({
 *       arguments: script.shift() ?? { action: "repository.inspect" },
 *       usage: { input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null },
 *       final_usage: true,
 *     }),
 * };
 * const lines: string[] = [];
 * const outcome = await runWithOptions(
 *   { intent: "Read the notes", workspace, maxSteps: 1, provider: model, test: { command: ["true"], timeoutMs: 5_000 } },
 *   { contextPolicy: "bounded", onProgress: (line) => lines.push(line) },
 * );
 * assert.equal(outcome.stop, "step_budget");
 * assert.equal(outcome.steps, 1);
 * assert.match(lines[0]!, /inspected 1 file/);
 * await Deno.remove(workspace, { recursive: true });
 * ```
 */
export async function runWithOptions(
  request: SliceRequest,
  options: RunOptions,
): Promise<SliceOutcome> {
  validate(request, options);
  const policy: ContextPolicy = options.contextPolicy ?? "legacy";
  const run = new SliceRun(request, options, policy);
  return await run.execute();
}

function validate(request: SliceRequest, options: RunOptions): void {
  if (typeof request.intent !== "string" || request.intent.trim() === "") {
    throw new SliceRequestError(
      "Cannot run a slice without an intent: give the task as text",
    );
  }
  if (!Number.isSafeInteger(request.maxSteps) || request.maxSteps < 1) {
    throw new SliceRequestError(
      `Cannot run a slice with maxSteps ${request.maxSteps}: it must be a positive integer`,
    );
  }
  if (request.test !== undefined) {
    const { command, timeoutMs } = request.test;
    if (
      !Array.isArray(command) || command.length === 0 ||
      !command.every((p) => typeof p === "string" && p !== "")
    ) {
      throw new SliceRequestError(
        "Cannot use the test command: it must be a non-empty list of non-empty strings",
      );
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new SliceRequestError(
        `Cannot use test timeout ${timeoutMs}: it must be a positive number of milliseconds`,
      );
    }
  }
  const policy = options.contextPolicy;
  if (policy !== undefined && policy !== "legacy" && policy !== "bounded") {
    throw new SliceRequestError(
      `Cannot use context policy ${
        JSON.stringify(policy)
      }: policies are legacy and bounded`,
    );
  }
  const refusals = options.maxConsecutiveRefusals;
  if (
    refusals !== undefined && (!Number.isSafeInteger(refusals) || refusals < 1)
  ) {
    throw new SliceRequestError(
      `Cannot use maxConsecutiveRefusals ${refusals}: it must be a positive integer`,
    );
  }
  let stat: Deno.FileInfo;
  try {
    stat = Deno.statSync(request.workspace);
  } catch (error) {
    throw new SliceRequestError(
      `Cannot use workspace ${request.workspace}: ${
        error instanceof Error ? error.message : String(error)
      }`,
    );
  }
  if (!stat.isDirectory) {
    throw new SliceRequestError(
      `Cannot use workspace ${request.workspace}: it is not a directory`,
    );
  }
}

class SliceRun {
  readonly #request: SliceRequest;
  readonly #options: RunOptions;
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
  };
  readonly #facts: WorkspaceFacts = { edits: 0, revision: null };
  #briefing: Briefing | undefined;
  #steps = 0;
  #refusals = 0;
  #consecutiveRefusals = 0;
  #summary: string | null = null;
  #notes: string[] = [];
  readonly #records: ActionRecord[] = [];
  #lastTurn: LastTurn | null = null;
  #checkpointed = -1;

  constructor(
    request: SliceRequest,
    options: RunOptions,
    policy: ContextPolicy,
  ) {
    this.#request = request;
    this.#options = options;
    this.#policy = policy;
    this.#report = new ContextReportBuilder(policy);
    this.#results = options.session?.resume === undefined
      ? new ResultStore()
      : new ResumedResultStore();
  }

  async execute(): Promise<SliceOutcome> {
    let stop: SliceStop;
    let detail: string;
    let failure: unknown;
    try {
      const provider = this.#provider();
      const workspace = await Deno.realPath(this.#request.workspace);
      const effects = await this.#startExecutor(workspace);
      try {
        ({ stop, detail } = await this.#loop(provider, effects, workspace));
      } finally {
        await effects.close();
      }
    } catch (error) {
      if (error instanceof SliceStopped) {
        stop = error.stop;
        detail = error.message;
      } else {
        stop = "suspended";
        detail = `Internal failure: ${
          error instanceof Error ? error.message : String(error)
        }`;
        failure = error;
      }
    }
    const outcome = this.#outcome(stop, detail);
    if (this.#briefing !== undefined && this.#options.session !== undefined) {
      try {
        await this.#checkpoint(stop);
      } catch (error) {
        failure ??= error;
      }
    }
    await this.#writeReport(outcome);
    if (failure !== undefined) throw failure;
    return outcome;
  }

  #provider(): ModelProvider {
    const spec = this.#request.provider;
    if (typeof spec !== "string") return spec;
    try {
      const resume = this.#options.session?.resume;
      return createProvider(spec, {
        ...(resume === undefined ? {} : { startAtCall: resume.modelCalls }),
        ...(this.#options.baseUrl === undefined
          ? {}
          : { baseUrl: this.#options.baseUrl }),
        ...(this.#options.env === undefined ? {} : { env: this.#options.env }),
      });
    } catch (error) {
      if (error instanceof ProviderError) {
        throw new SliceStopped(
          "provider_error",
          `${error.code}: ${error.message}`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  async #startExecutor(workspace: string): Promise<Effects> {
    const test = this.#request.test;
    try {
      return await WorkspaceExecutor.start({
        workspace,
        ...(test === undefined
          ? {}
          : { testCommand: [...test.command], testTimeoutMs: test.timeoutMs }),
      });
    } catch (error) {
      if ((error as { code?: unknown })?.code === "confinement_unavailable") {
        throw new SliceStopped(
          "confinement_unavailable",
          `confinement_unavailable: ${(error as Error).message}`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  async #loop(
    provider: ModelProvider,
    effects: Effects,
    workspace: string,
  ): Promise<{ stop: SliceStop; detail: string }> {
    const request = this.#request;
    const bounded = this.#policy === "bounded";
    const briefing = new Briefing({
      policy: this.#policy,
      intent: request.intent,
      instructions: sliceInstructions(request.test?.command),
      results: this.#results,
    });
    this.#briefing = briefing;
    const ctx: StageContext = {
      provider,
      briefing,
      results: this.#results,
      report: this.#report,
      counters: this.#counters,
      signal: this.#options.signal,
      onRequest: (turn) => {
        this.#lastTurn = { ...turn, sequence: this.#steps };
      },
    };
    const resume = this.#options.session?.resume;
    if (resume !== undefined) await this.#restore(resume, briefing, bounded);
    const testConfigured = request.test !== undefined;
    const maxRefusals = this.#options.maxConsecutiveRefusals ??
      DEFAULT_MAX_REFUSALS;

    while (this.#steps < request.maxSteps) {
      if (this.#checkpointed !== this.#steps) await this.#checkpoint(null);
      const signal = this.#options.signal;
      if (signal?.aborted) {
        throw new SliceStopped(
          "suspended",
          `The embedder aborted the run: ${String(signal.reason)}`,
        );
      }
      const sequence = ++this.#steps;
      this.#counters.stepCalls = 0;
      const validated = !testConfigured ||
        briefing.workingState.tests_validate_latest_revision;
      const candidates = ACTIONS.filter((a) =>
        (a !== "tests.run" || testConfigured) &&
        (a !== "slice.complete" || validated)
      );
      const notes = this.#notes;
      this.#notes = [];

      // Selection.
      const selection = await runStage(ctx, {
        phase: "selection",
        tool: selectActionTool(candidates, bounded),
        candidates,
        notes,
      });
      if (selection.kind === "budget_exhausted") {
        this.#record(sequence, "select_action", {}, {
          kind: "refused",
          code: "budget_exhausted",
          reason: `${selection.detail}; the run is suspended`,
        }, "selection");
        throw new SliceStopped("suspended", selection.detail);
      }
      const chosen = parseSelection(selection.value, candidates);
      if (!chosen.ok) {
        this.#refuse(sequence, chosen.action, {}, chosen, "selection");
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }
      const action = chosen.action;

      // Argument generation.
      const schema = actionJsonSchema(action);
      const generated = await runStage(ctx, {
        phase: "arguments",
        tool: actionArgumentsTool(action, schema, bounded),
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
      const args = generated.value;

      // Expansion of edit segments, then commission.
      const expanded = action === "repository.edit"
        ? await expandEdit(args, this.#results)
        : { ok: true as const, args };
      if (!expanded.ok) {
        this.#refuse(sequence, action, args, expanded, "arguments");
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }
      const forbiddenRoots = this.#options.session?.forbiddenRoots;
      const admitted = await commission(action, expanded.args, {
        workspace,
        testConfigured,
        latestValidated: validated,
        ...(forbiddenRoots === undefined ? {} : { forbiddenRoots }),
      });
      if (!admitted.ok) {
        this.#refuse(sequence, action, args, admitted, "arguments");
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }

      // Execution.
      if (action === "slice.complete") {
        const summary = (admitted.args as { summary?: unknown }).summary;
        this.#summary = typeof summary === "string" ? summary : "";
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
        if (error instanceof SliceStopped) throw error;
        this.#refuse(sequence, action, args, {
          code: "execution_failed",
          reason: `The executor could not perform ${action}: ${
            error instanceof Error ? error.message : String(error)
          }`,
        }, "arguments");
        if (this.#consecutiveRefusals >= maxRefusals) break;
        continue;
      }
      this.#consecutiveRefusals = 0;
      this.#record(sequence, action, args, report, "arguments");
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

  #refuse(
    sequence: number,
    action: string,
    args: unknown,
    refusal: { readonly code: string; readonly reason: string },
    phase: "selection" | "arguments",
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
    phase: "selection" | "arguments",
  ): void {
    const record: ActionRecord = {
      sequence,
      action,
      arguments: args,
      report,
    };
    try {
      this.#briefing?.record(record);
    } catch (error) {
      throw capacityStop(error) ?? error;
    }
    this.#records.push(record);
    this.#progress(sequence, phase, action, describe(report));
  }

  #progress(
    step: number,
    phase: "selection" | "arguments",
    action: string | null,
    outcome: string,
  ): void {
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
  async #checkpoint(stop: SliceStop | null): Promise<void> {
    const session = this.#options.session;
    if (session === undefined) return;
    const c = this.#counters;
    const checkpoint: SliceCheckpoint = {
      steps: this.#steps,
      modelCalls: c.modelCalls,
      records: [...this.#records],
      results: this.#results,
      edits: this.#facts.edits,
      revision: this.#facts.revision,
      refusals: this.#refusals,
      consecutiveRefusals: this.#consecutiveRefusals,
      retrievals: c.retrievals,
      bytesTotal: c.bytesTotal,
      bytesPeak: c.bytesPeak,
      modelMs: c.modelMs,
      notes: [...this.#notes],
      archived: this.#briefing?.archivedCount ?? 0,
      checkpoints: this.#briefing?.checkpoints ?? 0,
      lastTurn: this.#lastTurn,
      requests: [...this.#report.requests],
      stop,
    };
    await session.onCheckpoint(checkpoint);
    this.#checkpointed = this.#steps;
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
    c.bytesTotal = resume.bytesTotal;
    c.bytesPeak = resume.bytesPeak;
    c.modelMs = resume.modelMs;
    this.#records.push(...resume.records);
    this.#lastTurn = resume.lastTurn;
    this.#checkpointed = resume.steps;

    const stale = new Map((resume.unavailable ?? []).map((u) => [u.id, u]));
    const results = [
      ...resume.results,
      ...[...stale.values()].map((u) => ({ id: u.id }) as StoredResult),
    ].sort((a, b) => idOf(a) - idOf(b));
    const last = resume.lastTurn;
    const records = resume.records;
    // Records made after the last request (normally the last step's own).
    const after = last === null
      ? []
      : records.filter((r) => r.sequence >= last.sequence);
    const before = records.slice(0, records.length - after.length);
    const boundary = last?.results ?? Infinity;
    const store = this.#results;
    const restoreResults = (keep: (r: StoredResult) => boolean) => {
      for (const r of results) {
        if (!keep(r)) continue;
        const u = stale.get(r.id);
        if (u === undefined) store.restore(r);
        else if (store instanceof ResumedResultStore) {
          store.restoreUnavailable(u);
        }
      }
    };
    restoreResults((r) => idOf(r) <= boundary);
    let previous: TurnRequest | undefined;
    try {
      if (last === null) {
        briefing.restore(records, {
          archived: resume.archived,
          checkpoints: resume.checkpoints,
        });
      } else {
        briefing.restore(before, {
          archived: resume.archived - last.retired,
          checkpoints: resume.checkpoints - (last.retired > 0 ? 1 : 0),
        });
        previous = await this.#rebuild(last, briefing, bounded);
        for (const record of after) briefing.record(record);
      }
    } catch (error) {
      throw capacityStop(error) ?? error;
    }
    restoreResults((r) => idOf(r) > boundary);
    this.#report.restore(resume.requests, previous);
  }

  /** Rebuilds the last request of a stopped run (lookups answered again). */
  async #rebuild(
    last: LastTurn,
    briefing: Briefing,
    bounded: boolean,
  ): Promise<TurnRequest> {
    const action = last.candidates[0] ?? "";
    const tool = last.phase === "selection"
      ? selectActionTool(last.candidates, bounded)
      : actionArgumentsTool(action, actionJsonSchema(action), bounded);
    const lookups = new LookupSession({
      results: this.#results,
      ...(briefing.history === undefined ? {} : { history: briefing.history }),
      stage: last.phase,
    });
    const answers: unknown[] = [];
    for (const lookup of last.lookups) {
      try {
        answers.push(await lookups.answer(lookup));
      } catch {
        break;
      }
    }
    return briefing.request({
      phase: last.phase,
      tool,
      candidates: last.candidates,
      lookupAnswers: answers,
      notes: last.notes,
    });
  }

  #outcome(stop: SliceStop, detail: string): SliceOutcome {
    const state = this.#briefing?.workingState;
    const c = this.#counters;
    return {
      stop,
      detail,
      completed: stop === "completed",
      steps: this.#steps,
      model_calls: c.modelCalls,
      revision: this.#facts.revision,
      latest_test: state?.latest_test ?? null,
      tests_validate_latest_revision: state?.tests_validate_latest_revision ??
        false,
      refusals: this.#refusals,
      policy: this.#policy,
      checkpoints: this.#briefing?.checkpoints ?? 0,
      retrievals: c.retrievals,
      request_bytes: { total: c.bytesTotal, peak: c.bytesPeak },
      elapsed_ms: round(performance.now() - this.#started),
      model_ms: round(c.modelMs),
      summary: stop === "completed" ? this.#summary : null,
      context_report: this.#options.contextReport ?? null,
    };
  }

  async #writeReport(outcome: SliceOutcome): Promise<void> {
    const path = this.#options.contextReport;
    if (path === undefined) return;
    const report: ContextReport = this.#report.build(
      { stop: outcome.stop, detail: outcome.detail },
      {
        checkpoints: outcome.checkpoints,
        retrievals: outcome.retrievals,
        modelCalls: outcome.model_calls,
        elapsedMs: outcome.elapsed_ms,
      },
    );
    await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n");
  }
}

function idOf(result: StoredResult): number {
  return Number(result.id.slice("result-".length));
}

/** One progress line: step, phase, action, request bytes, outcome. */
function progressLine(p: StepProgress): string {
  return `step ${p.step}/${p.maxSteps} ${p.phase} ${
    p.action ?? "-"
  } request_bytes=${p.request_bytes} calls=${p.model_calls}: ${p.outcome}`;
}

function describe(report: ExecutionReport): string {
  switch (report.kind) {
    case "inspected": {
      const n = report.files.length;
      const missing = report.files.filter((f) => f.missing).length;
      return `inspected ${n} file${n === 1 ? "" : "s"}${
        missing > 0 ? ` (${missing} missing)` : ""
      }`;
    }
    case "edited":
      return `edited ${report.files.length} file${
        report.files.length === 1 ? "" : "s"
      } → ${report.revision}`;
    case "tests_run":
      return `tests exit ${report.exit_code}${
        report.timed_out ? " (timed out)" : ""
      } on ${report.tested_revision ?? "the unedited workspace"}`;
    case "refused":
      return `refused (${report.code})`;
  }
}

type Selection =
  | { readonly ok: true; readonly action: typeof ACTIONS[number] }
  | {
    readonly ok: false;
    readonly action: string;
    readonly code: string;
    readonly reason: string;
  };

function parseSelection(
  value: unknown,
  candidates: readonly string[],
): Selection {
  if (
    value === null || typeof value !== "object" || Array.isArray(value) ||
    Object.keys(value).length !== 1 ||
    typeof (value as { action?: unknown }).action !== "string"
  ) {
    return {
      ok: false,
      action: "select_action",
      code: "invalid_selection",
      reason:
        'The selection must be {"action": <one of the candidate actions>} or one lookup',
    };
  }
  const action = (value as { action: string }).action;
  const found = ACTIONS.find((a) => a === action);
  if (found === undefined || !candidates.includes(found)) {
    const shown = action.length > 64 ? `${action.slice(0, 64)}…` : action;
    return {
      ok: false,
      action: shown,
      code: "not_a_candidate",
      reason: `${JSON.stringify(shown)} is not one of the candidate actions ${
        JSON.stringify(candidates)
      }`,
    };
  }
  return { ok: true, action: found };
}

const MAX_EXPANDED_BYTES = 16 * 1024 * 1024;
const encoder = new TextEncoder();

type Expansion =
  | { readonly ok: true; readonly args: unknown }
  | { readonly ok: false; readonly code: string; readonly reason: string };

/** Expands segment contents of edit arguments into literal text. */
async function expandEdit(
  args: unknown,
  results: ResultStore,
): Promise<Expansion> {
  if (!isRecord(args) || !Array.isArray(args["files"])) {
    return { ok: true, args }; // commission refuses the shape
  }
  const files: unknown[] = [];
  let total = 0;
  for (const [index, file] of args["files"].entries()) {
    if (!isRecord(file) || !("contents" in file)) {
      files.push(file);
      continue;
    }
    const contents = file["contents"];
    let text: string;
    if (typeof contents === "string") {
      text = contents;
    } else {
      try {
        text = await expandEditContents(contents, { results });
      } catch (error) {
        const code = (error as { code?: unknown })?.code;
        if (typeof code !== "string") throw error;
        const where = typeof file["path"] === "string"
          ? ` (${file["path"]})`
          : "";
        return {
          ok: false,
          code,
          reason: `The contents of file ${index}${where} do not resolve: ${
            (error as Error).message
          }`,
        };
      }
    }
    total += encoder.encode(text).byteLength;
    if (total > MAX_EXPANDED_BYTES) {
      return {
        ok: false,
        code: "edit_too_large",
        reason:
          `The expanded edit contents pass ${MAX_EXPANDED_BYTES} bytes, the limit of one edit`,
      };
    }
    files.push({ ...file, contents: text });
  }
  return { ok: true, args: { ...args, files } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
