import assert from "node:assert/strict";
import { createProvider } from "../../lib/providers/create_provider.ts";
import { providerContract, providerError } from "./_contract.ts";
import { fakeServer } from "./_fake_server.ts";
import { completionOf, toolCallMessage } from "./_hostile_server.ts";
import { selectionCall, selectionRequest } from "./_requests.ts";

/** A completion as OpenAI sends it, with usage counters (1,024 tokens cached). */
function completion(
  message: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...completionOf(message),
    model: "gpt-test",
    choices: [{ index: 0, message, finish_reason: "stop", logprobs: null }],
    usage: {
      prompt_tokens: 1500,
      completion_tokens: 12,
      total_tokens: 1512,
      prompt_tokens_details: { cached_tokens: 1024 },
    },
    ...extra,
  };
}

/** A call of `name` with `args`, with some text beside it. */
function toolCall(name: string, args: string): Record<string, unknown> {
  return toolCallMessage(name, args, "Sure, running the tests");
}

const OK = {
  status: 200,
  body: completion(toolCall("select_action", '{"action":"tests.run"}')),
};

const OPENAI = providerContract({
  name: "OpenAI",
  spec: "openai:gpt-test",
  env: { OPENAI_API_KEY: "sk-openai-test" },
  baseUrl: (url) => `${url}/v1`,
  ok: OK,
  okArguments: { action: "tests.run" },
  okResponse: {
    id: "chatcmpl-h",
    model: "gpt-test",
    finish_reasons: ["stop"],
  },
  okUsage: {
    input_tokens: 1500,
    output_tokens: 12,
    cache_read_tokens: 1024,
    cache_write_tokens: null,
  },
  errorBody: (type, text) => ({
    error: { message: text, type, param: null, code: null },
  }),
  retried: [429, 500, 503],
  retriedError: ["server_error", "Busy"],
  persistent: [429, ["rate_limit", "Slow down"], 2, /HTTP 429.*Slow down/],
  unauthorized: [
    ["invalid_request_error", "Incorrect API key provided"],
    /^The server at http:\/\/127\.0\.0\.1:\d+\/v1 rejected the API key with HTTP 401: check OPENAI_API_KEY: Incorrect API key provided$/,
  ],
  unreachable: /^Cannot reach the server at http:\/\/127\.0\.0\.1/,
});

Deno.test("the OpenAI provider sends the exact Chat Completions request with a forced function", async () => {
  const sent = await OPENAI.sent();
  assert.equal(sent.path, "/v1/chat/completions");
  assert.equal(sent.headers.get("authorization"), "Bearer sk-openai-test");
  // Each side's blocks are joined by blank lines; the tool becomes a function.
  const { tool } = selectionRequest();
  assert.deepEqual(sent.body, {
    model: "gpt-test",
    messages: [
      {
        role: "system",
        content: "You are a careful engineer\n\nTool guidance",
      },
      {
        role: "user",
        content:
          "Intent: fix the bug\n\nRecent events\n\nCandidates: repository.inspect, tests.run",
      },
    ],
    tools: [{
      type: "function",
      function: {
        name: tool.name,
        description: tool.description,
        parameters: tool.input_schema,
      },
    }],
    tool_choice: { type: "function", function: { name: "select_action" } },
  });
  assert.equal(tool.name, "select_action");
  assert.doesNotMatch(JSON.stringify(sent.body), /cache_control/);
});

Deno.test("the OpenAI provider reports missing usage as null counters", async () => {
  const reply = await OPENAI.reply({
    status: 200,
    body: completion(
      toolCall("select_action", '{"action":"tests.run"}'),
      { usage: undefined },
    ),
  });
  assert.deepEqual(reply.usage, {
    input_tokens: null,
    output_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
  });
});

Deno.test("the OpenAI provider refuses an answer without a usable forced call", async (t) => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      "invalid JSON arguments",
      completion(toolCall("select_action", '{"action": "tests.run"')),
      /select_action call's arguments are not valid JSON/,
    ],
    [
      "no tool call",
      completion({ role: "assistant", content: "Hello" }),
      /without the forced select_action function call/,
    ],
    [
      "another function",
      completion(toolCall("action_arguments", "{}")),
      /called "action_arguments" instead of the forced select_action/,
    ],
    [
      "the length limit",
      {
        ...completion(toolCall("select_action", '{"act')),
        choices: [{
          index: 0,
          message: toolCall("select_action", '{"act'),
          finish_reason: "length",
          logprobs: null,
        }],
      },
      /stopped at the length limit/,
    ],
    ["no choice", completion({}, { choices: [] }), /empty choices array/],
  ];
  for (const [name, body, pattern] of cases) {
    await t.step(
      `${name} is a provider_protocol error carrying the partial usage`,
      async () => {
        const { error } = await OPENAI.failure(body);
        providerError("provider_protocol", pattern)(error);
        assert.equal(error.usage?.input_tokens, 1500);
      },
    );
  }
});

Deno.test("the OpenAI provider's key rules", async (t) => {
  await t.step(
    "without a base URL a missing OPENAI_API_KEY fails at creation",
    () => {
      assert.throws(
        () => createProvider("openai:gpt-test", { env: {} }),
        providerError("missing_api_key", /OPENAI_API_KEY is not set/),
      );
    },
  );

  await t.step(
    "with a base URL a missing key sends no Authorization header",
    async () => {
      await using server = fakeServer([OK]);
      const provider = createProvider("openai:local-model", {
        env: {},
        baseUrl: `${server.url}/v1`,
      });
      const reply = await provider.call(selectionCall());
      assert.deepEqual(reply.arguments, { action: "tests.run" });
      assert.equal(server.received[0]?.headers.get("authorization"), null);
    },
  );
});
