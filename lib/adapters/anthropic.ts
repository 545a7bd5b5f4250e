/**
 * Loom inside an Anthropic SDK loop (`@anthropic-ai/sdk`, the tool runner
 * or your own): {@linkcode loomTools} keeps large tool results in the
 * result store and shows the model a descriptor, {@linkcode retrievalTools}
 * gives the model `read_result`, `find_in_result` and `list_results` as
 * runnable tools, and {@linkcode prepare} shapes a `messages.create` body:
 * batch retirement of old tool results, and cache breakpoints on the stable
 * prefix. The tool runner has no per-request hook; the client's `middleware`
 * option runs `prepare` on every request body (docs/adapters.md).
 *
 * @module
 */
import type { ResultStore } from "../store/result_store.ts";
import { RETRIEVAL_TOOLS } from "../reference/retrieval_tools.ts";
import { type AdapterOptions, Core, type Slot } from "./_core.ts";

export type { AdapterOptions } from "./adapter_options.ts";

/**
 * What {@linkcode loomTools} needs of a tool-runner tool, and every tool the
 * runner takes with a `run` handler has (`betaZodTool`, `betaTool`, or a
 * plain definition with `run` and `parse`): its name and `run`. A local
 * stand-in for the SDK's `BetaRunnableTool`, so Loom's signatures do not
 * depend on the SDK's type names; `loomTools` hands back the developer's
 * own tool types.
 */
export interface AnthropicTool {
  /** The tool's name, as the model calls it. */
  readonly name: string;
  /** Runs the tool on the model's input (and the runner's call context). */
  readonly run: (input: never, context?: never) => unknown;
}

/**
 * One retrieval tool as the tool runner takes it: a custom tool definition
 * (`name`, `description`, `input_schema`) with `parse` and `run`. The
 * runner's `tools` option takes it as it is.
 */
export interface RunnableTool {
  /** The tool's name. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** JSON Schema of the input: a closed object. */
  readonly input_schema: {
    readonly type: "object";
    readonly properties: Record<string, unknown>;
    readonly required: string[];
    readonly [keyword: string]: unknown;
  };
  /** Passes the input through (the tool checks its arguments itself). */
  readonly parse: (content: unknown) => unknown;
  /**
   * Answers a call with the tool's structured JSON, as text.
   *
   * @throws {ReferenceFailureError} A tool error whose message starts with
   *   its code.
   */
  readonly run: (input: unknown) => Promise<string>;
}

/** The part of the runner's call context `loomTools` reads. */
interface RunContext {
  readonly toolUse?: { readonly id?: string };
}

/** What a tool's `run` answers: text, or content blocks. */
type RunOutput = string | readonly { type: string; text?: string }[];

/**
 * Wraps tool-runner tools (`betaZodTool`, `betaTool` or plain definitions
 * with `run`) so a result whose serialized size passes `offloadBytes` goes
 * into the store and the model sees its descriptor instead.
 *
 * @param tools The tools.
 * @param options `store` (default: the adapters' shared in-memory store)
 *   and `offloadBytes` (8,192).
 * @returns The same tools with `run` wrapped.
 *
 * @example
 * ```ts
 * import { loomTools } from "@loom/loom/anthropic";
 * import { ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const [rows] = loomTools([{
 *   name: "rows",
 *   input_schema: { type: "object", properties: {} },
 *   parse: (input: unknown) => input,
 *   run: (_input: unknown) => "r".repeat(20_000),
 * }], { store });
 * const seen = await rows!.run({});
 * assert.match(String(seen), /"result":"result-1"/);
 * ```
 */
export function loomTools<T extends AnthropicTool>(
  tools: readonly T[],
  options?: AdapterOptions,
): T[] {
  const core = new Core(options);
  return tools.map((original) => {
    const run = original.run as (
      input: unknown,
      context?: RunContext,
    ) => RunOutput | Promise<RunOutput>;
    return {
      ...original,
      run: async (input: unknown, context?: RunContext) => {
        const output = await run(input, context);
        const text = typeof output === "string"
          ? output
          : output.every((b) => b.type === "text")
          ? output.map((b) => b.text).join("")
          : undefined;
        if (text === undefined) return output;
        return await core.offloadCall(
          context?.toolUse?.id,
          original.name,
          text,
        ) ??
          output;
      },
    };
  });
}

/**
 * `read_result`, `find_in_result` and `list_results` as tool-runner tools
 * over one store; a failure is a tool error whose text starts with its code.
 *
 * @param store The store (default: the adapters' shared in-memory store).
 * @returns The three tools.
 *
 * @example
 * ```ts
 * import { retrievalTools } from "@loom/loom/anthropic";
 * import { ResultStore } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * const store = new ResultStore();
 * const d = await store.put('{"a":[1,2]}', { origin: "t", capture: "complete" });
 * const [read] = retrievalTools(store);
 * const answer = await read!.run({ reference: { ...d.reference, select: { kind: "json_pointer", pointer: "/a/1" }, rendering: "json" } });
 * assert.equal(answer, '{"selected_json":"2"}');
 * ```
 */
export function retrievalTools(store?: ResultStore): RunnableTool[] {
  const core = new Core(store === undefined ? {} : { store });
  return RETRIEVAL_TOOLS.map((definition) => ({
    name: definition.name,
    description: definition.description,
    input_schema: definition.inputSchema as RunnableTool["input_schema"],
    parse: (input: unknown) => input,
    run: async (input: unknown) =>
      JSON.stringify(await core.answer(definition.name, input)),
  }));
}

type Body = Record<string, unknown>;
type Block = Record<string, unknown>;
type Message = { role: string; content: string | Block[] };

/**
 * Shapes a `messages.create` body (`MessageCreateParams`, or the beta one):
 *
 * - when it passes `budgetBytes`, retires the oldest tool results (never
 *   the newest turn's) into compact descriptors, in batches down to half
 *   the budget; a result already retired keeps the same bytes, so between
 *   retirements the prefix is byte-identical, and every `tool_use` keeps its
 *   `tool_result`;
 * - removes every `cache_control` of the body and places at most 4:
 *   the last tool, the last system block, the end of the history before the
 *   newest turn, and the newest message (all the same TTL, so the TTL order
 *   holds).
 *
 * @param params The request body.
 * @param options `store` (default: the adapters' shared in-memory store),
 *   `budgetBytes` (49,152) and `cacheTtl` (`"5m"`, the default, or `"1h"`).
 * @returns A new body; `params` is not changed.
 *
 * @example
 * ```ts
 * import { prepare } from "@loom/loom/anthropic";
 * import assert from "node:assert/strict";
 * const body = await prepare({
 *   model: "claude-sonnet-4-5",
 *   max_tokens: 1024,
 *   system: "Be brief",
 *   messages: [{ role: "user", content: "Hi" }],
 * });
 * assert.deepEqual(body.system, [{ type: "text", text: "Be brief", cache_control: { type: "ephemeral" } }]);
 * ```
 */
export async function prepare<P extends object>(
  params: P,
  options?: AdapterOptions & { readonly cacheTtl?: "5m" | "1h" },
): Promise<P> {
  const core = new Core(options);
  const body = params as Body;
  const messages = (body["messages"] ?? []) as Message[];
  let newest = messages.length;
  while (newest > 0 && messages[newest - 1]!.role !== "assistant") newest -= 1;
  const names = new Map<string, string>();
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b["type"] === "tool_use") {
        names.set(String(b["id"]), String(b["name"]));
      }
    }
  }
  const slots: Slot[] = [];
  messages.forEach((m, i) => {
    if (i >= newest || typeof m.content === "string") return;
    for (const b of m.content) {
      if (b["type"] !== "tool_result") continue;
      const text = resultText(b["content"]);
      if (text === undefined) continue;
      const key = String(b["tool_use_id"]);
      slots.push({ key, tool: names.get(key) ?? "tool", text });
    }
  });
  await core.retire(
    slots,
    () => ({ ...body, messages: retired(core, messages) }),
  );
  const control = options?.cacheTtl === "1h"
    ? { type: "ephemeral", ttl: "1h" }
    : { type: "ephemeral" };
  const shaped = retired(core, messages).map((m, i) =>
    strip(
      m,
      i === newest - 1 || i === messages.length - 1 ? control : undefined,
    )
  );
  const out: Body = { ...body, messages: shaped };
  const system = body["system"];
  if (typeof system === "string" && system !== "") {
    out["system"] = [{ type: "text", text: system, cache_control: control }];
  } else if (Array.isArray(system) && system.length > 0) {
    out["system"] = system.map((b: Block, i) =>
      mark(b, i === system.length - 1 ? control : undefined)
    );
  }
  const tools = body["tools"];
  if (Array.isArray(tools) && tools.length > 0) {
    out["tools"] = tools.map((t: Block, i) =>
      mark(t, i === tools.length - 1 ? control : undefined)
    );
  }
  return out as P;
}

/**
 * The Anthropic client's request middleware, structurally (the SDK's
 * `Middleware`): it sees each request's URL and pre-encoded body and hands
 * a request on to `next`.
 */
export type AnthropicClientMiddleware = <
  R extends { readonly url: string; readonly body?: unknown },
  A,
>(request: R, next: (request: R) => Promise<A>) => Promise<A>;

/**
 * `prepare` as the client's request middleware, for the tool runner (which
 * has no per-request hook): every Messages request (`/v1/messages` and its
 * `count_tokens`) is shaped before it is sent; other requests pass as they
 * are. Create the runner with `thread: false`, so the request carries the
 * history Loom retires from.
 *
 * @param options As {@linkcode prepare}'s.
 * @returns A middleware for `new Anthropic({ middleware: [...] })`.
 *
 * @example
 * ```ts
 * import { loomMiddleware } from "@loom/loom/anthropic";
 * import assert from "node:assert/strict";
 * const middleware = loomMiddleware();
 * const sent: string[] = [];
 * await middleware(
 *   { url: "https://api.anthropic.com/v1/messages", body: JSON.stringify({ model: "m", max_tokens: 9, system: "Be brief", messages: [] }) },
 *   (request) => Promise.resolve(sent.push(request.body as string)),
 * );
 * assert.match(sent[0]!, /"cache_control":\{"type":"ephemeral"\}/);
 * ```
 */
export function loomMiddleware(
  options?: AdapterOptions & { readonly cacheTtl?: "5m" | "1h" },
): AnthropicClientMiddleware {
  return async (request, next) => {
    const path = URL.canParse(request.url) ? new URL(request.url).pathname : "";
    if (
      typeof request.body !== "string" ||
      !/\/v1\/messages(\/count_tokens)?$/.test(path)
    ) return next(request);
    const body = JSON.parse(request.body);
    return next({
      ...request,
      body: JSON.stringify(await prepare(body, options)),
    });
  };
}

function resultText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  if (!content.every((b) => (b as Block)["type"] === "text")) return undefined;
  return content.map((b) => String((b as Block)["text"])).join("");
}

function retired(core: Core, messages: readonly Message[]): Message[] {
  return messages.map((m) => {
    if (typeof m.content === "string") return m;
    let changed = false;
    const content = m.content.map((b) => {
      if (b["type"] !== "tool_result") return b;
      const text = core.retiredText(String(b["tool_use_id"]));
      if (text === undefined) return b;
      changed = true;
      const { cache_control: _, ...rest } = b;
      return { ...rest, content: text };
    });
    return changed ? { ...m, content } : m;
  });
}

function mark(block: Block, control: Block | undefined): Block {
  const { cache_control: _, ...rest } = block;
  return control === undefined ? rest : { ...rest, cache_control: control };
}

/** A message without cache markers, with one on its last block if asked. */
function strip(message: Message, control: Block | undefined): Message {
  const content = typeof message.content === "string"
    ? (control === undefined || message.content === ""
      ? message.content
      : [{ type: "text", text: message.content }])
    : message.content;
  if (typeof content === "string") return { ...message, content };
  return {
    ...message,
    content: content.map((b, j) =>
      mark(b, j === content.length - 1 ? control : undefined)
    ),
  };
}
