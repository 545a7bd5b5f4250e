import assert from "node:assert/strict";
import {
  checkAnthropicRequest,
  checkOpenAIRequest,
  checkOpenAIResponsesRequest,
  type RuleBreach,
} from "../../lib/providers/request_rules.ts";

type Body = Record<string, unknown>;

/** One rule: a body the service takes, and one it refuses with its message. */
interface RuleCase {
  readonly rule: string;
  readonly accepted: Body;
  readonly refused: Body;
  readonly path: string;
  readonly message: RegExp;
}

const tool = (name: string, input_schema: unknown) => ({
  name,
  description: "d",
  input_schema,
});

const OBJECT = { type: "object", properties: { a: { type: "string" } } };

function anthropicBody(over: Body = {}): Body {
  return {
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    system: [{ type: "text", text: "Rules" }],
    messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
    tools: [tool("loom_step", OBJECT)],
    tool_choice: { type: "tool", name: "loom_step" },
    ...over,
  };
}

function marked(ttls: (string | undefined)[]): Body {
  return anthropicBody({
    system: ttls.map((ttl, i) => ({
      type: "text",
      text: `block ${i}`,
      cache_control: ttl === undefined
        ? { type: "ephemeral" }
        : { type: "ephemeral", ttl },
    })),
  });
}

const ANTHROPIC: RuleCase[] = [
  {
    rule: "anthropic.max_tokens_required",
    accepted: anthropicBody(),
    refused: (() => {
      const { max_tokens: _, ...rest } = anthropicBody();
      return rest;
    })(),
    path: "/max_tokens",
    message: /^max_tokens: Field required$/,
  },
  {
    rule: "anthropic.tool_name_pattern",
    accepted: anthropicBody({
      tools: [tool("a-b_C9", OBJECT)],
      tool_choice: undefined,
    }),
    refused: anthropicBody({
      tools: [tool("loom.step", OBJECT)],
      tool_choice: undefined,
    }),
    path: "/tools/0/name",
    message:
      /^tools\.0\.custom\.name: String should match pattern '\^\[a-zA-Z0-9_-\]\{1,64\}\$'$/,
  },
  {
    rule: "anthropic.tool_schema_type",
    accepted: anthropicBody(),
    refused: anthropicBody({
      tools: [tool("loom_step", { anyOf: [OBJECT] })],
    }),
    path: "/tools/0/input_schema/type",
    message: /^tools\.0\.custom\.input_schema\.type: Input should be 'object'$/,
  },
  {
    rule: "anthropic.tool_schema_root",
    accepted: anthropicBody({
      tools: [tool("loom_step", {
        type: "object",
        properties: { step: { anyOf: [OBJECT, { type: "string" }] } },
        required: ["step"],
      })],
    }),
    refused: anthropicBody({
      tools: [tool("loom_step", { type: "object", anyOf: [OBJECT] })],
    }),
    path: "/tools/0/input_schema",
    message:
      /^tools\.0\.custom\.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level$/,
  },
  {
    rule: "anthropic.tool_schema_draft_2020_12",
    accepted: anthropicBody({
      tools: [tool("loom_step", {
        type: "object",
        properties: { n: { type: "integer", minimum: 0 } },
        required: ["n"],
      })],
    }),
    refused: anthropicBody({
      tools: [tool("loom_step", {
        type: "object",
        properties: { n: { type: "int" } },
        required: "n",
      })],
    }),
    path: "/tools/0/input_schema",
    message:
      /^tools\.0\.custom\.input_schema: JSON schema is invalid\. It must match JSON Schema draft 2020-12/,
  },
  {
    rule: "anthropic.tool_choice_exists",
    accepted: anthropicBody(),
    refused: anthropicBody({ tool_choice: { type: "tool", name: "other" } }),
    path: "/tool_choice/name",
    message: /^Tool 'other' not found in provided tools$/,
  },
  {
    rule: "anthropic.text_nonempty",
    accepted: anthropicBody(),
    refused: anthropicBody({
      messages: [{ role: "user", content: [{ type: "text", text: "" }] }],
    }),
    path: "/messages/0/content/0/text",
    message: /^messages: text content blocks must be non-empty$/,
  },
  {
    rule: "anthropic.text_nonempty",
    accepted: anthropicBody({ system: [{ type: "text", text: " x " }] }),
    refused: anthropicBody({ system: [{ type: "text", text: " \n\t" }] }),
    path: "/system/0/text",
    message: /^system: text content blocks must contain non-whitespace text$/,
  },
  {
    rule: "anthropic.cache_control_count",
    accepted: marked([undefined, undefined, undefined, undefined]),
    refused: marked([undefined, undefined, undefined, undefined, undefined]),
    path: "/system/4/cache_control",
    message:
      /^A maximum of 4 blocks with cache_control may be provided\. Found 5\.$/,
  },
  {
    rule: "anthropic.cache_ttl_order",
    accepted: marked(["1h", "1h", "5m", undefined]),
    refused: marked(["1h", undefined, "1h"]),
    path: "/system/2/cache_control/ttl",
    message:
      /^system\.2\.cache_control\.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block\. Note that blocks are processed in the following order: `tools`, `system`, `messages`\.$/,
  },
];

function openAIBody(over: Body = {}): Body {
  return {
    model: "gpt-4.1",
    messages: [
      { role: "system", content: "Rules" },
      { role: "user", content: "Hi" },
    ],
    tools: [{
      type: "function",
      function: { name: "loom_step", description: "d", parameters: OBJECT },
    }],
    tool_choice: { type: "function", function: { name: "loom_step" } },
    ...over,
  };
}

const fn = (name: string, parameters: unknown) => ({
  type: "function",
  function: { name, description: "d", parameters },
});

const OPENAI: RuleCase[] = [
  {
    rule: "openai.function_parameters_root",
    accepted: openAIBody(),
    refused: openAIBody({
      tools: [fn("loom_step", { type: "object", anyOf: [OBJECT] })],
    }),
    path: "/tools/0/function/parameters",
    message:
      /^Invalid schema for function 'loom_step': schema must have type 'object' and not have 'oneOf'\/'anyOf'\/'allOf'\/'enum'\/'not' at the top level\.$/,
  },
  {
    rule: "openai.function_parameters_root",
    accepted: openAIBody(),
    refused: openAIBody({ tools: [fn("loom_step", { anyOf: [OBJECT] })] }),
    path: "/tools/0/function/parameters",
    message:
      /^Invalid schema for function 'loom_step': schema must be a JSON Schema of 'type: "object"', got 'type: null'\.$/,
  },
  {
    rule: "openai.function_name_pattern",
    accepted: openAIBody({
      tools: [fn("a-b_C9", OBJECT)],
      tool_choice: "auto",
    }),
    refused: openAIBody({
      tools: [fn("loom step", OBJECT)],
      tool_choice: "auto",
    }),
    path: "/tools/0/function/name",
    message:
      /^Invalid 'tools\[0\]\.function\.name': string does not match pattern\. Expected a string that matches the pattern '\^\[a-zA-Z0-9_-\]\+\$'\.$/,
  },
  {
    rule: "openai.function_name_pattern",
    accepted: openAIBody({
      tools: [fn("x".repeat(64), OBJECT)],
      tool_choice: "auto",
    }),
    refused: openAIBody({
      tools: [fn("x".repeat(65), OBJECT)],
      tool_choice: "auto",
    }),
    path: "/tools/0/function/name",
    message:
      /string too long\. Expected a string with maximum length 64, but got a string with length 65 instead\.$/,
  },
  {
    rule: "openai.tool_choice_exists",
    accepted: openAIBody(),
    refused: openAIBody({
      tool_choice: { type: "function", function: { name: "other" } },
    }),
    path: "/tool_choice/function/name",
    message: /'tool_choice'.*'other'/,
  },
  {
    rule: "openai.max_completion_tokens",
    accepted: openAIBody({ model: "gpt-5", max_completion_tokens: 1024 }),
    refused: openAIBody({ model: "gpt-5", max_tokens: 1024 }),
    path: "/max_tokens",
    message:
      /^Unsupported parameter: 'max_tokens' is not supported with this model\. Use 'max_completion_tokens' instead\.$/,
  },
  {
    rule: "openai.temperature_default",
    accepted: openAIBody({ model: "o4-mini", temperature: 1 }),
    refused: openAIBody({ model: "o4-mini", temperature: 0 }),
    path: "/temperature",
    message:
      /^Unsupported value: 'temperature' does not support 0 with this model\. Only the default \(1\) value is supported\.$/,
  },
  {
    rule: "openai.tool_message_order",
    accepted: openAIBody({
      messages: [
        { role: "user", content: "Hi" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "c1",
              type: "function",
              function: { name: "loom_step", arguments: "{}" },
            },
            {
              id: "c2",
              type: "function",
              function: { name: "loom_step", arguments: "{}" },
            },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "one" },
        { role: "tool", tool_call_id: "c2", content: "two" },
      ],
    }),
    refused: openAIBody({
      messages: [
        { role: "user", content: "Hi" },
        { role: "tool", tool_call_id: "c1", content: "one" },
      ],
    }),
    path: "/messages/1/role",
    message:
      /^Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'\.$/,
  },
  {
    // The strict-mode rules are stated once for both of OpenAI's shapes.
    rule: "openai.function_strict_schema",
    accepted: openAIBody({
      tools: [{
        type: "function",
        function: {
          name: "loom_step",
          parameters: {
            ...OBJECT,
            required: ["a"],
            additionalProperties: false,
          },
          strict: true,
        },
      }],
    }),
    refused: openAIBody({
      tools: [{
        type: "function",
        function: { name: "loom_step", parameters: OBJECT, strict: true },
      }],
    }),
    path: "/tools/0/function/parameters",
    message:
      /^Invalid schema for function 'loom_step': In context=\(\), 'additionalProperties' is required to be supplied and to be false\.$/,
  },
];

function table(
  service: string,
  cases: RuleCase[],
  check: (body: unknown) => RuleBreach[],
): void {
  for (const [i, c] of cases.entries()) {
    Deno.test(`${service} rule ${c.rule} accepts a good body and refuses ${c.path} with the service's message (case ${i + 1})`, () => {
      assert.deepEqual(check(c.accepted), []);
      const breaches = check(c.refused);
      assert.equal(breaches.length, 1, JSON.stringify(breaches));
      const [breach] = breaches;
      assert.equal(breach!.rule, c.rule);
      assert.equal(breach!.path, c.path);
      assert.equal(breach!.status, 400);
      assert.equal(breach!.type, "invalid_request_error");
      assert.match(breach!.message, c.message);
    });
  }
}

const use = (id: string) => ({
  type: "tool_use",
  id,
  name: "loom_step",
  input: {},
});
const result = (id: string) => ({
  type: "tool_result",
  tool_use_id: id,
  content: "r",
});

const ANTHROPIC_HISTORY: RuleCase[] = [
  {
    rule: "anthropic.tool_result_pairing",
    accepted: anthropicBody({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [use("t1"), use("t2")] },
        { role: "user", content: [result("t1"), result("t2")] },
      ],
    }),
    refused: anthropicBody({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [use("t1")] },
        { role: "user", content: [result("t1")] },
        { role: "assistant", content: [{ type: "text", text: "ok" }] },
        { role: "user", content: [result("t1")] },
      ],
    }),
    path: "/messages/4/content/0/tool_use_id",
    message:
      /^messages\.4\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: t1\. Each `tool_result` block must have a corresponding `tool_use` block in the previous message\.$/,
  },
  {
    rule: "anthropic.tool_use_answered",
    accepted: anthropicBody({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [use("t1")] },
        {
          role: "user",
          content: [result("t1"), { type: "text", text: "next" }],
        },
      ],
    }),
    refused: anthropicBody({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [use("t1"), use("t2")] },
        { role: "user", content: [result("t1")] },
      ],
    }),
    path: "/messages/1",
    message:
      /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: t2\. Each `tool_use` block must have a corresponding `tool_result` block in the next message\.$/,
  },
];

function responsesBody(over: Body = {}): Body {
  return {
    model: "gpt-5",
    input: [{ role: "user", content: "Hi" }],
    tools: [{
      type: "function",
      name: "lookup",
      parameters: {
        type: "object",
        properties: { q: { type: "string" } },
        required: ["q"],
        additionalProperties: false,
      },
      strict: true,
    }],
    ...over,
  };
}

const call = (id: string) => ({
  type: "function_call",
  call_id: id,
  name: "lookup",
  arguments: "{}",
});
const output = (id: string) => ({
  type: "function_call_output",
  call_id: id,
  output: "r",
});

function strictTool(parameters: unknown): Body {
  return responsesBody({
    tools: [{ type: "function", name: "lookup", parameters, strict: true }],
  });
}

const RESPONSES: RuleCase[] = [
  {
    rule: "openai.function_call_output_pairing",
    accepted: responsesBody({
      input: [{ role: "user", content: "Hi" }, call("c1"), output("c1")],
    }),
    refused: responsesBody({
      input: [{ role: "user", content: "Hi" }, output("c1")],
    }),
    path: "/input/1/call_id",
    message: /^No tool call found for function call output with call_id c1\.$/,
  },
  {
    rule: "openai.function_call_answered",
    accepted: responsesBody(),
    refused: responsesBody({
      input: [{ role: "user", content: "Hi" }, call("c1"), {
        role: "user",
        content: "more",
      }],
    }),
    path: "/input/1/call_id",
    message: /^No tool output found for function call c1\.$/,
  },
  {
    rule: "openai.function_strict_schema",
    accepted: strictTool({
      type: "object",
      properties: {
        a: {
          type: "object",
          properties: { b: { type: "string" } },
          required: ["b"],
          additionalProperties: false,
        },
      },
      required: ["a"],
      additionalProperties: false,
    }),
    refused: strictTool({
      type: "object",
      properties: { q: { type: "string" }, r: { type: "string" } },
      required: ["q"],
      additionalProperties: false,
    }),
    path: "/tools/0/parameters",
    message:
      /^Invalid schema for function 'lookup': In context=\(\), 'required' is required to be supplied and to be an array including every key in properties\. Missing 'r'\.$/,
  },
  {
    rule: "openai.function_strict_schema",
    accepted: responsesBody({
      tools: [{
        type: "function",
        name: "lookup",
        parameters: { type: "object", properties: { a: { type: "object" } } },
        strict: false,
      }],
    }),
    refused: strictTool({
      type: "object",
      properties: { a: { type: "object", properties: {} } },
      required: ["a"],
      additionalProperties: false,
    }),
    path: "/tools/0/parameters",
    message:
      /^Invalid schema for function 'lookup': In context=\('properties', 'a'\), 'additionalProperties' is required to be supplied and to be false\.$/,
  },
  {
    rule: "openai.function_name_pattern",
    accepted: responsesBody(),
    refused: responsesBody({
      tools: [{
        type: "function",
        name: "a.b",
        parameters: null,
        strict: false,
      }],
    }),
    path: "/tools/0/name",
    message: /^Invalid 'tools\[0\]\.name': string does not match pattern/,
  },
  {
    rule: "openai.function_parameters_root",
    accepted: responsesBody(),
    refused: responsesBody({
      tools: [{
        type: "function",
        name: "lookup",
        parameters: { type: "object", anyOf: [] },
        strict: false,
      }],
    }),
    path: "/tools/0/parameters",
    message:
      /^Invalid schema for function 'lookup': schema must have type 'object'/,
  },
  {
    rule: "openai.tool_choice_exists",
    accepted: responsesBody({
      tool_choice: { type: "function", name: "lookup" },
    }),
    refused: responsesBody({
      tool_choice: { type: "function", name: "other" },
    }),
    path: "/tool_choice/name",
    message: /^Invalid value for 'tool_choice': no function named 'other'/,
  },
];

table("Anthropic", ANTHROPIC, checkAnthropicRequest);
table("Anthropic history", ANTHROPIC_HISTORY, checkAnthropicRequest);
table("OpenAI", OPENAI, checkOpenAIRequest);
table("OpenAI Responses", RESPONSES, checkOpenAIResponsesRequest);

Deno.test("a Responses input that leans on a stored response is not checked for pairs", () => {
  assert.deepEqual(
    checkOpenAIResponsesRequest(responsesBody({
      previous_response_id: "resp_1",
      input: [output("c1")],
    })),
    [],
  );
  assert.deepEqual(
    checkOpenAIResponsesRequest(responsesBody({
      input: [{ type: "item_reference", id: "fc_1" }, output("c1")],
    })),
    [],
  );
});

Deno.test("an Anthropic history may end on an assistant turn whose calls are not answered yet", () => {
  assert.deepEqual(
    checkAnthropicRequest(anthropicBody({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [use("t1")] },
      ],
    })),
    [],
  );
});

Deno.test("the OpenAI reasoning-model rules leave other models alone", () => {
  assert.deepEqual(
    checkOpenAIRequest(openAIBody({ max_tokens: 10, temperature: 0 })),
    [],
  );
});

Deno.test("a tool message after the assistant's calls are answered by a user turn is refused", () => {
  const breaches = checkOpenAIRequest(openAIBody({
    messages: [
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "c1",
          type: "function",
          function: { name: "f", arguments: "{}" },
        }],
      },
      { role: "user", content: "between" },
      { role: "tool", tool_call_id: "c1", content: "late" },
    ],
  }));
  assert.deepEqual(breaches.map((b) => b.path), ["/messages/2/role"]);
});

Deno.test("a body that is not an object breaks a rule of either service", () => {
  assert.equal(checkAnthropicRequest([]).length, 1);
  assert.equal(checkOpenAIRequest("x").length, 1);
  assert.equal(checkOpenAIResponsesRequest(null).length, 1);
});

Deno.test("an Anthropic body continuing a server-held thread may open on tool results", () => {
  const messages = [{ role: "user", content: [result("t1")] }];
  assert.deepEqual(
    checkAnthropicRequest(anthropicBody({
      messages,
      thread: { type: "continue", previous_message_id: "msg_1" },
    })),
    [],
  );
  assert.equal(
    checkAnthropicRequest(anthropicBody({ messages }))[0]?.rule,
    "anthropic.tool_result_pairing",
  );
});

Deno.test("a tool schema that declares draft-07 in $schema is checked against 2020-12, not thrown on", () => {
  const input_schema = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
  };
  const body = {
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    messages: [{ role: "user", content: "x" }],
    tools: [{ name: "read", input_schema }],
  };
  assert.deepEqual(checkAnthropicRequest(body), []);
  const broken = {
    ...body,
    tools: [{
      name: "read",
      input_schema: { ...input_schema, properties: { path: { type: 7 } } },
    }],
  };
  assert.ok(
    checkAnthropicRequest(broken).some((b) =>
      b.rule === "anthropic.tool_schema_draft_2020_12"
    ),
  );
});
