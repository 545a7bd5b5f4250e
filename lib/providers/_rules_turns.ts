/**
 * The rules on the conversation of a request: text blocks, the pairing of
 * tool calls and their answers (in each service's own shape), Anthropic's
 * cache markers and the parameters of OpenAI's reasoning models.
 *
 * Each rule cites where the service documents it, or a public thread where
 * its exact error message appears.
 *
 * @module
 */
import {
  anthropicBreach as anthropic,
  arrayOf,
  dotted,
  type Json,
  openAIBreach as openai,
  pointer,
  type RuleBreach,
} from "./_rules_json.ts";
import { isPlainObject } from "../plain_object.ts";

// ---------------------------------------------------------------------------
// Anthropic Messages API

/** Every text block of system and messages, with where it is. */
function* textBlocks(
  body: Json,
): Generator<{ block: Json; at: (string | number)[]; scope: string }> {
  const system = body["system"];
  if (Array.isArray(system)) {
    for (const [j, block] of system.entries()) {
      if (isPlainObject(block)) {
        yield { block, at: ["system", j], scope: "system" };
      }
    }
  }
  for (const [i, message] of arrayOf(body["messages"]).entries()) {
    if (!isPlainObject(message)) continue;
    for (const [j, block] of arrayOf(message["content"]).entries()) {
      if (isPlainObject(block)) {
        yield { block, at: ["messages", i, "content", j], scope: "messages" };
      }
    }
  }
}

export function anthropicText(body: Json): RuleBreach[] {
  const breaches: RuleBreach[] = [];
  // String content is one text block.
  const strings: { text: string; at: (string | number)[]; scope: string }[] =
    [];
  if (typeof body["system"] === "string" && body["system"] !== "") {
    // An empty string system prompt is the same as none; only blank text counts.
    strings.push({ text: body["system"], at: ["system"], scope: "system" });
  }
  for (const [i, message] of arrayOf(body["messages"]).entries()) {
    if (isPlainObject(message) && typeof message["content"] === "string") {
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
  if (!isPlainObject(message)) return [];
  const out: { id: string; j: number }[] = [];
  for (const [j, block] of arrayOf(message["content"]).entries()) {
    if (isPlainObject(block) && block["type"] === type) {
      out.push({ id: String(block[key]), j });
    }
  }
  return out;
}

export function anthropicToolPairs(body: Json): RuleBreach[] {
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
  const continued = isPlainObject(thread) && thread["type"] === "continue";
  const breaches: RuleBreach[] = [];
  const messages = arrayOf(body["messages"]);
  for (const [i, message] of messages.entries()) {
    if (!isPlainObject(message) || (continued && i === 0)) continue;
    const before = messages[i - 1];
    const previous = isPlainObject(before) && before["role"] === "assistant"
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
    const answered = isPlainObject(next) && next["role"] === "user"
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

export function anthropicCacheControl(
  body: Json,
  tools: unknown[],
): RuleBreach[] {
  // Blocks in the order the service processes them: tools, system, messages.
  const marked: { at: (string | number)[]; dotted: string; ttl: string }[] = [];
  tools.forEach((tool, i) => {
    if (isPlainObject(tool) && isPlainObject(tool["cache_control"])) {
      marked.push({
        at: ["tools", i, "cache_control"],
        dotted: dotted("tools", i, "cache_control"),
        ttl: ttlOf(tool["cache_control"]),
      });
    }
  });
  for (const { block, at } of textBlocks(body)) {
    if (isPlainObject(block["cache_control"])) {
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

/**
 * Whether a model is one of OpenAI's reasoning models (`gpt-5*`, `o1`, `o3`,
 * `o4-mini`, …), which take `max_completion_tokens` and only the default
 * temperature.
 */
function reasoningModel(model: unknown): boolean {
  return typeof model === "string" && /^(gpt-5|o\d)/.test(model);
}

export function openAIReasoning(body: Json): RuleBreach[] {
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

export function openAIToolMessages(body: Json): RuleBreach[] {
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
    if (!isPlainObject(message)) continue;
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
        if (isPlainObject(call) && typeof call["id"] === "string") {
          open.add(call["id"]);
        }
      }
    }
  }
  return breaches;
}

// ---------------------------------------------------------------------------
// OpenAI Responses

export function responsesPairs(body: Json): RuleBreach[] {
  const input = body["input"];
  if (!Array.isArray(input)) return [];
  // With `previous_response_id` or an `item_reference` the calls live in a
  // stored response, so only a stateless input can be checked here.
  if (
    typeof body["previous_response_id"] === "string" ||
    input.some((item) =>
      isPlainObject(item) && item["type"] === "item_reference"
    )
  ) return [];
  const breaches: RuleBreach[] = [];
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  for (const [i, item] of input.entries()) {
    if (!isPlainObject(item)) continue;
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
