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
import { Retrieval } from "../../lib/reference/retrieval.ts";
import { RETRIEVAL_TOOLS } from "../../lib/reference/retrieval_tools.ts";
import { sessionStore } from "../../lib/adapters/session_result_store.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import { tempDir } from "../_kit.ts";
import { scriptedServer } from "./_scripted_server.ts";
import {
  assertBigDocumentRun,
  assertSecondProcess,
  bigDocument,
  bigDocumentModel,
  type Findings,
  longModel,
  referencesIn,
  runSecondProcess,
  type SecondFindings,
  secondProcessModel,
  storeOnceModel,
  turnResult,
} from "./_scenario.ts";

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
  const { text, value } = bigDocument();
  for (const provider of ["anthropic", "openai"] as const) {
    await t.step(`through @ai-sdk/${provider}`, async () => {
      const findings: Findings = {};
      await using server = scriptedServer(
        bigDocumentModel("catalogue", findings),
      );
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
      assertBigDocumentRun(server.received, server.refused, findings, value);
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
      await using server = scriptedServer(longModel(40));
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
              execute: ({ turn }) => turnResult(turn),
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
      const sizes = server.received.map((r) => r.text.length);
      assert.ok(Math.max(...sizes) < budgetBytes + 16 * 1024, String(sizes));
      const retiredAt = server.received.map((r) =>
        (r.text.match(/\\"retired\\":true|"retired":true/g) ?? []).length
      );
      assert.ok(retiredAt.at(-1)! >= 8, String(retiredAt));
      // Retirements happen in batches: the count never moves by fewer than 8.
      const steps = retiredAt.slice(1).map((n, i) => n - retiredAt[i]!).filter((
        d,
      ) => d !== 0);
      assert.ok(steps.every((d) => d >= 8), String(steps));
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
      // Every result referenced in the last request is readable, digest-checked.
      const last = server.received.at(-1)!.text;
      const references = referencesIn(last);
      assert.equal(references.length, 40);
      const retrieval = new Retrieval(store);
      for (const [i, reference] of references.entries()) {
        const read = retrieval.read({ reference });
        assert.ok(read.ok);
        const whole = read.structured["selected_text"] as string;
        assert.ok(turnResult(i).startsWith(whole.slice(0, 1000)));
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
  const { text, value } = bigDocument();
  await using home = await tempDir();
  const dir = `${home.path}/chat-1`;
  const keyFile = `${home.path}/session.key`;
  await using first = scriptedServer(storeOnceModel("catalogue"));
  {
    await using store = await sessionStore(dir, { keyFile });
    const result = await generateText({
      model: wrapLanguageModel({
        model: models(first.url).anthropic,
        middleware: loomMiddleware({ store }),
      }),
      prompt: "Fetch the catalogue.",
      tools: loomTools({
        catalogue: tool({ inputSchema: EMPTY, execute: () => value }),
      }, { store }),
      stopWhen: stepCountIs(4),
    });
    assert.equal(result.text, "stored");
  }
  const [reference] = referencesIn(first.received.at(-1)!.text);
  assert.equal(reference!["sha256"], sha256Hex(new TextEncoder().encode(text)));
  const findings: SecondFindings = {};
  await using second = scriptedServer(secondProcessModel(reference!, findings));
  const run = await runSecondProcess("ai-sdk", second.url, dir, keyFile);
  assertSecondProcess(run, second.received, second.refused, findings, value);
});
