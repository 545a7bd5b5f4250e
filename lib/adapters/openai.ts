/**
 * Loom inside an OpenAI Agents SDK loop (`@openai/agents` 0.20, over the
 * Responses API): {@linkcode loomTools} keeps large function-tool results
 * in the result store and shows the model a descriptor,
 * {@linkcode retrievalTools} gives the model `read_result`, `find_in_result`
 * and `list_results` as function tools, and {@linkcode loomInputFilter}
 * (for the run's `callModelInputFilter`) retires old tool outputs into
 * compact descriptors in batches. The filter can return only input and
 * instructions, so the prompt cache key goes in the agent's model settings:
 * {@linkcode promptCacheKey} derives it from the digest of the stable prefix.
 *
 * @module
 */
import { type FunctionTool, tool } from "@openai/agents";
import type { ResultStore } from "../store/result_store.ts";
import { RETRIEVAL_TOOLS } from "../reference/retrieval_tools.ts";
import type { AdapterOptions } from "./adapter_options.ts";
import { Core, prefixDigest, serialize, type Slot } from "./_core.ts";
import { messageOf } from "../errors.ts";

export type { AdapterOptions } from "./adapter_options.ts";

/**
 * What {@linkcode loomTools} needs of an Agents SDK tool, and every tool an
 * agent takes has: its `type`. Function tools (`type: "function"`, from
 * `tool()`) are wrapped; the others pass unchanged. A local stand-in for the
 * SDK's `Tool` type, so Loom's signatures do not depend on the SDK's type
 * names; `loomTools` hands back the developer's own tool types.
 */
export interface AgentsTool {
  /** `function` for a function tool; hosted and other tools pass unchanged. */
  readonly type: string;
}

/**
 * One retrieval tool as an Agents SDK function tool (what the SDK's `tool()`
 * makes, and what an agent's `tools` take as it is): a non-strict function
 * tool with a closed JSON Schema.
 */
export interface AgentsFunctionTool {
  /** Always `function`. */
  readonly type: "function";
  /** The tool's name. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** JSON Schema of the arguments: a closed object. */
  readonly parameters: {
    readonly type: "object";
    readonly properties: Record<string, unknown>;
    readonly required: string[];
    readonly additionalProperties: false;
  };
  /** `false`: the optional arguments are not all required. */
  readonly strict: boolean;
  /**
   * Answers a call (its arguments as JSON text) with the tool's structured
   * JSON as text, or the failure's message (starting with its code).
   */
  readonly invoke: (
    runContext: unknown,
    input: string,
    details?: unknown,
  ) => Promise<string>;
  /** Never needs approval: the tools only read the store. */
  readonly needsApproval: (
    runContext: unknown,
    input: unknown,
    callId?: string,
  ) => Promise<boolean>;
  /** Always enabled. */
  readonly isEnabled: (runContext: unknown, agent: unknown) => Promise<boolean>;
}

/**
 * The `callModelInputFilter` {@linkcode loomInputFilter} returns: a local
 * stand-in for the SDK's `CallModelInputFilter` that a run's options take
 * as it is. It is generic over the SDK's model input, so what goes in
 * comes back with the same type.
 */
export type AgentsInputFilter = <
  D extends {
    readonly input: readonly unknown[];
    readonly instructions?: string;
  },
>(args: { readonly modelData: D }) => Promise<D>;

/**
 * Wraps Agents SDK function tools so a result whose serialized size passes
 * `offloadBytes` goes into the store and the model sees its descriptor.
 *
 * @param tools Function tools (from `tool()`); other tools pass unchanged.
 * @param options `store` (default: the adapters' shared in-memory store)
 *   and `offloadBytes` (8,192).
 * @returns The same tools with `invoke` wrapped.
 *
 * @example
 * ```ts
 * import { loomTools } from "@loom/loom/openai";
 * import { ResultStore } from "@loom/loom/reference";
 * import { tool, RunContext } from "@openai/agents";
 * import { z } from "zod";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const [rows] = loomTools([tool({
 *   name: "rows",
 *   description: "All rows",
 *   parameters: z.object({}),
 *   execute: () => "r".repeat(20_000),
 * })], { store });
 * const seen = await rows!.invoke(new RunContext(), "{}");
 * assert.match(String(seen), /"result":"result-1"/);
 * ```
 */
export function loomTools<T extends AgentsTool>(
  tools: readonly T[],
  options?: AdapterOptions,
): T[] {
  const core = new Core(options);
  return tools.map((original) => {
    const fn = original as unknown as FunctionTool;
    if (fn.type !== "function" || typeof fn.invoke !== "function") {
      return original;
    }
    const wrapped: FunctionTool = {
      ...fn,
      invoke: async (context, input, details) => {
        const output = await fn.invoke(context, input, details);
        const id = details?.toolCall?.callId;
        return await core.offloadCall(id, fn.name, serialize(output)) ?? output;
      },
    };
    return wrapped as unknown as T;
  });
}

/**
 * `read_result`, `find_in_result` and `list_results` as Agents SDK function
 * tools over one store (non-strict, since their optional arguments are not
 * all required); a failure is a tool error whose text starts with its code.
 *
 * @param store The store (default: the adapters' shared in-memory store).
 * @returns The three tools.
 *
 * @example
 * ```ts
 * import { retrievalTools } from "@loom/loom/openai";
 * import { ResultStore } from "@loom/loom/reference";
 * import { RunContext } from "@openai/agents";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put('{"a":[1,2]}', { origin: "t", capture: "complete" });
 * const [read] = retrievalTools(store);
 * const reference = { ...d.reference, select: { kind: "json_pointer", pointer: "/a/0" }, rendering: "json" };
 * const answer = await read!.invoke(new RunContext(), JSON.stringify({ reference }));
 * assert.equal(answer, '{"selected_json":"1"}');
 * ```
 */
export function retrievalTools(store?: ResultStore): AgentsFunctionTool[] {
  const core = new Core(store === undefined ? {} : { store });
  return RETRIEVAL_TOOLS.map((definition) =>
    tool({
      name: definition.name,
      description: definition.description,
      parameters: definition.inputSchema as never,
      strict: false,
      execute: async (args: unknown) =>
        JSON.stringify(await core.answer(definition.name, args)),
      errorFunction: (_context, error) => messageOf(error),
    }) as unknown as AgentsFunctionTool
  );
}

type Item = Record<string, unknown>;

/**
 * A `callModelInputFilter` that, when the model input passes `budgetBytes`,
 * retires the oldest function-call outputs (never the newest turn's) into
 * compact descriptors, in batches down to half the budget; an output already
 * retired keeps the same bytes, so between retirements the input only grows
 * at its end, and every `function_call` keeps its output.
 *
 * @param options `store` (default: the adapters' shared in-memory store)
 *   and `budgetBytes` (49,152).
 * @returns The filter.
 *
 * @example
 * ```ts
 * import { loomInputFilter } from "@loom/loom/openai";
 * import assert from "node:assert/strict";
 * const filter = loomInputFilter({ budgetBytes: 1024 });
 * const input = [{ role: "user" as const, content: "Go" }];
 * const out = await filter({ modelData: { input, instructions: "Be brief" } });
 * assert.deepEqual(out.input, input);
 * ```
 */
export function loomInputFilter(options?: AdapterOptions): AgentsInputFilter {
  const core = new Core(options);
  return async ({ modelData }) => {
    const input = modelData.input as readonly unknown[] as readonly Item[];
    let newest = input.length;
    while (
      newest > 0 && input[newest - 1]!["type"] === "function_call_result"
    ) newest -= 1;
    const slots: Slot[] = [];
    input.forEach((item, i) => {
      if (i >= newest || item["type"] !== "function_call_result") return;
      const text = outputText(item["output"]);
      if (text === undefined) return;
      slots.push({
        key: String(item["callId"]),
        tool: String(item["name"]),
        text,
      });
    });
    await core.retire(slots, () => ({
      instructions: modelData.instructions,
      input: retired(core, input),
    }));
    return {
      ...modelData,
      input: retired(core, input) as unknown as typeof modelData.input,
    };
  };
}

/**
 * The `prompt_cache_key` for an agent: `loom-` and 32 hex digits of the
 * SHA-256 of its instructions and tool definitions, the part of every
 * request that never changes. Set it with
 * `modelSettings: { providerData: { prompt_cache_key } }`.
 *
 * @param instructions The agent's instructions.
 * @param tools The agent's tools.
 * @returns The key.
 *
 * @example
 * ```ts
 * import { promptCacheKey } from "@loom/loom/openai";
 * import assert from "node:assert/strict";
 * assert.match(promptCacheKey("Be brief", []), /^loom-[0-9a-f]{32}$/);
 * assert.equal(promptCacheKey("Be brief", []), promptCacheKey("Be brief", []));
 * ```
 */
export function promptCacheKey(
  instructions: string,
  tools: readonly unknown[],
): string {
  const definitions = tools.map((t) => {
    const { name, description, parameters, strict } = t as FunctionTool;
    return { name, description, parameters, strict };
  });
  return `loom-${prefixDigest({ instructions, tools: definitions })}`;
}

function outputText(output: unknown): string | undefined {
  if (typeof output === "string") return output;
  const item = output as Item | undefined;
  if (item?.["type"] === "text" && typeof item["text"] === "string") {
    return item["text"];
  }
  return undefined;
}

function retired(core: Core, input: readonly Item[]): Item[] {
  return input.map((item) => {
    if (item["type"] !== "function_call_result") return item;
    const text = core.retiredText(String(item["callId"]));
    if (text === undefined) return item;
    return { ...item, output: { type: "text", text } };
  });
}
