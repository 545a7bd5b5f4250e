/**
 * Loom inside an AI SDK loop (`ai` 7, language-model specification v4):
 * {@linkcode loomTools} keeps large tool results in the result store and
 * shows the model a descriptor, {@linkcode retrievalTools} lets the model
 * read and search them, and {@linkcode loomMiddleware} (for
 * `wrapLanguageModel`) places Anthropic's cache breakpoints on the stable
 * prefix, names OpenAI's prompt cache by its digest, and retires old tool
 * results into compact descriptors in batches when a prompt passes its
 * budget.
 *
 * @module
 */
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultPart,
  SharedV4ProviderOptions,
} from "@ai-sdk/provider";
import type { ResultStore } from "../store/result_store.ts";
import {
  type JsonSchema,
  RETRIEVAL_TOOLS,
  type RetrievalToolName,
} from "../reference/retrieval_tools.ts";
import { asSchema, type FlexibleSchema } from "ai";
import type { AdapterOptions } from "./adapter_options.ts";
import {
  type BridgedTool,
  CODE_INPUT_SCHEMA,
  startCodeTool,
} from "./_code_tool.ts";
import { Core, prefixDigest, serialize, type Slot } from "./_core.ts";

export type { AdapterOptions } from "./adapter_options.ts";

type ToolOutput = LanguageModelV4ToolResultPart["output"];

/**
 * What {@linkcode loomTools} needs of an AI SDK tool, and every tool made
 * with the SDK's `tool()` (or written as a plain object) has: an input
 * schema and, for a tool the SDK runs, `execute`. A local stand-in for the
 * SDK's own `Tool` type, so Loom's signatures do not depend on the SDK's
 * type names; `loomTools` hands back the developer's own tool types.
 */
export interface AiSdkTool {
  /** The tool's input schema, in any form the SDK takes. */
  readonly inputSchema: unknown;
  /** Runs the tool; a tool without it (provider-executed) passes unchanged. */
  readonly execute?: ((input: never, options: never) => unknown) | undefined;
}

/**
 * One retrieval tool in the AI SDK's form: a function tool with a JSON
 * Schema input (as a Standard Schema with a JSON Schema converter, a form
 * `generateText` and `streamText` take as `inputSchema`) and an `execute`
 * that answers the structured JSON of `loom mcp`'s tool.
 */
export interface RetrievalTool {
  /** What the tool does, for the model. */
  readonly description: string;
  /**
   * The input schema: `~standard.jsonSchema.input()` answers the tool's JSON
   * Schema; `~standard.validate` accepts any value (the tool checks its
   * arguments itself and answers `invalid_arguments`).
   */
  readonly inputSchema: {
    readonly "~standard": {
      readonly version: 1;
      readonly vendor: string;
      readonly validate: (
        value: unknown,
      ) => { readonly value: unknown; readonly issues?: undefined };
      readonly jsonSchema: {
        readonly input: (
          options: { readonly target: string },
        ) => Record<string, unknown>;
        readonly output: (
          options: { readonly target: string },
        ) => Record<string, unknown>;
      };
    };
  };
  /**
   * Answers a call with the tool's structured JSON.
   *
   * @throws {ReferenceFailureError} A tool error whose message starts with
   *   its code.
   */
  readonly execute: (input: unknown) => Promise<Record<string, unknown>>;
}

/**
 * The three retrieval tools, keyed by name, as `generateText` takes them
 * (a type alias, not an interface, so it fits the SDK's `ToolSet` index
 * signature as it is, spread or not).
 */
export type RetrievalToolSet = {
  /** `read_result {reference}`. */
  readonly read_result: RetrievalTool;
  /** `find_in_result {reference, pattern, regex?, max_matches?}`. */
  readonly find_in_result: RetrievalTool;
  /** `list_results {offset?}`. */
  readonly list_results: RetrievalTool;
};

/**
 * The language-model middleware {@linkcode loomMiddleware} returns: a local
 * stand-in for the SDK's `LanguageModelV4Middleware` that
 * `wrapLanguageModel` takes as it is. `transformParams` is generic over the
 * SDK's call options, so what goes in comes back with the same type.
 */
export interface AiSdkMiddleware {
  /** The middleware specification, `v4` (AI SDK 7). */
  readonly specificationVersion: "v4";
  /**
   * Shapes one call's options: retirement, cache breakpoints, cache key.
   *
   * @param options The call (`generate` or `stream`), its options and the
   *   model.
   * @returns The shaped call options.
   */
  readonly transformParams: <
    P extends {
      readonly prompt: readonly { readonly role: string }[];
    },
  >(
    options: {
      readonly type: "generate" | "stream";
      readonly params: P;
      readonly model: unknown;
    },
  ) => Promise<P>;
}

/**
 * Wraps AI SDK tools so a result whose serialized size passes
 * `offloadBytes` goes into the store and the model sees its descriptor
 * (id, digest, size, preview, and an outline for JSON) through
 * `toModelOutput`; smaller results pass unchanged, and the tool's own
 * `execute` and return value are untouched.
 *
 * @param tools The tools, as `generateText` takes them.
 * @param options `store` (default: the adapters' shared in-memory store)
 *   and `offloadBytes` (8,192).
 * @returns The same tools, each with a `toModelOutput` that offloads, typed
 *   as the tools given.
 *
 * @example
 * ```ts
 * import { loomTools, retrievalTools } from "@loom/loom/ai-sdk";
 * import { ResultStore } from "@loom/loom/reference";
 * import { jsonSchema, tool } from "ai";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const tools = {
 *   ...loomTools({
 *     rows: tool({
 *       inputSchema: jsonSchema({ type: "object", properties: {} }),
 *       execute: () => Array.from({ length: 2000 }, (_, id) => ({ id })),
 *     }),
 *   }, { store }),
 *   ...retrievalTools(store),
 * };
 * const output = await tools.rows.toModelOutput!({
 *   toolCallId: "c1",
 *   input: {},
 *   output: Array.from({ length: 2000 }, (_, id) => ({ id })),
 * });
 * assert.equal(output.type, "text");
 * assert.match(String(output.value), /"result":"result-1"/);
 * assert.equal(store.count, 1);
 * ```
 */
export function loomTools<
  T extends { readonly [name: string]: AiSdkTool },
>(
  tools: T,
  options?: AdapterOptions,
): T {
  const core = new Core(options);
  const wrapped: Record<string, unknown> = {};
  for (const [name, original] of Object.entries(tools)) {
    if (typeof original.execute !== "function") {
      wrapped[name] = original;
      continue;
    }
    const own = (original as { toModelOutput?: unknown }).toModelOutput as
      | ((o: {
        toolCallId: string;
        input: unknown;
        output: unknown;
      }) => PromiseLike<ToolOutput> | ToolOutput)
      | undefined;
    wrapped[name] = {
      ...original,
      toModelOutput: async (
        o: { toolCallId: string; input: unknown; output: unknown },
      ): Promise<ToolOutput> => {
        const described = await core.offload(o.toolCallId, name, o.output);
        if (described !== undefined) return { type: "text", value: described };
        if (own !== undefined) return await own(o);
        return typeof o.output === "string"
          ? { type: "text", value: o.output }
          : { type: "json", value: JSON.parse(serialize(o.output)) };
      },
    };
  }
  return wrapped as T;
}

/** A Standard Schema (standardschema.dev) around one JSON Schema. */
function standardJsonSchema(
  schema: JsonSchema,
): RetrievalTool["inputSchema"] {
  // The SDK completes `additionalProperties` in place: hand out a copy.
  const copy = () => structuredClone(schema) as Record<string, unknown>;
  return {
    "~standard": {
      version: 1,
      vendor: "loom",
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: copy, output: copy },
    },
  };
}

/**
 * `read_result`, `find_in_result` and `list_results` as AI SDK tools over
 * one store, with the wire formats, 8 KiB continued reads and error codes
 * of `loom mcp`. A failure is a tool error whose text starts with its code;
 * a reference to a result the store does not hold answers `unknown_result`
 * saying what to do instead.
 *
 * @param store The store (default: the adapters' shared in-memory store).
 * @returns The three tools, keyed by name.
 *
 * @example
 * ```ts
 * import { retrievalTools } from "@loom/loom/ai-sdk";
 * import { ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put('{"a":{"b":42}}', { origin: "t", capture: "complete" });
 * const tools = retrievalTools(store);
 * const answer = await tools.read_result.execute({
 *   reference: { ...d.reference, select: { kind: "json_pointer", pointer: "/a/b" }, rendering: "json" },
 * });
 * assert.deepEqual(answer, { selected_json: "42" });
 * ```
 */
export function retrievalTools(store?: ResultStore): RetrievalToolSet {
  const core = new Core(store === undefined ? {} : { store });
  const out: Partial<Record<RetrievalToolName, RetrievalTool>> = {};
  for (const definition of RETRIEVAL_TOOLS) {
    out[definition.name] = {
      description: definition.description,
      inputSchema: standardJsonSchema(definition.inputSchema),
      execute: (args: unknown) => core.answer(definition.name, args),
    };
  }
  return out as RetrievalToolSet;
}

/** Options of {@linkcode codeTool}. */
export interface CodeToolOptions extends AdapterOptions {
  /**
   * The tools the code may call as `tools.<name>(args)`: AI SDK tools with
   * `execute` (others are left out). Arguments are checked by each tool's
   * own input schema, as the SDK checks the model's.
   */
  readonly tools: { readonly [name: string]: AiSdkTool };
  /**
   * Run code confined by Deno's permission flags alone, without
   * bubblewrap. Default `false`: without a working bubblewrap
   * {@linkcode codeTool} throws `confinement_unavailable`.
   */
  readonly unconfined?: boolean;
  /** The bubblewrap program (default `bwrap` on `PATH`). */
  readonly sandbox?: string;
  /** V8 heap limit of a run in MiB (256). */
  readonly memoryMiB?: number;
  /** A run's deadline when the model asks for none, in ms (30,000). */
  readonly defaultTimeoutMs?: number;
  /** The longest deadline a run may ask for, in ms (120,000). */
  readonly maxTimeoutMs?: number;
  /** Tool calls a run may make (500). */
  readonly maxCalls?: number;
}

/**
 * The tool {@linkcode codeTool} makes: an AI SDK function tool (put it in
 * `tools` as `run_code`) whose runner is closed with `close()` or `await
 * using`.
 */
export interface CodeAiTool extends AsyncDisposable {
  /** What the model reads: the helpers, the limits, the tools' declarations. */
  readonly description: string;
  /** `{code, timeout_ms?}`, as a Standard Schema with its JSON Schema. */
  readonly inputSchema: RetrievalTool["inputSchema"];
  /**
   * Runs the model's code: answers `{result | result_stored, logs, calls,
   * ms}`.
   *
   * @throws {CodeError} `code_timeout`, `code_memory`, `code_calls`,
   *   `code_output` or `code_error`, its message with the logs so far (the
   *   SDK hands it to the model as a tool error).
   */
  readonly execute: (
    input: unknown,
    options?: { readonly abortSignal?: AbortSignal },
  ) => Promise<Record<string, unknown>>;
  /** Stops running code and removes the runner's files. */
  close(): Promise<void>;
}

/**
 * `run_code` for an AI SDK loop: the model writes TypeScript that calls the
 * developer's own tools as `tools.<name>(args)` inside the same confined
 * sandbox as `loom mcp --code` (a fresh Deno process per run, no
 * permission, bubblewrap with nothing of the file system but Deno itself),
 * so their results move from tool to tool without passing through the
 * prompt. The tools' input (and output) schemas become the TypeScript
 * declarations of the tool's description; a large answer and long logs go
 * into the store and come back as descriptors, read with
 * {@linkcode retrievalTools}; `loom.read(reference)` and `loom.store(value)`
 * work on the same store.
 *
 * @param options The tools, the store and the limits.
 * @returns The tool; close it (or `await using` it) when done.
 * @throws {ConfinementUnavailableError} Without a working bubblewrap,
 *   unless `unconfined`.
 *
 * @example
 * ```ts
 * import { codeTool } from "@loom/loom/ai-sdk";
 * import { jsonSchema, tool } from "ai";
 * import assert from "node:assert/strict";
 * const prices = tool({
 *   description: "Prices of the items",
 *   inputSchema: jsonSchema<{ max?: number }>({ type: "object", properties: { max: { type: "number" } } }),
 *   execute: ({ max }) => [120, 5, 80].filter((p) => max === undefined || p <= max),
 * });
 * // Confined by bubblewrap where it works; this example also runs without.
 * await using run_code = await codeTool({ tools: { prices }, unconfined: true });
 * assert.match(run_code.description, /prices\(args\?: \{ max\?: number \}\): Promise<unknown>/);
 * const answer = await run_code.execute({
 *   code: "const all = await tools.prices({}); return Math.max(...all);",
 * });
 * assert.equal(answer.result, 120);
 * ```
 */
export async function codeTool(options: CodeToolOptions): Promise<CodeAiTool> {
  const bridged: BridgedTool[] = [];
  let calls = 0;
  for (const [name, original] of Object.entries(options.tools)) {
    const execute = original.execute as
      | ((input: unknown, o: unknown) => unknown)
      | undefined;
    if (typeof execute !== "function") continue;
    const extra = original as { description?: unknown; outputSchema?: unknown };
    const input = asSchema(original.inputSchema as FlexibleSchema<unknown>);
    const output = extra.outputSchema === undefined
      ? undefined
      : await asSchema(extra.outputSchema as FlexibleSchema<unknown>)
        .jsonSchema;
    bridged.push({
      name,
      ...(typeof extra.description === "string"
        ? { description: extra.description }
        : {}),
      inputSchema: await input.jsonSchema,
      ...(output === undefined ? {} : { outputSchema: output }),
      async call(args, signal) {
        let value: unknown = args;
        if (input.validate !== undefined) {
          const checked = await input.validate(args);
          if (!checked.success) {
            throw Object.assign(
              new TypeError(
                `The arguments of ${name} do not match its input schema: ${checked.error.message}`,
              ),
              { code: "invalid_arguments" },
            );
          }
          value = checked.value;
        }
        let out = await execute(value, {
          toolCallId: `run_code-${++calls}`,
          messages: [],
          abortSignal: signal,
        });
        // A streaming tool answers its last value.
        if (
          typeof out === "object" && out !== null &&
          Symbol.asyncIterator in out
        ) {
          let last: unknown;
          for await (const part of out as AsyncIterable<unknown>) last = part;
          out = last;
        }
        return out;
      },
    });
  }
  const started = await startCodeTool(bridged, options);
  return {
    description: started.description,
    inputSchema: standardJsonSchema(CODE_INPUT_SCHEMA as JsonSchema),
    execute: (input, o) => started.execute(input, o?.abortSignal),
    close: () => started.close(),
    [Symbol.asyncDispose]: () => started.close(),
  };
}

/**
 * A language-model middleware for `wrapLanguageModel` that shapes every
 * call's prompt:
 *
 * - when the prompt passes `budgetBytes`, retires the oldest tool results
 *   (never the newest turn's) into compact descriptors, in batches down to
 *   half the budget, so between retirements the prompt only grows at its
 *   end; a call and its result always stay together;
 * - places Anthropic cache breakpoints (`providerOptions.anthropic.cacheControl`)
 *   on the system prompt (which caches the tools with it), on the end of the
 *   history before the newest turn and on the newest message: 3 of the 4
 *   allowed; breakpoints already in the prompt are replaced;
 * - sets OpenAI's `promptCacheKey` to the digest of the system prompt and
 *   tools, unless the call has one.
 *
 * @param options `store` (default: the adapters' shared in-memory store)
 *   and `budgetBytes` (49,152).
 * @returns The middleware (specification `v4`).
 *
 * @example
 * ```ts
 * import { loomMiddleware } from "@loom/loom/ai-sdk";
 * import assert from "node:assert/strict";
 * const middleware = loomMiddleware({ budgetBytes: 48 * 1024 });
 * const params = await middleware.transformParams({
 *   type: "generate",
 *   params: {
 *     prompt: [
 *       { role: "system" as const, content: "Be brief" },
 *       { role: "user" as const, content: [{ type: "text" as const, text: "Hi" }] },
 *     ],
 *   },
 *   model: {},
 * });
 * assert.deepEqual(params.prompt[0], {
 *   role: "system",
 *   content: "Be brief",
 *   providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
 * });
 * ```
 */
export function loomMiddleware(options?: AdapterOptions): AiSdkMiddleware {
  const core = new Core(options);
  return {
    specificationVersion: "v4",
    transformParams: async ({ params }) =>
      await shape(core, params as unknown as LanguageModelV4CallOptions) as
        & LanguageModelV4CallOptions
        & typeof params,
  };
}

async function shape(
  core: Core,
  params: LanguageModelV4CallOptions,
): Promise<LanguageModelV4CallOptions> {
  const prompt = params.prompt;
  const newest = newestTurnStart(prompt);
  const slots: Slot[] = [];
  prompt.forEach((message, i) => {
    if (i >= newest || message.role !== "tool") return;
    for (const part of message.content) {
      if (part.type !== "tool-result") continue;
      const text = outputText(part.output);
      if (text !== undefined) {
        slots.push({ key: part.toolCallId, tool: part.toolName, text });
      }
    }
  });
  await core.retire(
    slots,
    () => ({ prompt: retired(core, prompt), ...toolsOf(params) }),
  );
  const shaped = withBreakpoints(retired(core, prompt), newest);
  const key = `loom-${
    prefixDigest({
      system: prompt.filter((m) => m.role === "system").map((m) => m.content),
      tools: params.tools ?? [],
    })
  }`;
  const openai = params.providerOptions?.["openai"] ?? {};
  return {
    ...params,
    prompt: shaped,
    providerOptions: {
      ...params.providerOptions,
      openai: { promptCacheKey: key, ...openai },
    },
  };
}

function toolsOf(params: LanguageModelV4CallOptions): { tools?: unknown } {
  return params.tools === undefined ? {} : { tools: params.tools };
}

/** Index of the first message of the newest turn: the trailing tool/user run. */
function newestTurnStart(prompt: LanguageModelV4Prompt): number {
  let i = prompt.length;
  while (i > 0 && prompt[i - 1]!.role !== "assistant") i -= 1;
  return i;
}

function outputText(output: ToolOutput): string | undefined {
  if (output.type === "text") return output.value;
  if (output.type === "json") return JSON.stringify(output.value);
  return undefined;
}

/** The prompt with every retired tool result replaced by its descriptor. */
function retired(
  core: Core,
  prompt: LanguageModelV4Prompt,
): LanguageModelV4Prompt {
  return prompt.map((message) => {
    if (message.role !== "tool") return message;
    let changed = false;
    const content = message.content.map((part) => {
      if (part.type !== "tool-result") return part;
      const text = core.retiredText(part.toolCallId);
      if (text === undefined) return part;
      changed = true;
      return { ...part, output: { type: "text" as const, value: text } };
    });
    return changed ? { ...message, content } : message;
  });
}

const EPHEMERAL = { type: "ephemeral" } as const;

function withoutCache(
  options: SharedV4ProviderOptions | undefined,
): SharedV4ProviderOptions | undefined {
  const anthropic = options?.["anthropic"];
  if (anthropic === undefined || !("cacheControl" in anthropic)) return options;
  const { cacheControl: _, ...rest } = anthropic;
  return { ...options, anthropic: rest };
}

function marked(
  options: SharedV4ProviderOptions | undefined,
): SharedV4ProviderOptions {
  return {
    ...options,
    anthropic: { ...options?.["anthropic"], cacheControl: EPHEMERAL },
  };
}

/**
 * Breakpoints on the last system message, the last message before the
 * newest turn and the last message; every other cache marker removed.
 */
function withBreakpoints(
  prompt: LanguageModelV4Prompt,
  newest: number,
): LanguageModelV4Prompt {
  let lastSystem = -1;
  prompt.forEach((m, i) => {
    if (m.role === "system") lastSystem = i;
  });
  const marks = new Set([lastSystem, newest - 1, prompt.length - 1]);
  return prompt.map((message, i) => {
    const content = message.content;
    const cleaned = typeof content === "string" ? content : content.map((
      part,
    ) => {
      const options = withoutCache(part.providerOptions);
      return options === part.providerOptions
        ? part
        : { ...part, providerOptions: options };
    });
    const options = marks.has(i)
      ? marked(withoutCache(message.providerOptions))
      : withoutCache(message.providerOptions);
    const out = { ...message, content: cleaned } as typeof message;
    if (options === undefined) delete out.providerOptions;
    else out.providerOptions = options;
    return out;
  });
}
