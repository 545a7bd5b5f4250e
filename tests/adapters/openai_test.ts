import assert from "node:assert/strict";
import {
  Agent,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import {
  loomInputFilter,
  loomTools,
  promptCacheKey,
  retrievalTools,
} from "../../lib/adapters/openai.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { z } from "zod";
import { scriptedServer } from "./_scripted_server.ts";
import * as scenario from "./_scenario.ts";

setTracingDisabled(true);

function runner(url: string): Runner {
  return new Runner({
    modelProvider: new OpenAIProvider({
      baseURL: `${url}/v1`,
      apiKey: "sk-local",
      useResponses: true,
    }),
    tracingDisabled: true,
  });
}

Deno.test("the OpenAI adapter keeps a 2 MB tool result out of every Agents SDK request and the model reads values from it", async () => {
  await using run = scenario.bigDocumentRun();
  const { server, value } = run;
  const store = new ResultStore();
  const instructions = "You answer questions about the catalogue.";
  const tools = [
    ...loomTools([tool({
      name: "catalogue",
      description: "The whole catalogue",
      parameters: z.object({}),
      strict: true,
      execute: () => JSON.stringify(value),
    })], { store }),
    ...retrievalTools(store),
  ];
  const agent = new Agent({
    name: "catalogue",
    instructions,
    model: "gpt-5",
    tools,
    modelSettings: {
      providerData: { prompt_cache_key: promptCacheKey(instructions, tools) },
    },
  });
  const result = await runner(server.url).run(
    agent,
    "Which item holds the secret?",
    { callModelInputFilter: loomInputFilter({ store }), maxTurns: 8 },
  );
  assert.equal(result.finalOutput, "done");
  run.assertRun();
  const keys = new Set(server.received.map((r) => r.body["prompt_cache_key"]));
  assert.deepEqual([...keys], [promptCacheKey(instructions, tools)]);
  assert.ok(server.received.every((r) => r.path === "/v1/responses"));
});

Deno.test("the OpenAI adapter retires old outputs in batches over a 40-turn Agents SDK run and every retired result stays readable", async () => {
  await using server = scriptedServer(scenario.longModel(40));
  const store = new ResultStore();
  const agent = new Agent({
    name: "probe",
    instructions: "Probe forty times.",
    model: "gpt-5",
    tools: [
      ...loomTools([tool({
        name: "probe",
        description: "One probe",
        parameters: z.object({ turn: z.number().int() }),
        strict: true,
        execute: ({ turn }) => scenario.turnResult(turn),
      })], { store }),
      ...retrievalTools(store),
    ],
  });
  const result = await runner(server.url).run(agent, "Start.", {
    callModelInputFilter: loomInputFilter({ store, budgetBytes: 48 * 1024 }),
    maxTurns: 50,
  });
  assert.equal(result.finalOutput, "finished");
  assert.deepEqual(server.refused, []);
  assert.equal(server.received.length, 41);
  scenario.assertRetiredInBatches(server.received, store, 64 * 1024);
});

Deno.test("a second process reads a result the first stored through the OpenAI adapter's session store, by the same reference and digest", async () => {
  await scenario.assertSecondProcessReads(
    "openai",
    async (url, store, { text }) => {
      const agent = new Agent({
        name: "catalogue",
        instructions: "Fetch the catalogue.",
        model: "gpt-5",
        tools: loomTools([tool({
          name: "catalogue",
          description: "The whole catalogue",
          parameters: z.object({}),
          strict: true,
          execute: () => text,
        })], { store }),
      });
      const result = await runner(url).run(agent, "Fetch it.", {
        callModelInputFilter: loomInputFilter({ store }),
        maxTurns: 4,
      });
      assert.equal(result.finalOutput, "stored");
    },
  );
});
