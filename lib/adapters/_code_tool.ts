/**
 * `codeTool` without the AI SDK: the developer's tools (already reduced to
 * JSON Schemas and a call function by `ai_sdk.ts`) as `tools.<name>(args)`
 * inside `run_code`'s sandbox, their schemas as declarations, and the
 * adapters' store for `loom.read`, `loom.store` and answers too large to
 * send.
 *
 * @module
 */
import { CodeRunner, type CodeRunnerOptions } from "../code/code_runner.ts";
import { flatCodeNames } from "../code/code_names.ts";
import { declareTools } from "../code/declarations.ts";
import {
  codeArguments,
  codeDescription,
  DECLARATIONS_MAX_BYTES,
} from "../code/code_description.ts";
export { CODE_INPUT_SCHEMA } from "../code/code_description.ts";
import { codeAnswer, codeFailure } from "../code/code_answer.ts";
import { CodeError } from "../code/code_error.ts";
import type { AdapterOptions } from "./adapter_options.ts";
import { takeInFor } from "../reference/referenced_results.ts";
import { Core, utf8Bytes } from "./_core.ts";
import { endToolSpan, startToolSpan } from "../telemetry/gen_ai.ts";
import { errorTypeOf } from "../telemetry/tracing.ts";

/** One developer tool, reduced to what the sandbox needs. */
export interface BridgedTool {
  /** Its name in the tool set. */
  readonly name: string;
  /** Its description. */
  readonly description?: string;
  /** Its input schema as JSON Schema. */
  readonly inputSchema: unknown;
  /** Its output schema as JSON Schema, when it has one. */
  readonly outputSchema?: unknown;
  /** Checks the arguments as the SDK would, runs the tool, answers its output. */
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** A started code tool: description, `execute`, and its runner to close. */
export interface StartedCodeTool {
  /** What the model reads. */
  readonly description: string;
  /** Runs one call's code. */
  execute(
    input: unknown,
    signal: AbortSignal | undefined,
  ): Promise<Record<string, unknown>>;
  /** Closes the runner. */
  close(): Promise<void>;
}

/**
 * Starts the runner and builds the tool.
 *
 * @throws {ConfinementUnavailableError} Without a working bubblewrap,
 *   unless `unconfined`.
 */
export async function startCodeTool(
  tools: readonly BridgedTool[],
  options: AdapterOptions & CodeRunnerOptions,
): Promise<StartedCodeTool> {
  const core = new Core(options);
  const runner = await CodeRunner.start(options);
  const names = flatCodeNames(tools.map((t) => t.name));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const declarations = declareTools(
    tools.map((t, i) => ({
      ...names[i]!,
      ...(t.description === undefined ? {} : { description: t.description }),
      inputSchema: t.inputSchema,
      ...(t.outputSchema === undefined ? {} : { outputSchema: t.outputSchema }),
    })),
    { results: "value" },
  );
  const description = codeDescription({
    results: "value",
    limits: runner.limits,
    offloadBytes: core.offloadBytes,
    tools: declarations.bytes <= DECLARATIONS_MAX_BYTES
      ? { declarations: declarations.text }
      : {
        names,
        types: "each takes the arguments its own tool definition describes",
      },
    unconfined: !runner.confined,
  });
  const store = {
    offloadBytes: core.offloadBytes,
    store: (text: string) => core.storeDescribed(text, "run_code"),
  };
  return {
    description,
    async execute(input, signal) {
      const { code, timeout_ms } = codeArguments(input);
      try {
        const outcome = await runner.run(code, {
          tools: names,
          results: "value",
          ...(timeout_ms === undefined ? {} : { timeoutMs: timeout_ms }),
          ...(signal === undefined ? {} : { signal }),
          bridge: {
            callTool: (_server, tool, args, callSignal) => {
              const bridged = byName.get(tool);
              if (bridged === undefined) {
                return Promise.reject(
                  Object.assign(new Error(`There is no tool ${tool}`), {
                    code: "unknown_tool",
                  }),
                );
              }
              return traceCall(bridged, args, callSignal);
            },
            read: async (reference) => {
              await takeInFor(core.store, "read_result", { reference });
              const read = core.retrieval.value(reference);
              if (read.ok) return read.value;
              throw Object.assign(new Error(read.message), {
                code: read.code,
              });
            },
            store: (text) => core.storeDescribed(text, "run_code"),
          },
        });
        const answer = await codeAnswer(outcome, store);
        tellStored(core, answer, utf8Bytes(JSON.stringify(answer)));
        return { ...answer };
      } catch (error) {
        if (!(error instanceof CodeError)) throw error;
        const failed = await codeFailure(error, store);
        tellStored(core, failed.details, utf8Bytes(failed.text));
        throw new CodeError(error.code, failed.text, {
          logs: error.logs,
          calls: error.calls,
          ms: error.ms,
        });
      }
    },
    close: () => runner.close(),
  };
}

/**
 * One call of a developer's tool from code, as the AI SDK would trace a
 * tool it executes: an `execute_tool {name}` span, the child of the run's
 * span (the arguments and the output only in `full` content mode).
 */
async function traceCall(
  bridged: BridgedTool,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<unknown> {
  const span = startToolSpan(undefined, { tool: bridged.name });
  try {
    const output = await bridged.call(args, signal);
    endToolSpan(span, {
      outcome: "ok",
      content: {
        arguments: () => args,
        result: () => JSON.stringify(output) ?? "null",
      },
    });
    return output;
  } catch (error) {
    const type = errorTypeOf(error);
    // The tool's own message may quote its data: the span says only which.
    endToolSpan(span, {
      outcome: "error",
      error: { type, message: `${bridged.name} failed (${type})` },
    });
    throw error;
  }
}

/**
 * A run's answer whose value or logs were stored, told as the adapters tell
 * every offload: a `loom.offload` event inside the SDK's trace.
 */
function tellStored(
  core: Core,
  answer: { readonly result_stored?: unknown; readonly logs_stored?: unknown },
  sentBytes: number,
): void {
  for (const part of [answer.result_stored, answer.logs_stored]) {
    const d = part as Record<string, unknown> | undefined;
    if (typeof d?.result !== "string" || typeof d.sha256 !== "string") continue;
    core.tellOffload({
      tool: "run_code",
      result: d.result,
      sha256: d.sha256,
      bytes: typeof d.utf8_bytes === "number" ? d.utf8_bytes : 0,
      sentBytes,
    });
  }
}
