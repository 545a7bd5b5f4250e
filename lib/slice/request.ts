/**
 * The public shape of a slice request and its options, and their validation.
 *
 * @module
 */
import { LoomError, messageOf } from "../errors.ts";
import type { ModelProvider } from "../providers/model_provider.ts";
import type { SliceSessionHooks } from "./run_state.ts";
import type { StepPhase } from "../reference/lookup_session.ts";
import type { ContextPolicy } from "../briefing/briefing.ts";

/** The test command of a slice. */
export interface SliceTest {
  /** Program and arguments, e.g. `["deno", "run", "check.ts"]`; run in the workspace. */
  readonly command: readonly string[];
  /** Milliseconds before the test run is stopped and reported as timed out. */
  readonly timeoutMs: number;
  /**
   * The only variables the test sees beside `PATH`, `HOME` and `TMPDIR`
   * (`--test-env NAME`, with the values from the user's environment).
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Give the test the network (`--test-network`; default off). */
  readonly network?: boolean;
  /** Run the test unconfined, with the user's privileges (`--unconfined-tests`). */
  readonly unconfined?: boolean;
  /** Extra protected globs (`--protect GLOB`): edits refused, read-only to the test. */
  readonly protect?: readonly string[];
  /**
   * Protect the files the test command names (default `true`; `false` is
   * `--edit-test-files`).
   */
  readonly protectNamedFiles?: boolean;
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
  readonly phase: StepPhase;
  /** The action selected, or `null` when selection failed. */
  readonly action: string | null;
  /** Bytes of the step's last request. */
  readonly request_bytes: number;
  /** Model calls of the step (lookups included). */
  readonly model_calls: number;
  /** Short outcome: `inspected 2 files`, `refused (path_escape)`, `completed`, … */
  readonly outcome: string;
}

/** Options of {@linkcode runSlice}. */
export interface RunOptions {
  /** `legacy` (rolling transcript, the default) or `bounded` (working context). */
  readonly contextPolicy?: ContextPolicy;
  /**
   * Overrides of the briefing's size limits, e.g. `{ transcriptRollBatch: 8 }`
   * or `{ retireTargetBytes: 24_576 }` (the cost simulator compares such
   * settings); positive integers.
   */
  readonly briefingLimits?: {
    /** Legacy entries dropped at once when the transcript passes 64 (32). */
    readonly transcriptRollBatch?: number;
    /** Bounded retirement target in bytes (16,384). */
    readonly retireTargetBytes?: number;
    /** A bounded request above this many bytes triggers retirement (32,768). */
    readonly retireAboveBytes?: number;
  };
  /** Path of the JSON context report; written at the end and when a started slice fails. */
  readonly contextReport?: string;
  /** Called after every step with a one-line summary and its fields. */
  readonly onProgress?: (line: string, progress: StepProgress) => void;
  /**
   * Write the model's replies of this run as a `loom-recording/1` file at
   * this path, replaced after every call (no API key, no request bodies), to
   * replay the run offline under other policies and settings.
   */
  readonly record?: string;
  /**
   * Append every request of this run, as sent, to a `loom-requests/1` file
   * at this path (one JSON line per context-report line), for `loom view`
   * to show. It holds prompt text and what the run read of the workspace.
   */
  readonly recordRequests?: string;
  /** Base URL of the provider API (OpenAI-compatible servers, proxies). */
  readonly baseUrl?: string;
  /**
   * Aborting stops the run with `interrupted`: a model call in flight is
   * aborted, a running effect (a test run) finishes first. The context
   * report, the outcome and the session's last snapshot are written as for
   * any other stop.
   */
  readonly signal?: AbortSignal;
  /**
   * Bound of one attempt of a live model call, from the request to the last
   * byte of the body, in milliseconds (default 120,000).
   */
  readonly modelTimeoutMs?: number;
  /** Bound of the whole run in milliseconds; when it runs out the run stops `interrupted`. */
  readonly runTimeoutMs?: number;
  /**
   * Called every `waitingNoticeMs` while a model call is in flight, with a
   * one-line notice and its fields.
   */
  readonly onWaiting?: (
    line: string,
    waiting: {
      /** The step number, 1-based. */
      readonly step: number;
      /** The stage waiting for the model. */
      readonly phase: StepPhase;
      /** Milliseconds waited so far. */
      readonly elapsed_ms: number;
    },
  ) => void;
  /** Interval of `onWaiting` in milliseconds (default 5,000). */
  readonly waitingNoticeMs?: number;
  /**
   * Consecutive refused steps after which the slice stops with `refused`
   * (default 8).
   */
  readonly maxConsecutiveRefusals?: number;
  /**
   * The bubblewrap program that confines tests (default `bwrap` on `PATH`);
   * `null` acts as if there were none.
   */
  readonly sandbox?: string | null;
  /** Environment for provider API keys (default `Deno.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Session hooks from `sliceSessionHooks` (`@loom/loom/session`): the run
   * is saved after every acknowledged step (awaited), a stopped run
   * continues, and commission refuses the session root.
   */
  readonly session?: SliceSessionHooks;
}

/** A slice request or its options are malformed; nothing was started. */
export class SliceRequestError
  extends LoomError.TypeError<"SliceRequestError"> {}

/**
 * Checks a slice request and its options before anything starts.
 *
 * @param request The slice request.
 * @param options The run options.
 * @throws {SliceRequestError} When either is malformed or the workspace is
 *   not a directory.
 */
export function validateRequest(
  request: SliceRequest,
  options: RunOptions,
): void {
  if (typeof request.intent !== "string" || request.intent.trim() === "") {
    throw new SliceRequestError(
      "invalid_request",
      "Cannot run a slice without an intent: give the task as text",
    );
  }
  if (!Number.isSafeInteger(request.maxSteps) || request.maxSteps < 1) {
    throw new SliceRequestError(
      "invalid_request",
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
        "invalid_request",
        "Cannot use the test command: it must be a non-empty list of non-empty strings",
      );
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new SliceRequestError(
        "invalid_request",
        `Cannot use test timeout ${timeoutMs}: it must be a positive number of milliseconds`,
      );
    }
  }
  const policy = options.contextPolicy;
  if (policy !== undefined && policy !== "legacy" && policy !== "bounded") {
    throw new SliceRequestError(
      "invalid_request",
      `Cannot use context policy ${
        JSON.stringify(policy)
      }: policies are legacy and bounded`,
    );
  }
  for (const [name, value] of Object.entries(options.briefingLimits ?? {})) {
    if (!Number.isSafeInteger(value) || (value as number) < 1) {
      throw new SliceRequestError(
        "invalid_request",
        `Cannot use briefing limit ${name} ${value}: limits are positive integers`,
      );
    }
  }
  const refusals = options.maxConsecutiveRefusals;
  if (
    refusals !== undefined && (!Number.isSafeInteger(refusals) || refusals < 1)
  ) {
    throw new SliceRequestError(
      "invalid_request",
      `Cannot use maxConsecutiveRefusals ${refusals}: it must be a positive integer`,
    );
  }
  for (
    const [name, value] of [
      ["modelTimeoutMs", options.modelTimeoutMs],
      ["runTimeoutMs", options.runTimeoutMs],
      ["waitingNoticeMs", options.waitingNoticeMs],
    ] as const
  ) {
    if (value !== undefined && (!Number.isFinite(value) || value <= 0)) {
      throw new SliceRequestError(
        "invalid_request",
        `Cannot use ${name} ${value}: it must be a positive number of milliseconds`,
      );
    }
  }
  let stat: Deno.FileInfo;
  try {
    stat = Deno.statSync(request.workspace);
  } catch (error) {
    throw new SliceRequestError(
      "invalid_request",
      `Cannot use workspace ${request.workspace}: ${messageOf(error)}`,
    );
  }
  if (!stat.isDirectory) {
    throw new SliceRequestError(
      "invalid_request",
      `Cannot use workspace ${request.workspace}: it is not a directory`,
    );
  }
}
