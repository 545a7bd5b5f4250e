import assert from "node:assert/strict";
import type { TurnRequest } from "../../lib/briefing/turn_request.ts";
import { CompileOptionsError } from "../../lib/context/errors.ts";
import { createProvider } from "../../lib/providers/create_provider.ts";
import type { ModelCall } from "../../lib/providers/model_provider.ts";
import { ProviderError } from "../../lib/providers/provider_error.ts";
import { closedPortUrl, fakeServer, RETRY_SOON } from "./_fake_server.ts";
import { selectionCall, selectionRequest } from "./_requests.ts";

const ENV = { ANTHROPIC_API_KEY: "sk-ant-test" };

function message(
  content: unknown[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content,
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 120,
      output_tokens: 9,
      cache_read_input_tokens: 2048,
      cache_creation_input_tokens: 300,
    },
    ...extra,
  };
}

const TOOL_USE = {
  type: "tool_use",
  id: "toolu_01",
  name: "select_action",
  input: { action: "repository.inspect" },
};

const OK = {
  status: 200,
  body: message([{ type: "text", text: "Let me look first" }, TOOL_USE]),
};

function anthropicError(type: string, text: string): Record<string, unknown> {
  return { type: "error", error: { type, message: text } };
}

function withMarkers(count: number): ModelCall {
  const base = selectionRequest();
  const blocks = Array.from({ length: count }, (_, i) => ({
    type: "text" as const,
    text: `block ${i}`,
    cache_control: { type: "ephemeral" as const },
  }));
  const request: TurnRequest = {
    ...base,
    system: [{ type: "text", text: "Instructions" }],
    messages: [{ role: "user", content: blocks }],
  };
  return { phase: "selection", tool: "select_action", request };
}

function providerError(code: string, pattern?: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof ProviderError, `not a ProviderError: ${error}`);
    assert.equal(error.code, code);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  };
}

Deno.test("the Anthropic provider sends the exact Messages request with a forced tool", async () => {
  await using server = fakeServer([OK]);
  const provider = createProvider("anthropic:claude-test", {
    env: ENV,
    baseUrl: server.url,
  });
  assert.equal(provider.spec, "anthropic:claude-test");
  await provider.call(selectionCall());

  assert.equal(server.received.length, 1);
  const [sent] = server.received;
  assert.ok(sent);
  assert.equal(sent.method, "POST");
  assert.equal(sent.path, "/v1/messages");
  // The SDK decides the header (x-api-key or a bearer token); the key must travel in one.
  const credential = sent.headers.get("x-api-key") ??
    sent.headers.get("authorization");
  assert.match(credential ?? "", /^(Bearer )?sk-ant-test$/);
  assert.ok(sent.headers.get("anthropic-version"));
  assert.deepEqual(sent.body, {
    model: "claude-test",
    max_tokens: 8192,
    system: [
      { type: "text", text: "You are a careful engineer" },
      {
        type: "text",
        text: "Tool guidance",
        cache_control: { type: "ephemeral", ttl: "1h" },
      },
    ],
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "Intent: fix the bug" },
        {
          type: "text",
          text: "Recent events",
          cache_control: { type: "ephemeral" },
        },
        { type: "text", text: "Candidates: repository.inspect, tests.run" },
      ],
    }],
    tools: [{
      name: "select_action",
      description: "Choose the next action",
      input_schema: {
        type: "object",
        properties: {
          action: { type: "string", enum: ["repository.inspect", "tests.run"] },
        },
        required: ["action"],
        additionalProperties: false,
      },
    }],
    tool_choice: { type: "tool", name: "select_action" },
  });
});

Deno.test("the Anthropic provider returns the tool_use input and maps usage with cache counters", async () => {
  await using server = fakeServer([OK]);
  const provider = createProvider("anthropic:claude-test", {
    env: ENV,
    baseUrl: server.url,
  });
  const reply = await provider.call(selectionCall());
  assert.deepEqual(reply, {
    arguments: { action: "repository.inspect" },
    usage: {
      input_tokens: 120,
      output_tokens: 9,
      cache_read_tokens: 2048,
      cache_write_tokens: 300,
    },
    final_usage: true,
  });
});

Deno.test("the Anthropic provider reports absent cache counters as null", async () => {
  await using server = fakeServer([{
    status: 200,
    body: message([TOOL_USE], { usage: { input_tokens: 5, output_tokens: 2 } }),
  }]);
  const provider = createProvider("anthropic:claude-test", {
    env: ENV,
    baseUrl: server.url,
  });
  const reply = await provider.call(selectionCall());
  assert.deepEqual(reply.usage, {
    input_tokens: 5,
    output_tokens: 2,
    cache_read_tokens: null,
    cache_write_tokens: null,
  });
});

Deno.test("the Anthropic provider never sends more than 4 cache breakpoints", async (t) => {
  await t.step("4 markers are sent as given", async () => {
    await using server = fakeServer([OK]);
    const provider = createProvider("anthropic:claude-test", {
      env: ENV,
      baseUrl: server.url,
    });
    await provider.call(withMarkers(4));
    const body = server.received[0]?.body as {
      messages: { content: { cache_control?: unknown }[] }[];
    };
    const markers = JSON.stringify(body).match(/"cache_control"/g) ?? [];
    assert.equal(markers.length, 4);
  });

  await t.step("5 markers are a RangeError and nothing is sent", async () => {
    await using server = fakeServer([OK]);
    const provider = createProvider("anthropic:claude-test", {
      env: ENV,
      baseUrl: server.url,
    });
    await assert.rejects(provider.call(withMarkers(5)), (error: unknown) => {
      assert.ok(error instanceof RangeError);
      assert.ok(error instanceof CompileOptionsError);
      assert.equal(error.code, "too_many_breakpoints");
      assert.match(error.message, /5 cache breakpoints.*at most 4/);
      return true;
    });
    assert.equal(server.received.length, 0);
  });

  await t.step(
    "a 1h marker after a 5m one is a RangeError and nothing is sent",
    async () => {
      await using server = fakeServer([OK]);
      const provider = createProvider("anthropic:claude-test", {
        env: ENV,
        baseUrl: server.url,
      });
      const base = selectionRequest();
      const request: TurnRequest = {
        ...base,
        system: [{
          type: "text",
          text: "A",
          cache_control: { type: "ephemeral", ttl: "5m" },
        }],
        messages: [{
          role: "user",
          content: [{
            type: "text",
            text: "B",
            cache_control: { type: "ephemeral", ttl: "1h" },
          }],
        }],
      };
      await assert.rejects(
        provider.call({ phase: "selection", tool: "select_action", request }),
        (error: unknown) =>
          error instanceof CompileOptionsError &&
          error.code === "cache_ttl_order",
      );
      assert.equal(server.received.length, 0);
    },
  );
});

Deno.test("the Anthropic SDK retries 429 and 5xx answers", async (t) => {
  for (const status of [429, 500, 529]) {
    await t.step(`HTTP ${status} once, then success`, async () => {
      await using server = fakeServer([
        {
          status,
          body: anthropicError("overloaded_error", "Try again"),
          headers: RETRY_SOON,
        },
        OK,
      ]);
      const provider = createProvider("anthropic:claude-test", {
        env: ENV,
        baseUrl: server.url,
      });
      const reply = await provider.call(selectionCall());
      assert.deepEqual(reply.arguments, { action: "repository.inspect" });
      assert.equal(server.received.length, 2);
      assert.deepEqual(server.received[1]?.body, server.received[0]?.body);
    });
  }

  await t.step(
    "a 5xx that persists past the retries is a provider_http error",
    async () => {
      await using server = fakeServer([
        {
          status: 503,
          body: anthropicError("api_error", "Down"),
          headers: RETRY_SOON,
        },
      ]);
      const provider = createProvider("anthropic:claude-test", {
        env: ENV,
        baseUrl: server.url,
        maxRetries: 1,
      });
      await assert.rejects(provider.call(selectionCall()), (error: unknown) => {
        providerError(
          "provider_http",
          /HTTP 503: Down \(2 attempts\)/,
        )(error);
        assert.equal((error as ProviderError).status, 503);
        return true;
      });
      assert.equal(server.received.length, 2);
    },
  );
});

Deno.test("the Anthropic provider explains a 401 and does not retry it", async () => {
  await using server = fakeServer([
    {
      status: 401,
      body: anthropicError("authentication_error", "invalid x-api-key"),
    },
  ]);
  const provider = createProvider("anthropic:claude-test", {
    env: ENV,
    baseUrl: server.url,
  });
  await assert.rejects(provider.call(selectionCall()), (error: unknown) => {
    providerError(
      "provider_http",
      /^Anthropic rejected the API key with HTTP 401: check ANTHROPIC_API_KEY: invalid x-api-key$/,
    )(error);
    assert.equal((error as ProviderError).status, 401);
    return true;
  });
  assert.equal(server.received.length, 1);
});

Deno.test("the Anthropic provider refuses an answer without the forced tool call", async (t) => {
  await t.step(
    "text only is a provider_protocol error carrying the partial usage",
    async () => {
      await using server = fakeServer([{
        status: 200,
        body: message([{ type: "text", text: "I would rather chat" }], {
          stop_reason: "end_turn",
        }),
      }]);
      const provider = createProvider("anthropic:claude-test", {
        env: ENV,
        baseUrl: server.url,
      });
      await assert.rejects(provider.call(selectionCall()), (error: unknown) => {
        providerError(
          "provider_protocol",
          /without the forced select_action tool call/,
        )(error);
        assert.equal((error as ProviderError).usage?.input_tokens, 120);
        return true;
      });
    },
  );

  await t.step(
    "a call of another tool is a provider_protocol error",
    async () => {
      await using server = fakeServer([{
        status: 200,
        body: message([{ ...TOOL_USE, name: "action_arguments" }]),
      }]);
      const provider = createProvider("anthropic:claude-test", {
        env: ENV,
        baseUrl: server.url,
      });
      await assert.rejects(
        provider.call(selectionCall()),
        providerError(
          "provider_protocol",
          /called tool "action_arguments" instead of the forced select_action/,
        ),
      );
    },
  );

  await t.step(
    "stopping at max_tokens is a provider_protocol error",
    async () => {
      await using server = fakeServer([{
        status: 200,
        body: message([TOOL_USE], { stop_reason: "max_tokens" }),
      }]);
      const provider = createProvider("anthropic:claude-test", {
        env: ENV,
        baseUrl: server.url,
        maxTokens: 64,
      });
      await assert.rejects(
        provider.call(selectionCall()),
        providerError("provider_protocol", /max_tokens \(64\)/),
      );
      assert.equal(
        (server.received[0]?.body as { max_tokens: number }).max_tokens,
        64,
      );
    },
  );
});

Deno.test("the Anthropic provider needs ANTHROPIC_API_KEY before any work", async (t) => {
  for (
    const [name, env] of [["unset", {}], ["blank", {
      ANTHROPIC_API_KEY: "  ",
    }]] as const
  ) {
    await t.step(`a ${name} key fails at creation`, () => {
      assert.throws(
        () =>
          createProvider("anthropic:claude-test", {
            env,
            baseUrl: "http://127.0.0.1:9",
          }),
        providerError("missing_api_key", /ANTHROPIC_API_KEY is not set/),
      );
    });
  }
});

Deno.test("the Anthropic provider reports an unreachable server as provider_connection", async () => {
  const url = await closedPortUrl();
  const provider = createProvider("anthropic:claude-test", {
    env: ENV,
    baseUrl: url,
    maxRetries: 0,
  });
  await assert.rejects(
    provider.call(selectionCall()),
    providerError("provider_connection", /^Cannot reach Anthropic/),
  );
});
