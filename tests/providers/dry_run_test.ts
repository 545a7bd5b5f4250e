import assert from "node:assert/strict";
import { dryRunRequest } from "../../lib/providers/dry_run.ts";
import { providerError } from "./_contract.ts";
import { selectionRequest } from "./_requests.ts";

Deno.test("dryRunRequest() builds each service's body and URL without a key", async () => {
  const anthropic = await dryRunRequest(
    "anthropic:claude-sonnet-4-5",
    selectionRequest(),
  );
  assert.equal(anthropic.service, "anthropic");
  assert.equal(anthropic.url, "https://api.anthropic.com/v1/messages");
  assert.equal(anthropic.body["max_tokens"], 8192);
  assert.deepEqual(anthropic.breaches, []);
  const openai = await dryRunRequest("openai:gpt-5", selectionRequest(), {
    baseUrl: "http://127.0.0.1:8000/v1/",
  });
  assert.equal(openai.url, "http://127.0.0.1:8000/v1/chat/completions");
  assert.deepEqual(openai.body["tool_choice"], {
    type: "function",
    function: { name: "select_action" },
  });
});

Deno.test("dryRunRequest() reports the rules the body breaks", async () => {
  const request = selectionRequest();
  const dry = await dryRunRequest("anthropic:claude-sonnet-4-5", {
    ...request,
    tool: {
      ...request.tool,
      input_schema: { type: "object", oneOf: [{ type: "object" }] },
    },
  });
  assert.deepEqual(dry.breaches.map((b) => [b.rule, b.path]), [
    ["anthropic.tool_schema_root", "/tools/0/input_schema"],
  ]);
});

Deno.test("dryRunRequest() refuses a spec that is not a live provider", async () => {
  await assert.rejects(
    dryRunRequest("recorded:r.json", selectionRequest()),
    providerError("bad_spec", /use --model anthropic:MODEL or openai:MODEL/),
  );
});
