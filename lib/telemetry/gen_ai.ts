/**
 * The GenAI spans of a slice (or any agent loop): `invoke_agent {name}`
 * around the run, `{operation} {model}` per provider request, and
 * `execute_tool {tool}` per action, with the conventions' metrics. Inputs
 * are plain values: this room imports nothing of Loom's.
 *
 * @module
 */
import type { Attributes } from "@opentelemetry/api";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOKEN_TYPE,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_DEFINITIONS,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_LOOM_OUTCOME,
  ATTR_LOOM_REQUEST_BYTES,
  ATTR_LOOM_SLICE_POLICY,
  ATTR_LOOM_SLICE_STEPS,
  ATTR_LOOM_SLICE_STOP,
  ATTR_LOOM_STAGE,
  ATTR_LOOM_STEP,
  GEN_AI_DURATION_BUCKETS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  GEN_AI_TOKEN_TYPE_VALUE_INPUT,
  GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
  GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
  METRIC_GEN_AI_EXECUTE_TOOL_DURATION,
  TOKEN_USAGE_BUCKETS,
} from "./semconv.ts";
import {
  clip,
  type Context,
  failSpan,
  LazyHistogram,
  secondsSince,
  type Span,
  SpanKind,
  startSpan,
} from "./tracing.ts";
import {
  type ContentMode,
  contentMode,
  type ContentReference,
  referencesJson,
} from "./content.ts";

const tokenUsage = new LazyHistogram(
  METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
  "{token}",
  "Number of input and output tokens used",
  TOKEN_USAGE_BUCKETS,
);
const operationDuration = new LazyHistogram(
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  "s",
  "GenAI operation duration",
  GEN_AI_DURATION_BUCKETS,
);
const toolDuration = new LazyHistogram(
  METRIC_GEN_AI_EXECUTE_TOOL_DURATION,
  "s",
  "The duration of a single tool execution",
  GEN_AI_DURATION_BUCKETS,
);

/** Which model a loop talks to, from a spec like `anthropic:claude-sonnet-4-5`. */
export interface ModelTarget {
  /** `gen_ai.provider.name`: `anthropic`, `openai`, or the spec's scheme. */
  readonly provider: string;
  /** `gen_ai.request.model`, when the spec names one. */
  readonly model?: string;
}

/**
 * The provider and model a model spec names. `anthropic:` and `openai:`
 * map to the conventions' well-known providers; other schemes (`recorded`,
 * `scripted`) keep their name and no model (a recording's path is not a
 * model).
 *
 * @param spec The spec.
 * @returns The target.
 *
 * @example
 * ```ts
 * import { modelTarget } from "./gen_ai.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(modelTarget("anthropic:claude-sonnet-4-5"), { provider: "anthropic", model: "claude-sonnet-4-5" });
 * assert.deepEqual(modelTarget("recorded:fixtures/r.json"), { provider: "recorded" });
 * ```
 */
export function modelTarget(spec: string): ModelTarget {
  const colon = spec.indexOf(":");
  const scheme = colon < 0 ? spec : spec.slice(0, colon);
  const rest = colon < 0 ? "" : spec.slice(colon + 1);
  if ((scheme === "anthropic" || scheme === "openai") && rest !== "") {
    return { provider: scheme, model: clip(rest, 256) };
  }
  return { provider: clip(scheme === "" ? "unknown" : scheme, 64) };
}

/** Token counters as a provider reports them (`null`: not reported). */
export interface ReportedUsage {
  readonly input_tokens: number | null;
  readonly output_tokens: number | null;
  readonly cache_read_tokens: number | null;
  readonly cache_write_tokens: number | null;
}

/** Token usage by the conventions: input includes cache reads and writes. */
export interface GenAiUsage {
  readonly input?: number;
  readonly output?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/**
 * The conventions' token figures from a provider's counters. OpenAI's
 * `prompt_tokens` already include cached tokens; Anthropic's `input_tokens`
 * do not, so cache reads and writes are added (as for every provider that
 * is not OpenAI's: the counters are named after Anthropic's).
 *
 * @param provider `gen_ai.provider.name`.
 * @param usage The counters.
 * @returns The figures; a counter not reported is left out.
 *
 * @example
 * ```ts
 * import { genAiUsage } from "./gen_ai.ts";
 * import assert from "node:assert/strict";
 * const usage = { input_tokens: 10, output_tokens: 5, cache_read_tokens: 100, cache_write_tokens: 20 };
 * assert.equal(genAiUsage("anthropic", usage).input, 130);
 * assert.equal(genAiUsage("openai", { ...usage, input_tokens: 130, cache_write_tokens: null }).input, 130);
 * ```
 */
export function genAiUsage(
  provider: string,
  usage: ReportedUsage,
): GenAiUsage {
  const read = usage.cache_read_tokens;
  const write = usage.cache_write_tokens;
  const reported = usage.input_tokens;
  const input = reported === null
    ? undefined
    : provider === GEN_AI_PROVIDER_NAME_VALUE_OPENAI
    ? reported
    : reported + (read ?? 0) + (write ?? 0);
  return {
    ...(input === undefined ? {} : { input }),
    ...(usage.output_tokens === null ? {} : { output: usage.output_tokens }),
    ...(read === null ? {} : { cacheRead: read }),
    ...(write === null ? {} : { cacheWrite: write }),
  };
}

// --- invoke_agent ----------------------------------------------------------

/** What the agent span starts with. */
export interface AgentStart extends ModelTarget {
  /** `gen_ai.agent.name`, e.g. `loom`. */
  readonly agent: string;
  /** The context policy. */
  readonly policy: string;
  /** The session the run is saved in, if any (`gen_ai.conversation.id`). */
  readonly sessionId?: string;
}

/**
 * Starts `invoke_agent {agent}` (kind `INTERNAL`).
 *
 * @param start Agent, provider, model, policy, session.
 * @returns The span.
 */
export function startAgentSpan(start: AgentStart): Span {
  const span = startSpan(`invoke_agent ${start.agent}`, {
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [ATTR_GEN_AI_PROVIDER_NAME]: start.provider,
      [ATTR_GEN_AI_AGENT_NAME]: start.agent,
      ...(start.model === undefined
        ? {}
        : { [ATTR_GEN_AI_REQUEST_MODEL]: start.model }),
    },
  });
  if (span.isRecording()) {
    span.setAttribute(ATTR_LOOM_SLICE_POLICY, start.policy);
    if (start.sessionId !== undefined) {
      span.setAttribute(ATTR_GEN_AI_CONVERSATION_ID, start.sessionId);
    }
  }
  return span;
}

/**
 * Ends the agent span with how the run stopped; a stop other than
 * `completed` is its `error.type`.
 *
 * @param span The span of {@linkcode startAgentSpan}.
 * @param end The stop reason, its detail and the steps taken.
 */
export function endAgentSpan(
  span: Span,
  end: {
    readonly stop: string;
    readonly detail: string;
    readonly steps: number;
  },
): void {
  if (span.isRecording()) {
    span.setAttribute(ATTR_LOOM_SLICE_STOP, end.stop);
    span.setAttribute(ATTR_LOOM_SLICE_STEPS, end.steps);
    if (end.stop !== "completed") failSpan(span, end.stop, end.detail);
  }
  span.end();
}

// --- model calls -----------------------------------------------------------

/** One provider request in flight. */
export interface ModelCallSpan {
  readonly span: Span;
  readonly target: ModelTarget;
  readonly started: number;
}

/**
 * Starts `chat {model}` (kind `CLIENT`) under the agent span.
 *
 * @param parent The agent span's context.
 * @param target Provider and model.
 * @param step The step (1-based) and stage of the call.
 * @returns The call's span and start time.
 */
export function startModelCall(
  parent: Context,
  target: ModelTarget,
  step: { readonly step: number; readonly stage: string },
): ModelCallSpan {
  const operation = GEN_AI_OPERATION_NAME_VALUE_CHAT;
  const span = startSpan(
    target.model === undefined ? operation : `${operation} ${target.model}`,
    {
      kind: SpanKind.CLIENT,
      parent,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: operation,
        [ATTR_GEN_AI_PROVIDER_NAME]: target.provider,
        ...(target.model === undefined
          ? {}
          : { [ATTR_GEN_AI_REQUEST_MODEL]: target.model }),
      },
    },
  );
  if (span.isRecording()) {
    span.setAttribute(ATTR_LOOM_STEP, step.step);
    span.setAttribute(ATTR_LOOM_STAGE, step.stage);
  }
  return { span, target, started: performance.now() };
}

/** What the provider said about its response, when it said it. */
export interface ModelResponseFacts {
  readonly id?: string;
  readonly model?: string;
  readonly finish_reasons?: readonly string[];
}

/** The content of one model call, for `full` mode (built only then). */
export interface ModelCallContent {
  readonly system: readonly { readonly text: string }[];
  readonly messages: readonly {
    readonly role: string;
    readonly content: readonly { readonly text: string }[];
  }[];
  readonly tool: {
    readonly name: string;
    readonly description: string;
    readonly input_schema: unknown;
  };
  /** The forced call's arguments, when the model answered. */
  readonly arguments?: unknown;
}

/** How a model call ended. */
export interface ModelCallEnd {
  /** Bytes of the provider-neutral request. */
  readonly requestBytes: number;
  /** The counters, when reported (also on failures that carry them). */
  readonly usage?: ReportedUsage | null;
  readonly response?: ModelResponseFacts;
  /** The failure's code and message, when the call failed. */
  readonly error?: { readonly type: string; readonly message: string };
  /** The content, asked for only in `full` mode. */
  readonly content?: () => ModelCallContent;
}

/**
 * Ends a model call's span with its usage, response and (in `full` mode)
 * content, and records the duration and token metrics.
 *
 * @param call The call of {@linkcode startModelCall}.
 * @param end What came of it.
 */
export function endModelCall(call: ModelCallSpan, end: ModelCallEnd): void {
  const { span, target } = call;
  const seconds = secondsSince(call.started);
  const usage = end.usage == null
    ? undefined
    : genAiUsage(target.provider, end.usage);
  if (span.isRecording()) {
    span.setAttribute(ATTR_LOOM_REQUEST_BYTES, end.requestBytes);
    if (usage !== undefined) setUsage(span, usage);
    const response = end.response;
    if (response?.id !== undefined) {
      span.setAttribute(ATTR_GEN_AI_RESPONSE_ID, clip(response.id, 256));
    }
    if (response?.model !== undefined) {
      span.setAttribute(ATTR_GEN_AI_RESPONSE_MODEL, clip(response.model, 256));
    }
    if (response?.finish_reasons !== undefined) {
      span.setAttribute(
        ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
        response.finish_reasons.map((r) => clip(r, 64)),
      );
    }
    if (end.error !== undefined) {
      failSpan(span, end.error.type, end.error.message);
    }
    if (end.content !== undefined && contentMode() === "full") {
      setModelContent(span, end.content());
    }
  }
  span.end();
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    [ATTR_GEN_AI_PROVIDER_NAME]: target.provider,
    ...(target.model === undefined
      ? {}
      : { [ATTR_GEN_AI_REQUEST_MODEL]: target.model }),
    ...(end.error === undefined ? {} : { "error.type": end.error.type }),
  };
  operationDuration.record(seconds, attributes);
  if (usage?.input !== undefined) {
    tokenUsage.record(usage.input, {
      ...attributes,
      [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_INPUT,
    });
  }
  if (usage?.output !== undefined) {
    tokenUsage.record(usage.output, {
      ...attributes,
      [ATTR_GEN_AI_TOKEN_TYPE]: GEN_AI_TOKEN_TYPE_VALUE_OUTPUT,
    });
  }
}

function setUsage(span: Span, usage: GenAiUsage): void {
  if (usage.input !== undefined) {
    span.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, usage.input);
  }
  if (usage.output !== undefined) {
    span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, usage.output);
  }
  if (usage.cacheRead !== undefined) {
    span.setAttribute(
      ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
      usage.cacheRead,
    );
  }
  if (usage.cacheWrite !== undefined) {
    span.setAttribute(
      ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
      usage.cacheWrite,
    );
  }
}

/**
 * The conventions' message shapes (JSON strings on spans, as they allow
 * where structured attributes are not supported).
 */
function setModelContent(span: Span, content: ModelCallContent): void {
  span.setAttribute(
    ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
    JSON.stringify(
      content.system.map((b) => ({ type: "text", content: b.text })),
    ),
  );
  span.setAttribute(
    ATTR_GEN_AI_INPUT_MESSAGES,
    JSON.stringify(content.messages.map((m) => ({
      role: m.role,
      parts: m.content.map((b) => ({ type: "text", content: b.text })),
    }))),
  );
  span.setAttribute(
    ATTR_GEN_AI_TOOL_DEFINITIONS,
    JSON.stringify([{
      type: GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
      name: content.tool.name,
      description: content.tool.description,
      parameters: content.tool.input_schema,
    }]),
  );
  if (content.arguments !== undefined) {
    span.setAttribute(
      ATTR_GEN_AI_OUTPUT_MESSAGES,
      JSON.stringify([{
        role: "assistant",
        parts: [{
          type: "tool_call",
          name: content.tool.name,
          arguments: content.arguments,
        }],
        finish_reason: "tool_call",
      }]),
    );
  }
}

// --- execute_tool ----------------------------------------------------------

/** One tool execution in flight. */
export interface ToolSpan {
  readonly span: Span;
  readonly tool: string;
  readonly agent: string | undefined;
  readonly started: number;
}

/**
 * Starts `execute_tool {tool}` (kind `INTERNAL`).
 *
 * @param parent The parent's context (the agent span's, or the active one).
 * @param start The tool, its call id and the agent that runs it.
 * @returns The tool's span and start time.
 */
export function startToolSpan(
  parent: Context | undefined,
  start: {
    readonly tool: string;
    readonly callId?: string;
    readonly agent?: string;
    readonly step?: number;
  },
): ToolSpan {
  const span = startSpan(`execute_tool ${start.tool}`, {
    ...(parent === undefined ? {} : { parent }),
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: start.tool,
    },
  });
  if (span.isRecording()) {
    span.setAttribute(ATTR_GEN_AI_TOOL_TYPE, GEN_AI_TOOL_TYPE_VALUE_FUNCTION);
    if (start.callId !== undefined) {
      span.setAttribute(ATTR_GEN_AI_TOOL_CALL_ID, start.callId);
    }
    if (start.step !== undefined) span.setAttribute(ATTR_LOOM_STEP, start.step);
  }
  return {
    span,
    tool: start.tool,
    agent: start.agent,
    started: performance.now(),
  };
}

/** What a tool's content is, by mode (each built only when asked). */
export interface ToolContent {
  /** The arguments (JSON value), for `full`. */
  readonly arguments?: () => unknown;
  /** The result's text, for `full`. */
  readonly result?: () => string | undefined;
  /** The references of what the result was stored as, for `reference`. */
  readonly references?: () => readonly ContentReference[];
}

/**
 * Ends a tool's span with its outcome, `error.type` when it failed, and
 * its content by the content mode; records `gen_ai.execute_tool.duration`.
 *
 * @param tool The span of {@linkcode startToolSpan}.
 * @param end The outcome, the error and the content.
 */
export function endToolSpan(
  tool: ToolSpan,
  end: {
    readonly outcome: string;
    readonly error?: { readonly type: string; readonly message: string };
    readonly content?: ToolContent;
  },
): void {
  const { span } = tool;
  if (span.isRecording()) {
    span.setAttribute(ATTR_LOOM_OUTCOME, end.outcome);
    if (end.error !== undefined) {
      failSpan(span, end.error.type, end.error.message);
    }
    if (end.content !== undefined) {
      setToolContent(span, contentMode(), end.content);
    }
  }
  span.end();
  toolDuration.record(secondsSince(tool.started), {
    [ATTR_GEN_AI_TOOL_NAME]: tool.tool,
    [ATTR_GEN_AI_TOOL_TYPE]: GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
    ...(tool.agent === undefined
      ? {}
      : { [ATTR_GEN_AI_AGENT_NAME]: tool.agent }),
    ...(end.error === undefined ? {} : { "error.type": end.error.type }),
  });
}

/**
 * Puts a tool call's content on a span by mode: nothing for `none`,
 * references in `gen_ai.tool.call.result` for `reference`, the arguments
 * and the result for `full`.
 *
 * @param span A recording span.
 * @param mode The content mode.
 * @param content The content's builders.
 */
export function setToolContent(
  span: Span,
  mode: ContentMode,
  content: ToolContent,
): void {
  if (mode === "reference") {
    const references = content.references?.() ?? [];
    if (references.length > 0) {
      span.setAttribute(
        ATTR_GEN_AI_TOOL_CALL_RESULT,
        referencesJson(references),
      );
    }
  } else if (mode === "full") {
    const args = content.arguments?.();
    if (args !== undefined) {
      span.setAttribute(ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, JSON.stringify(args));
    }
    const result = content.result?.();
    if (result !== undefined) {
      span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, result);
    }
  }
}
