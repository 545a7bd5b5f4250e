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
  codeDescription,
  DECLARATIONS_MAX_BYTES,
} from "../code/code_description.ts";
import { codeAnswer, codeFailure } from "../code/code_answer.ts";
import { CodeError } from "../code/code_error.ts";
import type { AdapterOptions } from "./adapter_options.ts";
import { Core } from "./_core.ts";

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

/** The input schema of `run_code`. */
export const CODE_INPUT_SCHEMA: Record<string, unknown> = {
  type: "object",
  properties: {
    code: {
      type: "string",
      description:
        "The body of an async function, TypeScript or JavaScript; what it returns (JSON) is the answer",
    },
    timeout_ms: {
      type: "integer",
      minimum: 1,
      description: "The run's deadline in milliseconds",
    },
  },
  required: ["code"],
  additionalProperties: false,
};

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
      const { code, timeout_ms } = checkInput(input);
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
              return bridged.call(args, callSignal);
            },
            read: async (reference) => {
              await core.store.refresh();
              const read = core.retrieval.value(reference);
              if (read.ok) return read.value;
              throw Object.assign(new Error(read.message), {
                code: read.code,
              });
            },
            store: (text) => core.storeDescribed(text, "run_code"),
          },
        });
        return { ...await codeAnswer(outcome, store) };
      } catch (error) {
        if (!(error instanceof CodeError)) throw error;
        throw new CodeError(
          error.code,
          (await codeFailure(error, store)).text,
          { logs: error.logs, calls: error.calls, ms: error.ms },
        );
      }
    },
    close: () => runner.close(),
  };
}

function checkInput(
  input: unknown,
): { code: string; timeout_ms?: number } {
  const value = input as { code?: unknown; timeout_ms?: unknown } | null;
  const keys = typeof value === "object" && value !== null
    ? Object.keys(value)
    : [];
  if (
    typeof value?.code !== "string" ||
    keys.some((k) => k !== "code" && k !== "timeout_ms") ||
    (value.timeout_ms !== undefined &&
      (!Number.isSafeInteger(value.timeout_ms) ||
        (value.timeout_ms as number) < 1))
  ) {
    throw new TypeError(
      "invalid_arguments: run_code takes {code: string, timeout_ms?: integer >= 1}",
    );
  }
  return value.timeout_ms === undefined
    ? { code: value.code }
    : { code: value.code, timeout_ms: value.timeout_ms as number };
}
