/** A body the service would refuse is never sent: `provider_contract`, zero requests. */
import assert from "node:assert/strict";
import type { TurnRequest, TurnTool } from "../../lib/briefing/turn_request.ts";
import { exitCodeOfError } from "../../lib/cli/_io.ts";
import { createProvider } from "../../lib/providers/create_provider.ts";
import type { ModelProvider } from "../../lib/providers/model_provider.ts";
import { ProviderError } from "../../lib/providers/provider_error.ts";
import {
  contractError,
  requestBreaches,
} from "../../lib/providers/request_contract.ts";
import { runSlice } from "../../lib/slice/run.ts";
import { fixtureCopy } from "../_kit.ts";
import { recordingPath } from "../e2e/_workspace.ts";
import { fakeServer } from "./_fake_server.ts";
import { selectionRequest } from "./_requests.ts";

/** The step tool as Loom sent it before issue 20: a union at the root. */
const ROOT_UNION_TOOL: TurnTool = {
  name: "loom_step",
  description: "Answer the current stage",
  input_schema: {
    type: "object",
    anyOf: [
      {
        type: "object",
        properties: { action: { type: "string" } },
        required: ["action"],
      },
      { type: "object", properties: { summary: { type: "string" } } },
    ],
  },
};

function withTool(request: TurnRequest, tool: TurnTool): TurnRequest {
  return { ...request, tool, tool_choice: { type: "tool", name: tool.name } };
}

const CASES = [
  {
    spec: "anthropic:claude-sonnet-4-5",
    rule: "anthropic.tool_schema_root",
    path: "/tools/0/input_schema",
  },
  {
    spec: "openai:gpt-5",
    rule: "openai.function_parameters_root",
    path: "/tools/0/function/parameters",
  },
] as const;

for (const { spec, rule, path } of CASES) {
  Deno.test(`${spec}: a body breaking ${rule} never reaches the network and is provider_contract`, async () => {
    // The fake would answer 200 to anything that reached it.
    await using server = fakeServer([{ status: 200, body: {} }]);
    const provider = createProvider(spec, {
      baseUrl: server.url,
      env: { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" },
      maxRetries: 0,
    });
    await assert.rejects(
      provider.call({
        phase: "selection",
        tool: "select_action",
        request: withTool(selectionRequest(), ROOT_UNION_TOOL),
      }),
      (error: unknown) => {
        assert.ok(error instanceof ProviderError);
        assert.equal(error.code, "provider_contract");
        assert.equal(error.rule, rule);
        assert.equal(error.path, path);
        assert.match(error.message, new RegExp(`rule ${rule} at ${path}`));
        assert.match(error.message, /at the top level$/);
        return true;
      },
    );
    assert.equal(server.received.length, 0);
  });

  Deno.test(`${spec}: a slice whose request breaks ${rule} stops provider_error at step 1 without a call`, async () => {
    await using server = fakeServer([{ status: 200, body: {} }]);
    await using copy = await fixtureCopy("bugfix");
    const live = createProvider(spec, {
      baseUrl: server.url,
      env: { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" },
      maxRetries: 0,
    });
    // The run's requests, sent with the old root-union tool.
    const provider: ModelProvider = {
      spec: live.spec,
      call: (call) =>
        live.call({
          ...call,
          request: withTool(call.request, ROOT_UNION_TOOL),
        }),
    };
    const outcome = await runSlice({
      ...copy.request(`recorded:${recordingPath("bugfix")}`, 8),
      provider,
    });
    assert.equal(outcome.stop, "provider_error");
    assert.match(outcome.detail, new RegExp(`^provider_contract: .*${rule}`));
    assert.equal(outcome.model_calls, 0);
    assert.equal(outcome.steps, 1);
    assert.equal(server.received.length, 0);
  });
}

Deno.test("provider_contract is a failure after the start: exit 3", () => {
  const error = contractError({
    service: "anthropic",
    rule: "anthropic.max_tokens_required",
    path: "/max_tokens",
    status: 400,
    type: "invalid_request_error",
    message: "max_tokens: Field required",
  });
  assert.equal(exitCodeOfError(error), 3);
  assert.equal(
    error.message,
    "Anthropic would refuse this request (rule anthropic.max_tokens_required at /max_tokens), so it was not sent: max_tokens: Field required",
  );
});

Deno.test("requestBreaches() checks the body as serialized: undefined fields are not sent", async () => {
  const body = {
    model: "gpt-5",
    max_tokens: undefined,
    messages: [{ role: "user", content: "Hi" }],
  };
  assert.deepEqual(await requestBreaches("openai", body), []);
});
