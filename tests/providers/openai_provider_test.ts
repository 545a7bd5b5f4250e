import assert from "node:assert/strict";
import { createProvider } from "../../lib/providers/create_provider.ts";
import { ProviderError } from "../../lib/providers/provider_error.ts";
import { closedPortUrl, fakeServer, RETRY_SOON } from "./_fake_server.ts";
import { selectionCall } from "./_requests.ts";

const ENV = { OPENAI_API_KEY: "sk-openai-test" };

function completion(
  message: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_700_000_000,
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

function toolCallMessage(name: string, args: string): Record<string, unknown> {
  return {
    role: "assistant",
    content: "Sure, running the tests",
    tool_calls: [{
      id: "call_1",
      type: "function",
      function: { name, arguments: args },
    }],
  };
}

const OK = {
  status: 200,
  body: completion(toolCallMessage("select_action", '{"action":"tests.run"}')),
};

function openAIError(type: string, text: string): Record<string, unknown> {
  return { error: { message: text, type, param: null, code: null } };
}

function providerError(code: string, pattern?: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof ProviderError, `not a ProviderError: ${error}`);
    assert.equal(error.code, code);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  };
}

Deno.test("the OpenAI provider sends the exact Chat Completions request with a forced function", async () => {
  await using server = fakeServer([OK]);
  const provider = createProvider("openai:gpt-test", {
    env: ENV,
    baseUrl: `${server.url}/v1`,
  });
  assert.equal(provider.spec, "openai:gpt-test");
  await provider.call(selectionCall());

  assert.equal(server.received.length, 1);
  const [sent] = server.received;
  assert.ok(sent);
  assert.equal(sent.method, "POST");
  assert.equal(sent.path, "/v1/chat/completions");
  assert.equal(sent.headers.get("authorization"), "Bearer sk-openai-test");
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
        name: "select_action",
        description: "Choose the next action",
        parameters: {
          type: "object",
          properties: {
            action: {
              type: "string",
              enum: ["repository.inspect", "tests.run"],
            },
          },
          required: ["action"],
          additionalProperties: false,
        },
      },
    }],
    tool_choice: { type: "function", function: { name: "select_action" } },
  });
  assert.doesNotMatch(JSON.stringify(sent.body), /cache_control/);
});

Deno.test("the OpenAI provider parses the function arguments and maps usage", async () => {
  await using server = fakeServer([OK]);
  const provider = createProvider("openai:gpt-test", {
    env: ENV,
    baseUrl: `${server.url}/v1`,
  });
  const reply = await provider.call(selectionCall());
  assert.deepEqual(reply, {
    arguments: { action: "tests.run" },
    usage: {
      input_tokens: 1500,
      output_tokens: 12,
      cache_read_tokens: 1024,
      cache_write_tokens: null,
    },
    final_usage: true,
  });
});

Deno.test("the OpenAI provider reports missing usage as null counters", async () => {
  await using server = fakeServer([{
    status: 200,
    body: completion(
      toolCallMessage("select_action", '{"action":"tests.run"}'),
      {
        usage: undefined,
      },
    ),
  }]);
  const provider = createProvider("openai:gpt-test", {
    env: ENV,
    baseUrl: `${server.url}/v1`,
  });
  const reply = await provider.call(selectionCall());
  assert.deepEqual(reply.usage, {
    input_tokens: null,
    output_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
  });
});

Deno.test("the OpenAI SDK retries 429 and 5xx answers", async (t) => {
  for (const status of [429, 500, 503]) {
    await t.step(`HTTP ${status} once, then success`, async () => {
      await using server = fakeServer([
        {
          status,
          body: openAIError("server_error", "Busy"),
          headers: RETRY_SOON,
        },
        OK,
      ]);
      const provider = createProvider("openai:gpt-test", {
        env: ENV,
        baseUrl: `${server.url}/v1`,
      });
      const reply = await provider.call(selectionCall());
      assert.deepEqual(reply.arguments, { action: "tests.run" });
      assert.equal(server.received.length, 2);
      assert.deepEqual(server.received[1]?.body, server.received[0]?.body);
    });
  }

  await t.step(
    "a 429 that persists past the retries is a provider_http error",
    async () => {
      await using server = fakeServer([
        {
          status: 429,
          body: openAIError("rate_limit", "Slow down"),
          headers: RETRY_SOON,
        },
      ]);
      const provider = createProvider("openai:gpt-test", {
        env: ENV,
        baseUrl: `${server.url}/v1`,
        maxRetries: 2,
      });
      await assert.rejects(provider.call(selectionCall()), (error: unknown) => {
        providerError("provider_http", /HTTP 429.*Slow down/)(error);
        assert.equal((error as ProviderError).status, 429);
        return true;
      });
      assert.equal(server.received.length, 3);
    },
  );
});

Deno.test("the OpenAI provider explains a 401 and does not retry it", async () => {
  await using server = fakeServer([
    {
      status: 401,
      body: openAIError("invalid_request_error", "Incorrect API key provided"),
    },
  ]);
  const base = `${server.url}/v1`;
  const provider = createProvider("openai:gpt-test", {
    env: ENV,
    baseUrl: base,
  });
  await assert.rejects(provider.call(selectionCall()), (error: unknown) => {
    providerError(
      "provider_http",
      /^The server at http:\/\/127\.0\.0\.1:\d+\/v1 rejected the API key with HTTP 401: check OPENAI_API_KEY: Incorrect API key provided$/,
    )(error);
    assert.equal((error as ProviderError).status, 401);
    return true;
  });
  assert.equal(server.received.length, 1);
});

Deno.test("the OpenAI provider refuses an answer without a usable forced call", async (t) => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    [
      "invalid JSON arguments",
      completion(toolCallMessage("select_action", '{"action": "tests.run"')),
      /select_action call's arguments are not valid JSON/,
    ],
    [
      "no tool call",
      completion({ role: "assistant", content: "Hello" }),
      /without the forced select_action function call/,
    ],
    [
      "another function",
      completion(toolCallMessage("action_arguments", "{}")),
      /called "action_arguments" instead of the forced select_action/,
    ],
    [
      "the length limit",
      {
        ...completion(toolCallMessage("select_action", '{"act')),
        choices: [{
          index: 0,
          message: toolCallMessage("select_action", '{"act'),
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
        await using server = fakeServer([{ status: 200, body }]);
        const provider = createProvider("openai:gpt-test", {
          env: ENV,
          baseUrl: `${server.url}/v1`,
        });
        await assert.rejects(
          provider.call(selectionCall()),
          (error: unknown) => {
            providerError("provider_protocol", pattern)(error);
            assert.equal((error as ProviderError).usage?.input_tokens, 1500);
            return true;
          },
        );
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

Deno.test("the OpenAI provider reports an unreachable server as provider_connection", async () => {
  const url = await closedPortUrl();
  const provider = createProvider("openai:gpt-test", {
    env: ENV,
    baseUrl: url,
    maxRetries: 0,
  });
  await assert.rejects(
    provider.call(selectionCall()),
    providerError(
      "provider_connection",
      /^Cannot reach the server at http:\/\/127\.0\.0\.1/,
    ),
  );
});
