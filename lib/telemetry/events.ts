/**
 * Span events of what happens inside a step: a retirement checkpoint, a
 * test run, a result an adapter offloaded. The adapters add theirs to the
 * active span, so they show inside an SDK's own traces (the AI SDK's
 * `ai.toolCall` span, say).
 *
 * @module
 */
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_LOOM_BYTES_TO_HOST,
  ATTR_LOOM_BYTES_UPSTREAM,
  ATTR_LOOM_CHECKPOINTS,
  ATTR_LOOM_RESULT_IDS,
  ATTR_LOOM_RESULT_SHA256,
  ATTR_LOOM_RETIRED,
  ATTR_LOOM_TEST_EXIT_CODE,
  ATTR_LOOM_TEST_REVISION,
  ATTR_LOOM_TEST_TIMED_OUT,
  EVENT_LOOM_OFFLOAD,
  EVENT_LOOM_RETIREMENT,
  EVENT_LOOM_TEST_RUN,
} from "./semconv.ts";
import { recordingActiveSpan, type Span } from "./tracing.ts";

/**
 * Adds `loom.retirement`: results retired at a checkpoint.
 *
 * @param span The span (the agent's, or the active one when absent).
 * @param retirement How many results were retired, and the checkpoints so far.
 */
export function retirementEvent(
  span: Span | undefined,
  retirement: { readonly retired: number; readonly checkpoints?: number },
): void {
  const target = span ?? recordingActiveSpan();
  if (target === undefined || !target.isRecording()) return;
  target.addEvent(EVENT_LOOM_RETIREMENT, {
    [ATTR_LOOM_RETIRED]: retirement.retired,
    ...(retirement.checkpoints === undefined
      ? {}
      : { [ATTR_LOOM_CHECKPOINTS]: retirement.checkpoints }),
  });
}

/**
 * Adds `loom.test_run`: a test run's exit code, whether it timed out, and
 * the revision it tested.
 *
 * @param span The span of the `tests.run` action.
 * @param run The run.
 */
export function testRunEvent(
  span: Span,
  run: {
    readonly exitCode: number;
    readonly timedOut: boolean;
    readonly revision: string | null;
  },
): void {
  if (!span.isRecording()) return;
  span.addEvent(EVENT_LOOM_TEST_RUN, {
    [ATTR_LOOM_TEST_EXIT_CODE]: run.exitCode,
    [ATTR_LOOM_TEST_TIMED_OUT]: run.timedOut,
    ...(run.revision === null
      ? {}
      : { [ATTR_LOOM_TEST_REVISION]: run.revision }),
  });
}

/** A tool's output stored and replaced by its descriptor. */
export interface OffloadFacts {
  /** The tool's name. */
  readonly tool: string;
  /** The result id it was stored as. */
  readonly result: string;
  /** SHA-256 of its bytes. */
  readonly sha256: string;
  /** Its size in bytes. */
  readonly bytes: number;
  /** Bytes of the descriptor the model sees instead. */
  readonly sentBytes: number;
}

/**
 * Adds `loom.offload` to the active span.
 *
 * @param offload The tool, the result id and digest, and the sizes.
 * @returns Whether a recording span was active to take it.
 */
export function offloadEvent(offload: OffloadFacts): boolean {
  const span = recordingActiveSpan();
  if (span === undefined) return false;
  span.addEvent(EVENT_LOOM_OFFLOAD, {
    [ATTR_GEN_AI_TOOL_NAME]: offload.tool,
    [ATTR_LOOM_RESULT_IDS]: [offload.result],
    [ATTR_LOOM_RESULT_SHA256]: [offload.sha256],
    [ATTR_LOOM_BYTES_UPSTREAM]: offload.bytes,
    [ATTR_LOOM_BYTES_TO_HOST]: offload.sentBytes,
  });
  return true;
}
