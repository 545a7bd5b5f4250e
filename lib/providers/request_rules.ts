/**
 * The request rules Anthropic's Messages API, OpenAI's Chat Completions and
 * OpenAI's Responses API enforce on the server before any model sees a
 * request, checked on a body exactly as the official SDK sends it. Every live call runs them before the
 * HTTP request (a breach is `provider_contract`, and no call is spent), and
 * every fake server in the tests answers a breach with the service's own 400,
 * so no test can pass on a body production would refuse.
 *
 * Each rule cites where the service documents it, or a public thread where
 * its exact error message appears. A rule whose message wording is not
 * published says so; its condition is still the documented one.
 *
 * @module
 */
import Ajv2020Module from "ajv/dist/2020.js";

/** The two services whose request rules Loom knows. */
export type Service = "anthropic" | "openai";

/** One rule a request body breaks, as the service would refuse it. */
export interface RuleBreach {
  /** The service whose rule it is. */
  readonly service: Service;
  /** Stable rule id, `<service>.<rule>`, e.g. `anthropic.tool_schema_root`. */
  readonly rule: string;
  /** RFC 6901 pointer to the offending part of the body, e.g. `/tools/0/input_schema`. */
  readonly path: string;
  /** The HTTP status the service answers with. */
  readonly status: 400;
  /** The service's error type, e.g. `invalid_request_error`. */
  readonly type: string;
  /** The service's own message for the breach. */
  readonly message: string;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function pointer(...tokens: (string | number)[]): string {
  return tokens.map((t) =>
    "/" + String(t).replaceAll("~", "~0").replaceAll("/", "~1")
  ).join("");
}

// ---------------------------------------------------------------------------
// JSON Schema 2020-12 meta-schema (both services check tool schemas with it)

interface MetaValidator {
  validateSchema(schema: unknown): boolean | Promise<unknown>;
}

let metaValidator: MetaValidator | undefined;

/** Whether `schema` is valid under the JSON Schema 2020-12 meta-schema. */
function validDraft202012(schema: unknown): boolean {
  if (metaValidator === undefined) {
    // The CommonJS module's export is the class (with a `default` alias).
    const module = Ajv2020Module as unknown as {
      default?: new (options: object) => MetaValidator;
    };
    const Ajv2020 = (module.default ?? module) as new (
      options: object,
    ) => MetaValidator;
    // `strict: false`: unknown keywords are allowed by the meta-schema (and
    // by the services); only what the meta-schema refuses is refused.
    metaValidator = new Ajv2020({ strict: false, validateFormats: false });
  }
  // A root "$schema" naming another draft (draft-07 is what zod and the MCP
  // SDK emit, and what hosts pass on) is not refused by the services; ajv
  // would throw on a meta-schema it does not hold, so the schema is checked
  // against 2020-12 whatever it declares.
  const checked = typeof schema === "object" && schema !== null &&
      !Array.isArray(schema) && "$schema" in schema
    ? Object.fromEntries(
      Object.entries(schema).filter(([key]) => key !== "$schema"),
    )
    : schema;
  return metaValidator.validateSchema(checked) === true;
}

/** The root combinators neither service allows in a tool's schema. */
const ANTHROPIC_ROOT_COMBINATORS = ["oneOf", "allOf", "anyOf"] as const;
const OPENAI_ROOT_FORBIDDEN = [
  "oneOf",
  "anyOf",
  "allOf",
  "enum",
  "not",
] as const;

// ---------------------------------------------------------------------------
// Anthropic Messages API

function anthropic(rule: string, path: string, message: string): RuleBreach {
  return {
    service: "anthropic",
    rule: `anthropic.${rule}`,
    path,
    status: 400,
    type: "invalid_request_error",
    message,
  };
}

/** The dotted location Anthropic's messages use: `tools.0.custom.name`. */
function dotted(...tokens: (string | number)[]): string {
  return tokens.join(".");
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
  if (!isObject(body)) {
    return [anthropic("body", "", "Request body must be a JSON object")];
  }
  const breaches: RuleBreach[] = [];
  // `max_tokens` is required.
  // Source: https://docs.anthropic.com/en/api/messages (max_tokens: required);
  // message seen in https://github.com/tickernelz/opencode-mem/issues/50
  if (body["max_tokens"] === undefined) {
    breaches.push(
      anthropic(
        "max_tokens_required",
        "/max_tokens",
        "max_tokens: Field required",
      ),
    );
  }
  const tools = arrayOf(body["tools"]);
  const names = new Set<string>();
  tools.forEach((tool, i) => {
    if (!isObject(tool)) return;
    // Custom tools have no `type` (or `custom`); server tools are typed.
    if (tool["type"] !== undefined && tool["type"] !== "custom") return;
    const name = tool["name"];
    if (typeof name === "string") names.add(name);
    breaches.push(...anthropicTool(tool, i));
  });
  breaches.push(...anthropicToolChoice(body["tool_choice"], names));
  breaches.push(...anthropicText(body));
  breaches.push(...anthropicToolPairs(body));
  breaches.push(...anthropicCacheControl(body, tools));
  return breaches;
}

function anthropicTool(tool: Json, i: number): RuleBreach[] {
  const breaches: RuleBreach[] = [];
  const name = tool["name"];
  // Tool names match ^[a-zA-Z0-9_-]{1,64}$.
  // Source: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
  // ("name: must match the regex ^[a-zA-Z0-9_-]{1,64}$"); message seen in
  // https://github.com/inngest/agent-kit/pull/108 and
  // https://github.com/apify/tester-mcp-client/issues/11
  if (typeof name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    breaches.push(anthropic(
      "tool_name_pattern",
      pointer("tools", i, "name"),
      `${
        dotted("tools", i, "custom", "name")
      }: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`,
    ));
  }
  const schema = tool["input_schema"];
  const at = pointer("tools", i, "input_schema");
  const where = dotted("tools", i, "custom", "input_schema");
  // `input_schema` is a JSON Schema object of type "object".
  // Source: https://docs.anthropic.com/en/api/messages (tools.input_schema.type:
  // "object", required). The exact refusal is not quoted in a public thread;
  // this message follows the wording of the service's other field checks
  // ("tools.0.custom.name: String should match pattern …").
  if (!isObject(schema) || schema["type"] !== "object") {
    breaches.push(anthropic(
      "tool_schema_type",
      isObject(schema) ? `${at}/type` : at,
      `${where}.type: Input should be 'object'`,
    ));
    return breaches;
  }
  // No oneOf/allOf/anyOf at the root of input_schema.
  // Message seen in https://github.com/anthropics/claude-code/issues/5319,
  // https://github.com/anthropics/claude-code/issues/5973 and
  // https://github.com/mobile-next/mobile-mcp/issues/344 (the service refuses
  // it though the tool-use docs do not list it).
  if (ANTHROPIC_ROOT_COMBINATORS.some((k) => k in schema)) {
    breaches.push(anthropic(
      "tool_schema_root",
      at,
      `${where}: input_schema does not support oneOf, allOf, or anyOf at the top level`,
    ));
  }
  // input_schema is valid JSON Schema 2020-12 (the service checks the meta-schema).
  // Source: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
  // (input_schema: "A JSON Schema object"); message seen in
  // https://github.com/acomagu/vscode-as-mcp-server/issues/6
  if (!validDraft202012(schema)) {
    breaches.push(anthropic(
      "tool_schema_draft_2020_12",
      at,
      `${where}: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://docs.anthropic.com/en/docs/tool-use.`,
    ));
  }
  return breaches;
}

function anthropicToolChoice(
  choice: unknown,
  names: ReadonlySet<string>,
): RuleBreach[] {
  // A forced tool_choice names a tool of the request.
  // Source: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use
  // ({"type": "tool", "name": "get_weather"} forces a tool given in `tools`);
  // message seen in https://github.com/anomalyco/opencode/issues/14710
  if (!isObject(choice) || choice["type"] !== "tool") return [];
  const name = choice["name"];
  if (typeof name === "string" && names.has(name)) return [];
  return [anthropic(
    "tool_choice_exists",
    "/tool_choice/name",
    `Tool '${String(name)}' not found in provided tools`,
  )];
}

/** Every text block of system and messages, with where it is. */
function* textBlocks(
  body: Json,
): Generator<{ block: Json; at: (string | number)[]; scope: string }> {
  const system = body["system"];
  if (Array.isArray(system)) {
    for (const [j, block] of system.entries()) {
      if (isObject(block)) yield { block, at: ["system", j], scope: "system" };
    }
  }
  for (const [i, message] of arrayOf(body["messages"]).entries()) {
    if (!isObject(message)) continue;
    for (const [j, block] of arrayOf(message["content"]).entries()) {
      if (isObject(block)) {
        yield { block, at: ["messages", i, "content", j], scope: "messages" };
      }
    }
  }
}

function anthropicText(body: Json): RuleBreach[] {
  const breaches: RuleBreach[] = [];
  // String content is one text block.
  const strings: { text: string; at: (string | number)[]; scope: string }[] =
    [];
  if (typeof body["system"] === "string" && body["system"] !== "") {
    // An empty string system prompt is the same as none; only blank text counts.
    strings.push({ text: body["system"], at: ["system"], scope: "system" });
  }
  for (const [i, message] of arrayOf(body["messages"]).entries()) {
    if (isObject(message) && typeof message["content"] === "string") {
      strings.push({
        text: message["content"],
        at: ["messages", i, "content"],
        scope: "messages",
      });
    }
  }
  for (const { block, at, scope: s } of textBlocks(body)) {
    if (block["type"] === "text" && typeof block["text"] === "string") {
      strings.push({ text: block["text"], at: [...at, "text"], scope: s });
    }
  }
  for (const { text, at, scope: s } of strings) {
    // No empty or whitespace-only text block.
    // Source: https://docs.anthropic.com/en/api/messages (text blocks carry
    // text); messages seen in https://github.com/stackblitz/bolt.new/issues/4701
    // ("must be non-empty") and https://github.com/anthropics/claude-code/issues/23440
    // ("must contain non-whitespace text").
    if (text === "") {
      breaches.push(anthropic(
        "text_nonempty",
        pointer(...at),
        `${s}: text content blocks must be non-empty`,
      ));
    } else if (text.trim() === "") {
      breaches.push(anthropic(
        "text_nonempty",
        pointer(...at),
        `${s}: text content blocks must contain non-whitespace text`,
      ));
    }
  }
  return breaches;
}

/** The ids of the blocks of `type` in a message's content, with their index. */
function blockIds(
  message: unknown,
  type: string,
  key: string,
): { id: string; j: number }[] {
  if (!isObject(message)) return [];
  const out: { id: string; j: number }[] = [];
  for (const [j, block] of arrayOf(message["content"]).entries()) {
    if (isObject(block) && block["type"] === type) {
      out.push({ id: String(block[key]), j });
    }
  }
  return out;
}

function anthropicToolPairs(body: Json): RuleBreach[] {
  // Each tool_result answers a tool_use of the immediately preceding
  // assistant message, and every tool_use is answered in the next (user)
  // message.
  // Source: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#handling-tool-use-and-tool-result-content-blocks
  // ("Tool result blocks must immediately follow their corresponding tool
  // use blocks in the message history"); messages seen in
  // https://github.com/anthropics/claude-code/issues/13460,
  // https://github.com/router-for-me/CLIProxyAPI/issues/497 (tool_result
  // without its tool_use) and https://github.com/anthropics/claude-code/issues/5060,
  // https://github.com/anthropics/claude-code/issues/7929 (tool_use without
  // its tool_result).
  // A body that continues a server-held thread (`thread: {"type":
  // "continue", …}`, which the SDK's tool runner sends by default) carries
  // only the new turn: its first message answers calls held by the server.
  const thread = body["thread"];
  const continued = isObject(thread) && thread["type"] === "continue";
  const breaches: RuleBreach[] = [];
  const messages = arrayOf(body["messages"]);
  for (const [i, message] of messages.entries()) {
    if (!isObject(message) || (continued && i === 0)) continue;
    const before = messages[i - 1];
    const previous = isObject(before) && before["role"] === "assistant"
      ? new Set(blockIds(before, "tool_use", "id").map((u) => u.id))
      : new Set<string>();
    if (message["role"] !== "assistant") {
      for (const { id, j } of blockIds(message, "tool_result", "tool_use_id")) {
        if (previous.has(id)) continue;
        breaches.push(anthropic(
          "tool_result_pairing",
          pointer("messages", i, "content", j, "tool_use_id"),
          `${
            dotted("messages", i, "content", j)
          }: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        ));
      }
      continue;
    }
    const uses = blockIds(message, "tool_use", "id");
    // The last message may be an assistant turn the model continues.
    if (uses.length === 0 || i === messages.length - 1) continue;
    const next = messages[i + 1];
    const answered = isObject(next) && next["role"] === "user"
      ? new Set(blockIds(next, "tool_result", "tool_use_id").map((r) => r.id))
      : new Set<string>();
    const missing = uses.filter((u) => !answered.has(u.id)).map((u) => u.id);
    if (missing.length === 0) continue;
    breaches.push(anthropic(
      "tool_use_answered",
      pointer("messages", i),
      `${
        dotted("messages", i)
      }: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${
        missing.join(", ")
      }. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
    ));
  }
  return breaches;
}

function anthropicCacheControl(body: Json, tools: unknown[]): RuleBreach[] {
  // Blocks in the order the service processes them: tools, system, messages.
  const marked: { at: (string | number)[]; dotted: string; ttl: string }[] = [];
  tools.forEach((tool, i) => {
    if (isObject(tool) && isObject(tool["cache_control"])) {
      marked.push({
        at: ["tools", i, "cache_control"],
        dotted: dotted("tools", i, "cache_control"),
        ttl: ttlOf(tool["cache_control"]),
      });
    }
  });
  for (const { block, at } of textBlocks(body)) {
    if (isObject(block["cache_control"])) {
      marked.push({
        at: [...at, "cache_control"],
        dotted: dotted(...at, "cache_control"),
        ttl: ttlOf(block["cache_control"]),
      });
    }
  }
  const breaches: RuleBreach[] = [];
  // At most 4 blocks with cache_control.
  // Source: https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
  // ("You can define up to 4 cache breakpoints"); message seen in
  // https://github.com/tghamm/Anthropic.SDK/issues/50
  if (marked.length > 4) {
    breaches.push(anthropic(
      "cache_control_count",
      pointer(...marked[4]!.at),
      `A maximum of 4 blocks with cache_control may be provided. Found ${marked.length}.`,
    ));
  }
  // No ttl "1h" block after a "5m" one (the default ttl is 5m).
  // Source: https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#mixing-different-ttls
  // ("cache entries with longer TTL must appear before shorter TTLs"); message seen in
  // https://github.com/cnighswonger/claude-code-cache-fix/issues/44
  const firstShort = marked.findIndex((m) => m.ttl === "5m");
  if (firstShort !== -1) {
    const late = marked.slice(firstShort + 1).find((m) => m.ttl === "1h");
    if (late !== undefined) {
      breaches.push(anthropic(
        "cache_ttl_order",
        pointer(...late.at, "ttl"),
        `${late.dotted}.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: \`tools\`, \`system\`, \`messages\`.`,
      ));
    }
  }
  return breaches;
}

function ttlOf(control: Json): string {
  return control["ttl"] === "1h" ? "1h" : "5m";
}

// ---------------------------------------------------------------------------
// OpenAI Chat Completions

function openai(rule: string, path: string, message: string): RuleBreach {
  return {
    service: "openai",
    rule: `openai.${rule}`,
    path,
    status: 400,
    type: "invalid_request_error",
    message,
  };
}

/**
 * Whether a model is one of OpenAI's reasoning models (`gpt-5*`, `o1`, `o3`,
 * `o4-mini`, …), which take `max_completion_tokens` and only the default
 * temperature.
 */
function reasoningModel(model: unknown): boolean {
  return typeof model === "string" && /^(gpt-5|o\d)/.test(model);
}

/**
 * The rules OpenAI's Chat Completions checks on a request body before any
 * model sees it: function names and parameter schemas, the forced
 * `tool_choice`, the reasoning models' parameters, and the order of `tool`
 * messages.
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
  if (!isObject(body)) {
    return [openai("body", "", "Request body must be a JSON object")];
  }
  const breaches: RuleBreach[] = [];
  const names = new Set<string>();
  for (const [i, tool] of arrayOf(body["tools"]).entries()) {
    if (!isObject(tool) || !isObject(tool["function"])) continue;
    const fn = tool["function"];
    const name = fn["name"];
    if (typeof name === "string") names.add(name);
    breaches.push(...openAIFunction(fn, i));
  }
  breaches.push(...openAIToolChoice(body["tool_choice"], names));
  breaches.push(...openAIReasoning(body));
  breaches.push(...openAIToolMessages(body));
  return breaches;
}

function openAIFunction(fn: Json, i: number): RuleBreach[] {
  const breaches: RuleBreach[] = [];
  const name = fn["name"];
  const where = `tools[${i}].function.name`;
  // Function names match ^[a-zA-Z0-9_-]+$, at most 64 characters.
  // Source: https://platform.openai.com/docs/api-reference/chat/create
  // (function.name: "a-z, A-Z, 0-9, or contain underscores and dashes, with a
  // maximum length of 64"); message seen in https://github.com/brekkylab/ailoy/pull/109
  if (typeof name !== "string" || !/^[a-zA-Z0-9_-]+$/.test(name)) {
    breaches.push(openai(
      "function_name_pattern",
      pointer("tools", i, "function", "name"),
      `Invalid '${where}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
    ));
  } else if (name.length > 64) {
    breaches.push(openai(
      "function_name_pattern",
      pointer("tools", i, "function", "name"),
      `Invalid '${where}': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`,
    ));
  }
  const parameters = fn["parameters"];
  if (parameters === undefined) return breaches;
  const at = pointer("tools", i, "function", "parameters");
  // The parameters have type "object" and no oneOf/anyOf/allOf/enum/not at
  // the top level.
  // Source: https://platform.openai.com/docs/guides/function-calling
  // (parameters: "a JSON Schema object"); messages seen in
  // https://github.com/nspady/google-calendar-mcp/issues/39 and
  // https://github.com/chatanywhere/GPT_API_free/issues/403
  if (!isObject(parameters) || parameters["type"] !== "object") {
    const type = isObject(parameters) && typeof parameters["type"] === "string"
      ? parameters["type"]
      : "null";
    breaches.push(openai(
      "function_parameters_root",
      at,
      `Invalid schema for function '${
        String(name)
      }': schema must be a JSON Schema of 'type: "object"', got 'type: ${type}'.`,
    ));
  } else if (OPENAI_ROOT_FORBIDDEN.some((k) => k in parameters)) {
    breaches.push(openai(
      "function_parameters_root",
      at,
      `Invalid schema for function '${
        String(name)
      }': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level.`,
    ));
  }
  return breaches;
}

function openAIToolChoice(
  choice: unknown,
  names: ReadonlySet<string>,
): RuleBreach[] {
  // A forced tool_choice names a function of the request.
  // Source: https://platform.openai.com/docs/api-reference/chat/create
  // (tool_choice {"type": "function", "function": {"name": "my_function"}}
  // "forces the model to call that tool"). The wording of the service's
  // refusal is not published in a public thread; this message is Loom's.
  if (!isObject(choice) || choice["type"] !== "function") return [];
  const fn = choice["function"];
  const name = isObject(fn) ? fn["name"] : undefined;
  if (typeof name === "string" && names.has(name)) return [];
  return [openai(
    "tool_choice_exists",
    "/tool_choice/function/name",
    `Invalid value for 'tool_choice': no function named '${
      String(name)
    }' is in 'tools'.`,
  )];
}

function openAIReasoning(body: Json): RuleBreach[] {
  if (!reasoningModel(body["model"])) return [];
  const breaches: RuleBreach[] = [];
  // Reasoning models take max_completion_tokens, not max_tokens.
  // Source: https://platform.openai.com/docs/guides/reasoning and
  // https://platform.openai.com/docs/api-reference/chat/create (max_tokens is
  // "not compatible with o-series models"); message seen in
  // https://github.com/griptape-ai/ComfyUI-Griptape/issues/312
  if (body["max_tokens"] !== undefined) {
    breaches.push(openai(
      "max_completion_tokens",
      "/max_tokens",
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    ));
  }
  // Reasoning models accept only the default temperature (1).
  // Source: https://platform.openai.com/docs/guides/reasoning; message seen in
  // https://github.com/gabrii/Cursor-Azure-GPT-5/issues/33
  const temperature = body["temperature"];
  if (
    temperature !== undefined && temperature !== null && temperature !== 1
  ) {
    breaches.push(openai(
      "temperature_default",
      "/temperature",
      `Unsupported value: 'temperature' does not support ${
        String(temperature)
      } with this model. Only the default (1) value is supported.`,
    ));
  }
  return breaches;
}

function openAIToolMessages(body: Json): RuleBreach[] {
  // A `tool` message answers a tool call of the assistant message before it
  // (other tool messages may come between).
  // Source: https://platform.openai.com/docs/guides/function-calling (the
  // result is appended as {"role": "tool", "tool_call_id": …} after the
  // assistant message holding the call); message seen in
  // https://github.com/openai/openai-go/issues/43 and
  // https://github.com/miurla/morphic/issues/136
  const breaches: RuleBreach[] = [];
  let open = new Set<string>();
  for (const [i, message] of arrayOf(body["messages"]).entries()) {
    if (!isObject(message)) continue;
    const role = message["role"];
    if (role === "tool") {
      const id = message["tool_call_id"];
      if (typeof id === "string" && open.has(id)) continue;
      breaches.push(openai(
        "tool_message_order",
        pointer("messages", i, "role"),
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      ));
      continue;
    }
    open = new Set<string>();
    if (role === "assistant") {
      for (const call of arrayOf(message["tool_calls"])) {
        if (isObject(call) && typeof call["id"] === "string") {
          open.add(call["id"]);
        }
      }
    }
  }
  return breaches;
}

// ---------------------------------------------------------------------------
// OpenAI Responses

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
  if (!isObject(body)) {
    return [openai("body", "", "Request body must be a JSON object")];
  }
  const breaches: RuleBreach[] = [];
  const names = new Set<string>();
  for (const [i, tool] of arrayOf(body["tools"]).entries()) {
    if (!isObject(tool) || tool["type"] !== "function") continue;
    const name = tool["name"];
    if (typeof name === "string") names.add(name);
    breaches.push(...responsesFunction(tool, i));
  }
  breaches.push(...responsesToolChoice(body["tool_choice"], names));
  breaches.push(...responsesPairs(body));
  return breaches;
}

function responsesFunction(tool: Json, i: number): RuleBreach[] {
  const breaches: RuleBreach[] = [];
  const name = tool["name"];
  const where = `tools[${i}].name`;
  // Function names match ^[a-zA-Z0-9_-]+$, at most 64 characters.
  // Source: https://platform.openai.com/docs/api-reference/responses/create
  // (tools[].name, as for Chat Completions' function.name); message as seen
  // for Chat in https://github.com/brekkylab/ailoy/pull/109.
  if (typeof name !== "string" || !/^[a-zA-Z0-9_-]+$/.test(name)) {
    breaches.push(openai(
      "function_name_pattern",
      pointer("tools", i, "name"),
      `Invalid '${where}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
    ));
  } else if (name.length > 64) {
    breaches.push(openai(
      "function_name_pattern",
      pointer("tools", i, "name"),
      `Invalid '${where}': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`,
    ));
  }
  const parameters = tool["parameters"];
  if (parameters === undefined || parameters === null) return breaches;
  const at = pointer("tools", i, "parameters");
  // The parameters have type "object" and no oneOf/anyOf/allOf/enum/not at
  // the top level — as for Chat Completions.
  // Source: https://platform.openai.com/docs/guides/function-calling; the
  // Responses message with param `tools[1].parameters` is seen in
  // https://github.com/kevinwatt/mysql-mcp/issues/5
  if (!isObject(parameters) || parameters["type"] !== "object") {
    const type = isObject(parameters) && typeof parameters["type"] === "string"
      ? parameters["type"]
      : "null";
    breaches.push(openai(
      "function_parameters_root",
      at,
      `Invalid schema for function '${
        String(name)
      }': schema must be a JSON Schema of 'type: "object"', got 'type: ${type}'.`,
    ));
    return breaches;
  }
  if (OPENAI_ROOT_FORBIDDEN.some((k) => k in parameters)) {
    breaches.push(openai(
      "function_parameters_root",
      at,
      `Invalid schema for function '${
        String(name)
      }': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level.`,
    ));
    return breaches;
  }
  // With `strict: true`, every object schema lists every property in
  // `required` and sets `additionalProperties: false`, at every depth.
  // Source: https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
  // ("all fields must be required", "additionalProperties: false must always
  // be set in objects"); messages seen in https://github.com/kevinwatt/mysql-mcp/issues/5
  // (required) and https://github.com/lastmile-ai/openai-agents-mcp/issues/2,
  // https://github.com/openai/openai-agents-python/issues/1023 (additionalProperties).
  if (tool["strict"] === true) {
    const problem = strictProblem(parameters, []);
    if (problem !== undefined) {
      breaches.push(openai(
        "function_strict_schema",
        at,
        `Invalid schema for function '${String(name)}': In context=(${
          problem.context.map((c) => `'${c}'`).join(", ")
        }), ${problem.text}`,
      ));
    }
  }
  return breaches;
}

/** The first strict-mode breach of an object schema, depth first. */
function strictProblem(
  schema: unknown,
  context: string[],
): { context: string[]; text: string } | undefined {
  if (!isObject(schema)) return undefined;
  const isObjectSchema = schema["type"] === "object" ||
    (Array.isArray(schema["type"]) && schema["type"].includes("object")) ||
    isObject(schema["properties"]);
  if (isObjectSchema) {
    if (schema["additionalProperties"] !== false) {
      return {
        context,
        text:
          "'additionalProperties' is required to be supplied and to be false.",
      };
    }
    const properties = isObject(schema["properties"])
      ? Object.keys(schema["properties"])
      : [];
    const required = new Set(
      arrayOf(schema["required"]).filter((r) => typeof r === "string"),
    );
    const missing = properties.find((p) => !required.has(p));
    if (missing !== undefined) {
      return {
        context,
        text:
          `'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`,
      };
    }
    for (const p of properties) {
      const inner = strictProblem(
        (schema["properties"] as Json)[p],
        [...context, "properties", p],
      );
      if (inner !== undefined) return inner;
    }
  }
  if (isObject(schema["items"])) {
    const inner = strictProblem(schema["items"], [...context, "items"]);
    if (inner !== undefined) return inner;
  }
  for (const key of ["anyOf", "$defs", "definitions"] as const) {
    const value = schema[key];
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((v, n) => [String(n), v])
      : isObject(value)
      ? Object.entries(value)
      : [];
    for (const [k, v] of entries) {
      const inner = strictProblem(v, [...context, key, k]);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

function responsesToolChoice(
  choice: unknown,
  names: ReadonlySet<string>,
): RuleBreach[] {
  // A forced tool_choice names a function of the request.
  // Source: https://platform.openai.com/docs/api-reference/responses/create
  // (tool_choice {"type": "function", "name": …} forces that function). The
  // wording of the refusal is not published in a public thread; this
  // message is Loom's.
  if (!isObject(choice) || choice["type"] !== "function") return [];
  const name = choice["name"];
  if (typeof name === "string" && names.has(name)) return [];
  return [openai(
    "tool_choice_exists",
    "/tool_choice/name",
    `Invalid value for 'tool_choice': no function named '${
      String(name)
    }' is in 'tools'.`,
  )];
}

function responsesPairs(body: Json): RuleBreach[] {
  const input = body["input"];
  if (!Array.isArray(input)) return [];
  // With `previous_response_id` or an `item_reference` the calls live in a
  // stored response, so only a stateless input can be checked here.
  if (
    typeof body["previous_response_id"] === "string" ||
    input.some((item) => isObject(item) && item["type"] === "item_reference")
  ) return [];
  const breaches: RuleBreach[] = [];
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  for (const [i, item] of input.entries()) {
    if (!isObject(item)) continue;
    if (item["type"] === "function_call") {
      calls.set(String(item["call_id"]), i);
      continue;
    }
    if (item["type"] !== "function_call_output") continue;
    const id = String(item["call_id"]);
    // Every function_call_output answers a function_call earlier in input.
    // Source: https://platform.openai.com/docs/guides/function-calling
    // (the output item carries the call's call_id); message seen in
    // https://github.com/continuedev/continue/issues/10092 and
    // https://github.com/leookun/cursor-byok/issues/307
    if (!calls.has(id)) {
      breaches.push(openai(
        "function_call_output_pairing",
        pointer("input", i, "call_id"),
        `No tool call found for function call output with call_id ${id}.`,
      ));
      continue;
    }
    answered.add(id);
  }
  // Every function_call of the input is answered by a function_call_output.
  // Source: https://platform.openai.com/docs/guides/function-calling
  // ("append the function call and its output to the input"); message seen
  // in https://github.com/tjardoo/openai-client/pull/124 and
  // https://github.com/router-for-me/CLIProxyAPI/issues/2368
  for (const [id, i] of calls) {
    if (answered.has(id)) continue;
    breaches.push(openai(
      "function_call_answered",
      pointer("input", i, "call_id"),
      `No tool output found for function call ${id}.`,
    ));
  }
  return breaches;
}
