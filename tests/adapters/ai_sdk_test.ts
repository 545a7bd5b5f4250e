import assert from "node:assert/strict";
import {
  generateText,
  jsonSchema,
  stepCountIs,
  tool,
  wrapLanguageModel,
} from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import {
  loomMiddleware,
  loomTools,
  retrievalTools,
} from "../../lib/adapters/ai_sdk.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { RETRIEVAL_TOOLS } from "../../lib/reference/retrieval_tools.ts";
import { scriptedServer } from "./_scripted_server.ts";
import * as scenario from "./_scenario.ts";

const EMPTY = jsonSchema<Record<string, never>>({
  type: "object",
  properties: {},
  additionalProperties: false,
});

function models(url: string) {
  return {
    anthropic: createAnthropic({ baseURL: `${url}/v1`, apiKey: "sk-local" })(
      "claude-sonnet-4-5",
    ),
    openai: createOpenAI({ baseURL: `${url}/v1`, apiKey: "sk-local" })(
      "gpt-5",
    ),
  };
}

Deno.test("the AI SDK adapter keeps a 2 MB tool result out of every request and the model reads values from it", async (t) => {
  for (const provider of ["anthropic", "openai"] as const) {
    await t.step(`through @ai-sdk/${provider}`, async () => {
      await using run = scenario.bigDocumentRun();
      const { server, text, value } = run;
      const store = new ResultStore();
      const model = wrapLanguageModel({
        model: models(server.url)[provider],
        middleware: loomMiddleware({ store }),
      });
      const result = await generateText({
        model,
        system: "You answer questions about the catalogue.",
        prompt: "Which item holds the secret?",
        tools: {
          ...loomTools({
            catalogue: tool({ inputSchema: EMPTY, execute: () => value }),
          }, { store }),
          ...retrievalTools(store),
        },
        stopWhen: stepCountIs(8),
        providerOptions: { openai: { store: false } },
      });
      assert.equal(result.text, "done");
      run.assertRun();
      assert.equal(store.count, 1);
      assert.equal(
        new TextDecoder().decode(store.get("result-1")!.bytes),
        text,
      );
      // The retrieval tools reach the service with the shared definitions.
      const sent = (server.received[0]!.body["tools"] as Record<
        string,
        unknown
      >[]).map((t) =>
        [
          t["name"],
          t["input_schema"] ?? t["parameters"] ??
            (t["function"] as Record<string, unknown>)?.["parameters"],
        ] as const
      ).filter(([name]) => name !== "catalogue");
      assert.deepEqual(
        sent,
        RETRIEVAL_TOOLS.map((d) => [d.name, d.inputSchema] as const),
      );
      if (provider === "anthropic") {
        const marks = server.received.map((r) =>
          JSON.stringify(r.body).match(/"cache_control"/g)?.length ?? 0
        );
        assert.ok(marks.every((n) => n >= 2 && n <= 4), String(marks));
      } else {
        const keys = new Set(
          server.received.map((r) => r.body["prompt_cache_key"]),
        );
        assert.equal(keys.size, 1);
        assert.match(String([...keys][0]), /^loom-[0-9a-f]{32}$/);
      }
    });
  }
});

Deno.test("the AI SDK adapter retires old results in batches over a 40-turn conversation and every retired result stays readable", async (t) => {
  for (const provider of ["anthropic", "openai"] as const) {
    await t.step(`through @ai-sdk/${provider}`, async () => {
      await using server = scriptedServer(scenario.longModel(40));
      const store = new ResultStore();
      const budgetBytes = 48 * 1024;
      const result = await generateText({
        model: wrapLanguageModel({
          model: models(server.url)[provider],
          middleware: loomMiddleware({ store, budgetBytes }),
        }),
        system: "Probe forty times.",
        prompt: "Start.",
        tools: {
          ...loomTools({
            probe: tool({
              inputSchema: jsonSchema<{ turn: number }>({
                type: "object",
                properties: { turn: { type: "integer" } },
                required: ["turn"],
                additionalProperties: false,
              }),
              execute: ({ turn }) => scenario.turnResult(turn),
            }),
          }, { store }),
          ...retrievalTools(store),
        },
        stopWhen: stepCountIs(50),
        providerOptions: { openai: { store: false } },
      });
      assert.equal(result.text, "finished");
      assert.deepEqual(server.refused, []);
      assert.equal(server.received.length, 41);
      const retiredAt = scenario.assertRetiredInBatches(
        server.received,
        store,
        budgetBytes + 16 * 1024,
      );
      // Between retirements each request begins with the previous one's messages.
      for (let i = 1; i < server.received.length; i++) {
        if (retiredAt[i] !== retiredAt[i - 1]) continue;
        const before = JSON.stringify(messagesOf(server.received[i - 1]!.body));
        const now = JSON.stringify(messagesOf(server.received[i]!.body));
        assert.ok(
          now.startsWith(before.slice(0, before.length - 1)),
          `request ${i} changed its prefix without a retirement`,
        );
      }
    });
  }
});

function messagesOf(body: Record<string, unknown>): unknown[] {
  const all = (body["messages"] ?? body["input"]) as unknown[];
  // The breakpoints move to the newest messages; compare without them.
  return JSON.parse(
    JSON.stringify(all).replaceAll(
      /,?"cache_control":\{"type":"ephemeral"\}/g,
      "",
    ),
  );
}

Deno.test("a second process reads a result the first stored through the AI SDK adapter's session store, by the same reference and digest", async () => {
  await scenario.assertSecondProcessReads(
    "ai-sdk",
    async (url, store, { value }) => {
      const result = await generateText({
        model: wrapLanguageModel({
          model: models(url).anthropic,
          middleware: loomMiddleware({ store }),
        }),
        prompt: "Fetch the catalogue.",
        tools: loomTools({
          catalogue: tool({ inputSchema: EMPTY, execute: () => value }),
        }, { store }),
        stopWhen: stepCountIs(4),
      });
      assert.equal(result.text, "stored");
    },
  );
});
