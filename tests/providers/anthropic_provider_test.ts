import assert from "node:assert/strict";
import type { TurnRequest } from "../../lib/briefing/turn_request.ts";
import { CompileOptionsError } from "../../lib/context/errors.ts";
import {
  createProvider,
  type CreateProviderOptions,
} from "../../lib/providers/create_provider.ts";
import type { ModelCall } from "../../lib/providers/model_provider.ts";
import { providerContract, providerError } from "./_contract.ts";
import { fakeServer } from "./_fake_server.ts";
import { selectionRequest } from "./_requests.ts";

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

const ANTHROPIC = providerContract({
  name: "Anthropic",
  spec: "anthropic:claude-test",
  env: { ANTHROPIC_API_KEY: "sk-ant-test" },
  baseUrl: (url) => url,
  ok: OK,
  okArguments: { action: "repository.inspect" },
  okResponse: {
    id: "msg_01",
    model: "claude-test",
    finish_reasons: ["tool_use"],
  },
  okUsage: {
    input_tokens: 120,
    output_tokens: 9,
    cache_read_tokens: 2048,
    cache_write_tokens: 300,
  },
  errorBody: (type, text) => ({
    type: "error",
    error: { type, message: text },
  }),
  retried: [429, 500, 529],
  retriedError: ["overloaded_error", "Try again"],
  persistent: [503, ["api_error", "Down"], 1, /HTTP 503: Down \(2 attempts\)/],
  unauthorized: [
    ["authentication_error", "invalid x-api-key"],
    /^Anthropic rejected the API key with HTTP 401: check ANTHROPIC_API_KEY: invalid x-api-key$/,
  ],
  unreachable: /^Cannot reach Anthropic/,
});

Deno.test("the Anthropic provider sends the exact Messages request with a forced tool", async () => {
  const sent = await ANTHROPIC.sent();
  assert.equal(sent.path, "/v1/messages");
  // The SDK decides the header (x-api-key or a bearer token); the key must travel in one.
  const credential = sent.headers.get("x-api-key") ??
    sent.headers.get("authorization");
  assert.match(credential ?? "", /^(Bearer )?sk-ant-test$/);
  assert.ok(sent.headers.get("anthropic-version"));
  // The turn's system, messages and tool go out as they are, markers included.
  const { system, messages, tool, tool_choice } = selectionRequest();
  assert.deepEqual(sent.body, {
    model: "claude-test",
    max_tokens: 8192,
    system,
    messages,
    tools: [tool],
    tool_choice,
  });
  assert.deepEqual(tool_choice, { type: "tool", name: "select_action" });
  assert.equal(JSON.stringify(sent.body).match(/"cache_control"/g)?.length, 2);
});

Deno.test("the Anthropic provider reports absent cache counters as null", async () => {
  const reply = await ANTHROPIC.reply({
    status: 200,
    body: message([TOOL_USE], { usage: { input_tokens: 5, output_tokens: 2 } }),
  });
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
    const provider = ANTHROPIC.at(server.url);
    await provider.call(withMarkers(4));
    const body = server.received[0]?.body as {
      messages: { content: { cache_control?: unknown }[] }[];
    };
    const markers = JSON.stringify(body).match(/"cache_control"/g) ?? [];
    assert.equal(markers.length, 4);
  });

  await t.step("5 markers are a RangeError and nothing is sent", async () => {
    await using server = fakeServer([OK]);
    const provider = ANTHROPIC.at(server.url);
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
      const provider = ANTHROPIC.at(server.url);
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

Deno.test("the Anthropic provider refuses an answer without the forced tool call", async (t) => {
  const cases: [string, unknown, RegExp, CreateProviderOptions][] = [
    [
      "text only is a provider_protocol error carrying the partial usage",
      message([{ type: "text", text: "I would rather chat" }], {
        stop_reason: "end_turn",
      }),
      /without the forced select_action tool call/,
      {},
    ],
    [
      "a call of another tool is a provider_protocol error",
      message([{ ...TOOL_USE, name: "action_arguments" }]),
      /called tool "action_arguments" instead of the forced select_action/,
      {},
    ],
    [
      "stopping at max_tokens is a provider_protocol error",
      message([TOOL_USE], { stop_reason: "max_tokens" }),
      /max_tokens \(64\)/,
      { maxTokens: 64 },
    ],
  ];
  for (const [name, body, pattern, options] of cases) {
    await t.step(name, async () => {
      const { error, received } = await ANTHROPIC.failure(body, options);
      providerError("provider_protocol", pattern)(error);
      assert.equal(error.usage?.input_tokens, 120);
      assert.equal(
        (received[0]?.body as { max_tokens: number }).max_tokens,
        options.maxTokens ?? 8192,
      );
    });
  }
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
