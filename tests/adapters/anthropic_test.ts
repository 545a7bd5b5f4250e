import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { betaZodTool } from "@anthropic-ai/sdk/helpers/beta/zod";
import { z } from "zod";
import {
  loomMiddleware,
  loomTools,
  prepare,
  retrievalTools,
} from "../../lib/adapters/anthropic.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { breakpoints, scriptedServer } from "./_scripted_server.ts";
import * as scenario from "./_scenario.ts";

/** The client docs/adapters.md shows: `loomMiddleware` shapes every body. */
function loomClient(url: string, store: ResultStore, budgetBytes?: number) {
  return new Anthropic({
    baseURL: url,
    apiKey: "sk-local",
    middleware: [
      loomMiddleware({
        store,
        ...(budgetBytes === undefined ? {} : { budgetBytes }),
      }),
    ],
    maxRetries: 0,
  });
}

Deno.test("the Anthropic adapter keeps a 2 MB tool result out of every tool-runner request and the model reads values from it", async () => {
  await using run = scenario.bigDocumentRun();
  const { server, value } = run;
  const store = new ResultStore();
  const client = loomClient(server.url, store);
  const final = await client.beta.messages.toolRunner({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    system: "You answer questions about the catalogue.",
    messages: [{ role: "user", content: "Which item holds the secret?" }],
    tools: [
      ...loomTools([
        betaZodTool({
          name: "catalogue",
          description: "The whole catalogue",
          inputSchema: z.object({}),
          run: () => JSON.stringify(value),
        }),
      ], { store }),
      ...retrievalTools(store),
    ],
    max_iterations: 8,
    thread: false,
  });
  assert.deepEqual(final.content, [{ type: "text", text: "done" }]);
  run.assertRun();
  for (const r of server.received) {
    assert.ok(breakpoints(r.body) >= 2 && breakpoints(r.body) <= 4);
  }
});

Deno.test("the Anthropic adapter retires old results in batches over a 40-turn tool-runner conversation and every retired result stays readable", async () => {
  await using server = scriptedServer(scenario.longModel(40));
  const store = new ResultStore();
  const budgetBytes = 48 * 1024;
  const client = loomClient(server.url, store, budgetBytes);
  const final = await client.beta.messages.toolRunner({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    system: "Probe forty times.",
    messages: [{ role: "user", content: "Start." }],
    tools: [
      ...loomTools([
        betaZodTool({
          name: "probe",
          description: "One probe",
          inputSchema: z.object({ turn: z.number().int() }),
          run: ({ turn }) => scenario.turnResult(turn),
        }),
      ], { store }),
      ...retrievalTools(store),
    ],
    max_iterations: 50,
    thread: false,
  });
  assert.deepEqual(final.content, [{ type: "text", text: "finished" }]);
  assert.deepEqual(server.refused, []);
  assert.equal(server.received.length, 41);
  scenario.assertRetiredInBatches(server.received, store, 64 * 1024);
  for (const r of server.received) assert.ok(breakpoints(r.body) <= 4);
});

Deno.test("prepare keeps the prefix byte-identical between retirements, retires in batches of 8 and places at most 4 breakpoints", async () => {
  const store = new ResultStore();
  const messages: Record<string, unknown>[] = [{ role: "user", content: "Go" }];
  let previous = "";
  let previousRetired = 0;
  let retirements = 0;
  for (let i = 0; i < 30; i++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `t${i}`, name: "probe", input: {} }],
    });
    messages.push({
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: `t${i}`,
        content: `${i}`.padEnd(4000, "z"),
      }],
    });
    const body = await prepare({
      model: "m",
      max_tokens: 10,
      system: "s",
      tools: [{ name: "probe", input_schema: { type: "object" } }],
      messages,
    }, { store, budgetBytes: 32 * 1024 });
    assert.ok(breakpoints(body) <= 4);
    const text = JSON.stringify(body).replaceAll(
      /,"cache_control":\{"type":"ephemeral"\}/g,
      "",
    );
    const retired = (text.match(/\\"retired\\":true/g) ?? []).length;
    if (retired === previousRetired) {
      assert.ok(
        text.startsWith(previous.slice(0, previous.length - 3)),
        `request ${i} changed its prefix without a retirement`,
      );
    } else {
      // A batch is 8 results, or every open one but the newest turn's.
      assert.ok(retired - previousRetired >= Math.min(8, i - previousRetired));
      retirements += 1;
    }
    assert.ok(text.length <= 33 * 1024, `${text.length}`);
    previous = text.slice(0, text.lastIndexOf('{"role":"assistant"'));
    previousRetired = retired;
  }
  assert.ok(retirements >= 2, `${retirements}`);
});

Deno.test("prepare never retires a result of 512 bytes or less, whose descriptor would save nothing", async () => {
  const store = new ResultStore();
  const messages: Record<string, unknown>[] = [{ role: "user", content: "Go" }];
  for (let i = 0; i < 12; i++) {
    messages.push(
      {
        role: "assistant",
        content: [{ type: "tool_use", id: `t${i}`, name: "probe", input: {} }],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: `t${i}`,
          content: `${i}`.padEnd(i % 2 === 0 ? 512 : 2000, "z"),
        }],
      },
    );
  }
  const body = await prepare({ model: "m", max_tokens: 10, messages }, {
    store,
    budgetBytes: 1024,
  });
  const contents = (body.messages as { content: Record<string, unknown>[] }[])
    .flatMap((m) => Array.isArray(m.content) ? m.content : [])
    .filter((b) => b["type"] === "tool_result")
    .map((b) => String(b["content"]));
  // Every 2,000-byte result but the newest turn's is retired; none of 512.
  assert.deepEqual(
    contents.map((c) => c.includes('"retired":true') ? "retired" : c.length),
    [
      512,
      "retired",
      512,
      "retired",
      512,
      "retired",
      512,
      "retired",
      512,
      "retired",
      512,
      2000,
    ],
  );
  assert.equal(store.count, 5);
});

Deno.test("a second process reads a result the first stored through the Anthropic adapter's session store, by the same reference and digest", async () => {
  await scenario.assertSecondProcessReads(
    "anthropic",
    async (url, store, { text }) => {
      const final = await loomClient(url, store).beta.messages.toolRunner({
        model: "claude-sonnet-4-5",
        max_tokens: 1024,
        messages: [{ role: "user", content: "Fetch the catalogue." }],
        tools: loomTools([
          betaZodTool({
            name: "catalogue",
            description: "The whole catalogue",
            inputSchema: z.object({}),
            run: () => text,
          }),
        ], { store }),
        max_iterations: 4,
        thread: false,
      });
      assert.deepEqual(final.content, [{ type: "text", text: "stored" }]);
    },
  );
});
