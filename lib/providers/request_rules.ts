/**
 * The request rules Anthropic's Messages API, OpenAI's Chat Completions and
 * OpenAI's Responses API enforce on the server before any model sees a
 * request, checked on a body exactly as the official SDK sends it. Every
 * live call runs them before the HTTP request (a breach is
 * `provider_contract`, and no call is spent), and every fake server in the
 * tests answers a breach with the service's own 400, so no test can pass on
 * a body production would refuse.
 *
 * The rules live by concern, each stated once: tool definitions and the
 * forced `tool_choice` in `_rules_tools.ts` (OpenAI's function rules apply
 * to Chat's and Responses' shapes alike), the conversation in
 * `_rules_turns.ts`. This module reads each service's body shape and applies
 * them. Each rule cites where the service documents it, or a public thread
 * where its exact error message appears; a rule whose message wording is not
 * published says so, and its condition is still the documented one.
 *
 * @module
 */
import {
  arrayOf,
  breach,
  type Json,
  type RuleBreach,
  type Service,
} from "./_rules_json.ts";
import {
  anthropicTool,
  type ForcedChoice,
  forcedToolExists,
  type FunctionShape,
  openAIFunction,
} from "./_rules_tools.ts";
import {
  anthropicCacheControl,
  anthropicText,
  anthropicToolPairs,
  openAIReasoning,
  openAIToolMessages,
  responsesPairs,
} from "./_rules_turns.ts";
import { isPlainObject } from "../plain_object.ts";

export type { RuleBreach, Service };

/** The breach of a body that is not a JSON object at all. */
function notAnObject(service: Service): RuleBreach[] {
  return [breach(service, "body", "", "Request body must be a JSON object")];
}

/** The tool a forced `tool_choice` names, when it forces one. */
function forced(
  choice: unknown,
  type: string,
  path: readonly string[],
): ForcedChoice | undefined {
  if (!isPlainObject(choice) || choice["type"] !== type) return undefined;
  let name: unknown = choice;
  for (const key of path) name = isPlainObject(name) ? name[key] : undefined;
  return { name, path: ["tool_choice", ...path] };
}

/**
 * The rules Anthropic's Messages API checks on a request body before any
 * model sees it, in the order a reader meets the body (`max_tokens`, tools,
 * `tool_choice`, system, messages, cache markers).
 *
 * @param body A `POST /v1/messages` body, as the SDK sends it.
 * @returns Every rule the body breaks; empty when the service accepts it.
 *
 * @example
 * ```ts
 * import { checkAnthropicRequest } from "./request_rules.ts";
 * import assert from "node:assert/strict";
 * const body = {
 *   model: "claude-sonnet-4-5",
 *   max_tokens: 1024,
 *   messages: [{ role: "user", content: "Hi" }],
 *   tools: [{ name: "t", input_schema: { type: "object", anyOf: [] } }],
 * };
 * const [breach] = checkAnthropicRequest(body);
 * assert.equal(breach?.rule, "anthropic.tool_schema_root");
 * assert.equal(breach?.path, "/tools/0/input_schema");
 * ```
 */
export function checkAnthropicRequest(body: unknown): RuleBreach[] {
  if (!isPlainObject(body)) return notAnObject("anthropic");
  const breaches: RuleBreach[] = [];
  // `max_tokens` is required.
  // Source: https://docs.anthropic.com/en/api/messages (max_tokens: required);
  // message seen in https://github.com/tickernelz/opencode-mem/issues/50
  if (body["max_tokens"] === undefined) {
    breaches.push(breach(
      "anthropic",
      "max_tokens_required",
      "/max_tokens",
      "max_tokens: Field required",
    ));
  }
  const tools = arrayOf(body["tools"]);
  const names = new Set<string>();
  tools.forEach((tool, i) => {
    if (!isPlainObject(tool)) return;
    // Custom tools have no `type` (or `custom`); server tools are typed.
    if (tool["type"] !== undefined && tool["type"] !== "custom") return;
    const name = tool["name"];
    if (typeof name === "string") names.add(name);
    breaches.push(...anthropicTool(tool, i));
  });
  breaches.push(
    ...forcedToolExists(
      "anthropic",
      forced(body["tool_choice"], "tool", ["name"]),
      names,
    ),
  );
  breaches.push(...anthropicText(body));
  breaches.push(...anthropicToolPairs(body));
  breaches.push(...anthropicCacheControl(body, tools));
  return breaches;
}

/** Where one of OpenAI's two APIs keeps what the shared rules check. */
interface OpenAIShape {
  /** The function definition of tool `tool`, if it is one. */
  functionOf(tool: Json): Json | undefined;
  /** Where function `i` sits, and how the service's messages name it. */
  at(i: number): Pick<FunctionShape, "at" | "where">;
  /** Whether `parameters: null` means none (see {@linkcode FunctionShape}). */
  readonly nullIsAbsent: boolean;
  /** The path of the forced function's name inside `tool_choice`. */
  readonly choiceName: readonly string[];
  /** The rules on the conversation this API carries. */
  turns(body: Json): RuleBreach[];
}

const CHAT: OpenAIShape = {
  functionOf: (tool) =>
    isPlainObject(tool["function"]) ? tool["function"] : undefined,
  at: (i) => ({ at: ["tools", i, "function"], where: `tools[${i}].function` }),
  nullIsAbsent: false,
  choiceName: ["function", "name"],
  turns: (body) => [...openAIReasoning(body), ...openAIToolMessages(body)],
};

const RESPONSES: OpenAIShape = {
  functionOf: (tool) => tool["type"] === "function" ? tool : undefined,
  at: (i) => ({ at: ["tools", i], where: `tools[${i}]` }),
  nullIsAbsent: true,
  choiceName: ["name"],
  turns: responsesPairs,
};

/** OpenAI's rules, stated once, on a body of either API's shape. */
function checkOpenAI(body: unknown, shape: OpenAIShape): RuleBreach[] {
  if (!isPlainObject(body)) return notAnObject("openai");
  const breaches: RuleBreach[] = [];
  const names = new Set<string>();
  for (const [i, tool] of arrayOf(body["tools"]).entries()) {
    const fn = isPlainObject(tool) ? shape.functionOf(tool) : undefined;
    if (fn === undefined) continue;
    if (typeof fn["name"] === "string") names.add(fn["name"]);
    breaches.push(
      ...openAIFunction(fn, {
        ...shape.at(i),
        nullIsAbsent: shape.nullIsAbsent,
      }),
    );
  }
  breaches.push(
    ...forcedToolExists(
      "openai",
      forced(body["tool_choice"], "function", shape.choiceName),
      names,
    ),
  );
  breaches.push(...shape.turns(body));
  return breaches;
}

/**
 * The rules OpenAI's Chat Completions checks on a request body before any
 * model sees it: function names and parameter schemas (with the strict-mode
 * rules of a function with `strict: true`), the forced `tool_choice`, the
 * reasoning models' parameters, and the order of `tool` messages.
 *
 * @param body A `POST /v1/chat/completions` body, as the SDK sends it.
 * @returns Every rule the body breaks; empty when the service accepts it.
 *
 * @example
 * ```ts
 * import { checkOpenAIRequest } from "./request_rules.ts";
 * import assert from "node:assert/strict";
 * const [breach] = checkOpenAIRequest({
 *   model: "gpt-5",
 *   max_tokens: 1024,
 *   messages: [{ role: "user", content: "Hi" }],
 * });
 * assert.equal(breach?.rule, "openai.max_completion_tokens");
 * assert.match(breach?.message ?? "", /Use 'max_completion_tokens' instead/);
 * ```
 */
export function checkOpenAIRequest(body: unknown): RuleBreach[] {
  return checkOpenAI(body, CHAT);
}

/**
 * The rules OpenAI's Responses API (`POST /v1/responses`) checks on a request
 * body before any model sees it: function names and parameter roots as for
 * Chat Completions, the strict-mode schema rules of a function with
 * `strict: true` (the OpenAI Agents SDK's default), the forced `tool_choice`,
 * and the pairing of `function_call` and `function_call_output` items.
 *
 * @param body A `POST /v1/responses` body, as the SDK sends it.
 * @returns Every rule the body breaks; empty when the service accepts it.
 *
 * @example
 * ```ts
 * import { checkOpenAIResponsesRequest } from "./request_rules.ts";
 * import assert from "node:assert/strict";
 * const [breach] = checkOpenAIResponsesRequest({
 *   model: "gpt-5",
 *   input: [{ type: "function_call_output", call_id: "c1", output: "x" }],
 * });
 * assert.equal(breach?.rule, "openai.function_call_output_pairing");
 * assert.match(breach?.message ?? "", /No tool call found/);
 * ```
 */
export function checkOpenAIResponsesRequest(body: unknown): RuleBreach[] {
  return checkOpenAI(body, RESPONSES);
}
