/**
 * The context report of wire-formats.md (`--context-report PATH`): request
 * sizes, prefix stability, timings and provider counters. It holds numbers
 * and the outcome only — never prompt text or file contents.
 *
 * @module
 */
import { serializeTurnRequest, type TurnRequest } from "./turn_request.ts";
import {
  firstDivergence,
  type MeasuredRequest,
  measureRequest,
  neutralRequestParts,
} from "./request_prefix.ts";
import type { RequestPart } from "./request_prefix.ts";
import type { StepPhase } from "../reference/lookup_session.ts";
import type { ContextPolicy } from "./briefing.ts";
import type { PartBytes } from "./part_bytes.ts";

/**
 * The context report's version: 2 adds, per request, its step, its bytes by
 * part, whether a retirement checkpoint preceded it and its cache
 * breakpoints. A report without `version` is version 1; readers take both.
 */
export const CONTEXT_REPORT_VERSION = 2;

/**
 * Why a slice stopped (DESIGN.md "Slice completion"):
 *
 * - `completed`: the model called `slice.complete` while the tests validated
 *   the latest revision (or no test command was configured).
 * - `step_budget`: `maxSteps` steps ran without completion.
 * - `refused`: `maxConsecutiveRefusals` steps in a row were refused (the model
 *   keeps proposing what commission cannot admit).
 * - `suspended`: a ninth lookup in selection, or the embedder's abort signal,
 *   or an internal failure after the slice started (then the error is also
 *   thrown). `loom run` also reports a failure before the slice started
 *   (bad workspace, intent file or session) as `suspended`.
 * - `capacity`: the event archive is full, the result store cannot keep a
 *   new result under the bounded policy (compact descriptors have no preview,
 *   so the model would be blind to it), or mandatory content of a bounded
 *   request cannot fit the 64 KiB ceiling. The step that overflowed still
 *   took effect: it is in the records, the progress output and `detail`
 *   (`…; step 7 (tests.run) took effect: tests exit 0 on rev-1-…`).
 * - `confinement_unavailable`: the permission-scoped worker could not start.
 * - `provider_error`: the model provider failed (bad spec, missing key, HTTP
 *   failure, a recording that does not match or ran out).
 */
export type StopReason =
  | "completed"
  | "step_budget"
  | "refused"
  | "suspended"
  | "capacity"
  | "confinement_unavailable"
  | "provider_error"
  | "interrupted";

/**
 * Provider-reported token counters; a counter the provider did not report is
 * `null`, never 0.
 */
export interface ModelUsage {
  /**
   * Input tokens as the provider counts them: Anthropic's `input_tokens`
   * (excludes cache reads and writes), OpenAI's `prompt_tokens` (includes
   * cached tokens).
   */
  readonly input_tokens: number | null;
  /** Output tokens (`output_tokens` / `completion_tokens`). */
  readonly output_tokens: number | null;
  /** Tokens read from the prompt cache (`cache_read_input_tokens` / `cached_tokens`). */
  readonly cache_read_tokens: number | null;
  /** Tokens written to the prompt cache (`cache_creation_input_tokens`; null for OpenAI). */
  readonly cache_write_tokens: number | null;
}

const encoder = new TextEncoder();

// The parts a request is measured by, and where it first differs, are
// defined beside the measurement; the report's lines carry them.
export type { FirstDivergence, RequestPart } from "./request_prefix.ts";

/** One request line of the report. */
export interface ContextReportRequest {
  /** Stage of the request. */
  readonly phase: StepPhase;
  /** UTF-8 bytes of the serialized provider-neutral turn request. */
  readonly request_bytes: number;
  /**
   * Longest common byte prefix with the previous request (0 for the first),
   * measured on the provider request body in the provider's cache order.
   */
  readonly prefix_stable_bytes: number;
  /**
   * Where this request first differs from the previous one; `null` for the
   * first request and for lines restored from reports that predate it.
   */
  readonly first_divergence: {
    /** Byte offset into the parts in cache order (equals `prefix_stable_bytes`). */
    readonly offset: number;
    /** `tools`, `system block N`, `message N block M`, or `end`. */
    readonly part: string;
  } | null;
  /** Milliseconds spent on this request. */
  readonly elapsed_ms: number;
  /** Whether the counters are the provider's final usage. */
  readonly final_usage: boolean;
  /** See {@linkcode ModelUsage}. */
  readonly input_tokens: number | null;
  /** See {@linkcode ModelUsage}. */
  readonly cache_read_tokens: number | null;
  /** See {@linkcode ModelUsage}. */
  readonly cache_write_tokens: number | null;
  /** See {@linkcode ModelUsage}. */
  readonly output_tokens: number | null;
  /** The step the request belongs to (version 2). */
  readonly step?: number;
  /**
   * Whether events were retired (a retirement checkpoint) while this
   * request was built (version 2; always `false` under legacy).
   */
  readonly checkpoint?: boolean;
  /**
   * The request's bytes by part, adding up to `request_bytes` (version 2;
   * absent for a request the slice's briefing did not build).
   */
  readonly bytes_by_part?: PartBytes;
  /**
   * Bytes of the body in the provider's cache order, the order
   * `prefix_stable_bytes` and `cache_breakpoints` count in (version 2).
   */
  readonly cache_order_bytes?: number;
  /**
   * Where the prefix of each cache breakpoint ends, in bytes of the body
   * in cache order, ascending: the end of the marked block's content,
   * before its `cache_control` marker, which a later request moves on
   * (version 2).
   */
  readonly cache_breakpoints?: readonly number[];
}

/**
 * One test run of a slice as the context report lists it: its step, exit
 * and revision, never its output.
 */
export interface ContextReportTest {
  /** The step that ran the tests. */
  readonly step: number;
  /** Exit code of the test program. */
  readonly exit_code: number;
  /** Whether its timeout stopped it. */
  readonly timed_out: boolean;
  /** The revision tested; `null` for the unedited workspace. */
  readonly revision: string | null;
}

/**
 * The context report: the closed object of wire-formats.md, extended (after
 * `elapsed_ms`) with what a reader of a run needs — the model, the steps,
 * the revisions and the test runs — still without prompt or file text.
 */
export interface ContextReport {
  /** {@linkcode CONTEXT_REPORT_VERSION}; absent in version 1. */
  readonly version?: number;
  /** The context policy of the run. */
  readonly policy: ContextPolicy;
  /** How the run ended. */
  readonly outcome: { readonly stop: StopReason; readonly detail: string };
  /** One line per model request, in order. */
  readonly requests: readonly ContextReportRequest[];
  /** Retirement checkpoints. */
  readonly checkpoints: number;
  /** Successful lookups. */
  readonly retrievals: number;
  /**
   * Calls whose `step` argument came as a string holding a JSON object
   * (as Claude models send nested objects at times) and was parsed.
   */
  readonly arguments_reparsed: number;
  /** Model calls made. */
  readonly model_calls: number;
  /** Total wall time of the run in milliseconds. */
  readonly elapsed_ms: number;
  /**
   * The model: `anthropic:MODEL`, `openai:MODEL`, or `recorded` for a
   * recording (its path is left out); `null` when the run did not name one.
   */
  readonly model: string | null;
  /** Steps taken, refused ones included. */
  readonly steps: number;
  /** The latest workspace revision, `null` when nothing was edited. */
  readonly revision: string | null;
  /**
   * Whether the latest test run exited 0 within its timeout on the latest
   * revision (`revision`, or the unedited workspace when it is `null`): then
   * `revision` is the revision the tests validated.
   */
  readonly tests_validate_latest_revision: boolean;
  /** Every test run of the slice, in step order. */
  readonly tests: readonly ContextReportTest[];
}

/** Options of {@linkcode ContextReportBuilder.addRequest}. */
export interface AddRequestOptions {
  /**
   * The provider request body in cache order; without it the turn request's
   * own parts in Anthropic's order ({@linkcode neutralRequestParts}).
   */
  readonly parts?: readonly RequestPart[];
  /** Stage of the request. */
  readonly phase: StepPhase;
  /** Milliseconds the request took (default 0). */
  readonly elapsedMs?: number;
  /** Provider counters; missing ones are reported as `null`. */
  readonly usage?: Partial<ModelUsage>;
  /** Whether `usage` is the final usage (default `usage !== undefined`). */
  readonly finalUsage?: boolean;
  /** The step the request belongs to. */
  readonly step?: number;
  /** Whether events were retired while the request was built. */
  readonly checkpoint?: boolean;
  /** The request's bytes by part (the briefing's `lastTurn.parts`). */
  readonly bytesByPart?: PartBytes;
}

/** Totals passed to {@linkcode ContextReportBuilder.build}. */
export interface BuildReportOptions {
  /** Retirement checkpoints (default 0). */
  readonly checkpoints?: number;
  /** Successful lookups (default 0). */
  readonly retrievals?: number;
  /** Calls whose `step` argument was reparsed from a string (default 0). */
  readonly argumentsReparsed?: number;
  /** Model calls (default: the number of requests added). */
  readonly modelCalls?: number;
  /** Total wall time (default: since the builder was made). */
  readonly elapsedMs?: number;
  /** The model spec (default none); see {@linkcode reportedModel}. */
  readonly model?: string;
  /** Steps taken (default 0). */
  readonly steps?: number;
  /** The latest revision (default `null`). */
  readonly revision?: string | null;
  /** Whether the tests validate the latest revision (default `false`). */
  readonly testsValidateLatestRevision?: boolean;
  /** The test runs, in step order (default none). */
  readonly tests?: readonly ContextReportTest[];
}

/**
 * Collects per-request measurements and builds the context report. It keeps
 * only the previous request's bytes, to measure the common prefix.
 *
 * @example
 * ```ts
 * import { type TurnRequest } from "@loom/loom/slice";
 * import { ContextReportBuilder } from "./context_report.ts";
 * import assert from "node:assert/strict";
 * const request = (text: string): TurnRequest => ({
 *   system: [{ type: "text", text: "rules" }],
 *   messages: [{ role: "user", content: [{ type: "text", text }] }],
 *   tool: { name: "t", description: "d", input_schema: {} },
 *   tool_choice: { type: "tool", name: "t" },
 * });
 * const builder = new ContextReportBuilder("bounded");
 * builder.addRequest(request("step one"), { phase: "selection" });
 * const line = builder.addRequest(request("step two"), { phase: "arguments" });
 * assert.ok(line.prefix_stable_bytes > 0);
 * const report = builder.build({ stop: "completed", detail: "Done" });
 * assert.equal(report.model_calls, 2);
 * assert.ok(!JSON.stringify(report).includes("step one"));
 * ```
 */
export class ContextReportBuilder {
  readonly #policy: ContextPolicy;
  readonly #requests: ContextReportRequest[] = [];
  readonly #started: number = performance.now();
  #previous: MeasuredRequest | undefined;

  /**
   * Starts a report; the run's elapsed time counts from here.
   *
   * @param policy The run's context policy.
   */
  constructor(policy: ContextPolicy) {
    this.#policy = policy;
  }

  /** Requests added so far. */
  get requests(): readonly ContextReportRequest[] {
    return this.#requests;
  }

  /**
   * Measures a request and adds its line.
   *
   * @param request The turn request as sent.
   * @param options Phase, timing and usage.
   * @returns The added line.
   */
  addRequest(
    request: TurnRequest,
    options: AddRequestOptions,
  ): ContextReportRequest {
    const measured = measureRequest(
      options.parts ?? neutralRequestParts(request),
      request,
    );
    const divergence = this.#previous === undefined
      ? null
      : firstDivergence(this.#previous, measured);
    const usage = options.usage;
    const line: ContextReportRequest = {
      phase: options.phase,
      request_bytes: encoder.encode(serializeTurnRequest(request)).byteLength,
      prefix_stable_bytes: divergence?.offset ?? 0,
      first_divergence: divergence,
      elapsed_ms: roundMs(options.elapsedMs ?? 0),
      final_usage: options.finalUsage ?? usage !== undefined,
      input_tokens: usage?.input_tokens ?? null,
      cache_read_tokens: usage?.cache_read_tokens ?? null,
      cache_write_tokens: usage?.cache_write_tokens ?? null,
      output_tokens: usage?.output_tokens ?? null,
      ...(options.step === undefined ? {} : { step: options.step }),
      checkpoint: options.checkpoint ?? false,
      ...(options.bytesByPart === undefined
        ? {}
        : { bytes_by_part: { ...options.bytesByPart } }),
      cache_order_bytes: measured.bytes.byteLength,
      cache_breakpoints: measured.breakpoints,
    };
    this.#previous = measured;
    this.#requests.push(line);
    return line;
  }

  /**
   * Takes over the lines of an earlier run of the same slice (a resumed
   * session), so the report covers the whole run, and the last request that
   * run sent, so the next line's `prefix_stable_bytes` is measured against it
   * as if the run had never stopped. Only on a fresh builder.
   *
   * @param lines The earlier run's request lines, in order.
   * @param previous The earlier run's last request, rebuilt; without it the
   *   next line's `prefix_stable_bytes` is 0.
   * @throws {TypeError} When the builder already holds lines.
   *
   * @example
   * ```ts
   * import { ContextReportBuilder } from "./context_report.ts";
   * import assert from "node:assert/strict";
   * const builder = new ContextReportBuilder("legacy");
   * builder.restore([{
   *   phase: "selection", request_bytes: 10, prefix_stable_bytes: 0, first_divergence: null, elapsed_ms: 1,
   *   final_usage: false, input_tokens: null, cache_read_tokens: null,
   *   cache_write_tokens: null, output_tokens: null,
   * }]);
   * assert.equal(builder.build({ stop: "completed", detail: "Done" }).requests.length, 1);
   * ```
   */
  restore(
    lines: readonly ContextReportRequest[],
    previous?: TurnRequest | readonly RequestPart[],
  ): void {
    if (this.#requests.length > 0) {
      throw new TypeError(
        "Cannot restore report lines into a builder that already holds lines",
      );
    }
    for (const line of lines) this.#requests.push({ ...line });
    this.#previous = previous === undefined ? undefined : measureRequest(
      Array.isArray(previous)
        ? previous as readonly RequestPart[]
        : neutralRequestParts(previous as TurnRequest),
      undefined,
    );
  }

  /**
   * Builds the report.
   *
   * @param outcome How the run ended; `detail` is a short message, never
   *   prompt or file text.
   * @param options Totals.
   * @returns The report JSON object.
   */
  build(
    outcome: { readonly stop: StopReason; readonly detail: string },
    options: BuildReportOptions = {},
  ): ContextReport {
    return {
      version: CONTEXT_REPORT_VERSION,
      policy: this.#policy,
      outcome: { stop: outcome.stop, detail: outcome.detail },
      requests: [...this.#requests],
      checkpoints: options.checkpoints ?? 0,
      retrievals: options.retrievals ?? 0,
      arguments_reparsed: options.argumentsReparsed ?? 0,
      model_calls: options.modelCalls ?? this.#requests.length,
      elapsed_ms: roundMs(
        options.elapsedMs ?? performance.now() - this.#started,
      ),
      model: options.model === undefined ? null : reportedModel(options.model),
      steps: options.steps ?? 0,
      revision: options.revision ?? null,
      tests_validate_latest_revision: options.testsValidateLatestRevision ??
        false,
      tests: (options.tests ?? []).map((t) => ({
        step: t.step,
        exit_code: t.exit_code,
        timed_out: t.timed_out,
        revision: t.revision,
      })),
    };
  }
}

/**
 * The model as a context report names it: the spec, except that a
 * recording (`recorded:PATH`) is named `recorded` — a report says which
 * model ran, not where files lie.
 *
 * @param spec A model spec (`anthropic:MODEL`, `openai:MODEL`, `recorded:PATH`).
 * @returns The name the report carries.
 *
 * @example
 * ```ts
 * import { reportedModel } from "./context_report.ts";
 * import assert from "node:assert/strict";
 * assert.equal(reportedModel("recorded:/home/me/run.json"), "recorded");
 * assert.equal(reportedModel("anthropic:claude-sonnet-4-5"), "anthropic:claude-sonnet-4-5");
 * ```
 */
export function reportedModel(spec: string): string {
  return spec.startsWith("recorded:") ? "recorded" : spec;
}

/**
 * Milliseconds rounded to microseconds, as the report writes times.
 *
 * @param ms Milliseconds.
 * @returns The rounded value.
 */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
