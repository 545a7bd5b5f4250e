/**
 * The span of one `run_code` run: `run_code` (kind `INTERNAL`) under the
 * span of the tool call that asked for it (the host's `tools/call run_code`
 * in the gateway, the AI SDK's tool span for `codeTool`). The calls the
 * code makes run with it active, so their spans (the gateway's upstream
 * `CLIENT` spans, `codeTool`'s `execute_tool` spans) are its children; the
 * code's `loom.store` and `loom.read` are its events. It carries the run's
 * confinement, deadline, calls, time and log bytes, and `error.type` = the
 * run's error code (`code_timeout`, `code_error`, …).
 *
 * The code, its logs and what it returns are content: none of it is put
 * here (in `full` mode the tool call's own span carries the arguments and
 * the answer). The message of a `code_error` quotes the code's exception,
 * so it becomes the status description only in `full` mode.
 *
 * @module
 */
import { type Context, context } from "@opentelemetry/api";
import {
  ATTR_ERROR_TYPE,
  ATTR_LOOM_CODE_CALLS,
  ATTR_LOOM_CODE_CONFINEMENT,
  ATTR_LOOM_CODE_LOG_BYTES,
  ATTR_LOOM_CODE_MS,
  ATTR_LOOM_CODE_QUEUED_MS,
  ATTR_LOOM_CODE_TIMEOUT_MS,
  ATTR_LOOM_RESULT_BYTES,
  ATTR_LOOM_RESULT_IDS,
  ATTR_LOOM_RESULT_SHA256,
  EVENT_LOOM_READ,
  EVENT_LOOM_STORE,
  SPAN_LOOM_CODE_RUN,
} from "./semconv.ts";
import { clip, contextOf, failSpan, type Span, startSpan } from "./tracing.ts";
import { contentMode } from "./content.ts";

/** A stored result as a run's events name it (ids and digests are not content). */
export interface CodeResultFacts {
  /** The result id. */
  readonly result: string;
  /** SHA-256 of its bytes, lowercase hex. */
  readonly sha256: string;
  /** Its size in bytes. */
  readonly bytes: number;
}

/** How a run ended, for its span. */
export type CodeRunEnd =
  | {
    /** The run answered. */
    readonly calls: number;
    readonly ms: number;
    readonly logBytes: number;
  }
  | {
    /** The run failed: its error code (`code_timeout`, …) or `cancelled`. */
    readonly error: string;
    /** What went wrong. */
    readonly message?: string;
    /** Whether `message` quotes the code (then kept for `full` mode). */
    readonly messageIsContent?: boolean;
    readonly calls?: number;
    readonly ms?: number;
  };

/**
 * One run's span (see the module doc). Without a recording span every
 * method is a no-op and {@linkcode CodeRunSpan.within} calls straight
 * through.
 *
 * @example
 * ```ts
 * import { CodeRunSpan } from "./code.ts";
 * import assert from "node:assert/strict";
 * const run = CodeRunSpan.start("bubblewrap");
 * assert.equal(run.recording, false); // no provider registered here
 * assert.equal(run.within(() => 42), 42);
 * run.end({ calls: 0, ms: 3, logBytes: 0 });
 * ```
 */
export class CodeRunSpan {
  readonly #span: Span;
  readonly #context: Context;
  readonly #started = performance.now();

  private constructor(span: Span, parent: Context) {
    this.#span = span;
    this.#context = contextOf(span, parent);
  }

  /**
   * Starts a run's span under the active context.
   *
   * @param confinement `bubblewrap`, or `deno-flags-only` when unconfined.
   * @returns The span's handle.
   */
  static start(confinement: string): CodeRunSpan {
    const parent = context.active();
    const span = startSpan(SPAN_LOOM_CODE_RUN, { parent });
    if (span.isRecording()) {
      span.setAttribute(ATTR_LOOM_CODE_CONFINEMENT, confinement);
    }
    return new CodeRunSpan(span, parent);
  }

  /** Whether the span records (a provider is registered and sampled it). */
  get recording(): boolean {
    return this.#span.isRecording();
  }

  /**
   * The run got its turn: its deadline, and how long it waited.
   *
   * @param timeoutMs The deadline in milliseconds.
   */
  began(timeoutMs: number): void {
    if (!this.#span.isRecording()) return;
    this.#span.setAttribute(ATTR_LOOM_CODE_TIMEOUT_MS, timeoutMs);
    this.#span.setAttribute(
      ATTR_LOOM_CODE_QUEUED_MS,
      Math.round(performance.now() - this.#started),
    );
  }

  /**
   * Runs `fn` (one call, read or store of the code) with the run's span
   * active, so what it traces is the run's child.
   *
   * @param fn What to run.
   * @returns What `fn` returns.
   */
  within<T>(fn: () => T): T {
    return this.#span.isRecording() ? context.with(this.#context, fn) : fn();
  }

  /**
   * Adds `loom.store`: the code stored a value.
   *
   * @param stored Its result id, digest and size.
   */
  stored(stored: CodeResultFacts): void {
    if (!this.#span.isRecording()) return;
    this.#span.addEvent(EVENT_LOOM_STORE, resultAttributes(stored));
  }

  /**
   * Adds `loom.read`: the code read a reference (its id and digest, checked
   * by the read), or failed to (`error.type`).
   *
   * @param read The reference read, or the read's error code.
   */
  read(
    read: { readonly result: string; readonly sha256: string } | {
      readonly error: string;
    },
  ): void {
    if (!this.#span.isRecording()) return;
    this.#span.addEvent(
      EVENT_LOOM_READ,
      "error" in read ? { [ATTR_ERROR_TYPE]: clip(read.error, 64) } : {
        [ATTR_LOOM_RESULT_IDS]: [clip(read.result, 128)],
        [ATTR_LOOM_RESULT_SHA256]: [clip(read.sha256, 64)],
      },
    );
  }

  /**
   * Ends the span with the run's figures, or its error.
   *
   * @param end The outcome.
   */
  end(end: CodeRunEnd): void {
    const span = this.#span;
    if (span.isRecording()) {
      if (end.calls !== undefined) {
        span.setAttribute(ATTR_LOOM_CODE_CALLS, end.calls);
      }
      if (end.ms !== undefined) span.setAttribute(ATTR_LOOM_CODE_MS, end.ms);
      if ("logBytes" in end) {
        span.setAttribute(ATTR_LOOM_CODE_LOG_BYTES, end.logBytes);
      }
      if ("error" in end) {
        const said = end.messageIsContent === true && contentMode() !== "full"
          ? undefined
          : end.message;
        failSpan(span, end.error, said);
      }
    }
    span.end();
  }
}

function resultAttributes(stored: CodeResultFacts) {
  return {
    [ATTR_LOOM_RESULT_IDS]: [stored.result],
    [ATTR_LOOM_RESULT_SHA256]: [stored.sha256],
    [ATTR_LOOM_RESULT_BYTES]: [stored.bytes],
  };
}
