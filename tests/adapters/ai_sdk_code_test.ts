// codeTool through the AI SDK against the fake providers: the model's code
// calls the developer's own tools in the sandbox, a 2 MB result never
// reaches a request, a large answer comes back as a descriptor that
// read_result reads, and a failing run is a tool error with its logs.
import assert from "node:assert/strict";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { z } from "zod";
import { codeTool, retrievalTools } from "../../lib/adapters/ai_sdk.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { HAVE_BWRAP } from "../security/_bwrap.ts";
import { scriptedServer, toolResults } from "./_scripted_server.ts";
import { bigDocument } from "./_scenario.ts";

const CODE = `const doc = await tools.catalogue({});
const sevens = doc.items.filter((item) => item.tags.includes("seven"));
const top = sevens.sort((a, b) => b.id - a.id).slice(0, 5).map((item) => item.id);
console.log("sevens", sevens.length);
return await tools.label({ ids: top });`;

Deno.test("codeTool runs the model's code over the developer's tools; the 2 MB result never reaches a request", async (t) => {
  const { value } = bigDocument();
  const catalogue = tool({
    description: "The whole catalogue",
    inputSchema: jsonSchema<Record<string, never>>({
      type: "object",
      properties: {},
    }),
    execute: () => value,
  });
  const labelled: number[][] = [];
  const label = tool({
    description: "Labels for item ids",
    inputSchema: jsonSchema<{ ids: number[] }>({
      type: "object",
      properties: { ids: { type: "array", items: { type: "integer" } } },
      required: ["ids"],
    }),
    execute: ({ ids }) => {
      labelled.push(ids);
      return ids.map((id) => `item-${id}`);
    },
  });
  await using run_code = await codeTool({
    tools: { catalogue, label },
    store: new ResultStore(),
    unconfined: !HAVE_BWRAP,
  });
  assert.match(
    run_code.description,
    /catalogue\(args\?: \{\}\): Promise<unknown>;/,
  );
  assert.match(
    run_code.description,
    /label\(args: \{ ids: number\[\] \}\): Promise<unknown>;/,
  );
  for (const provider of ["anthropic", "openai"] as const) {
    await t.step(`through @ai-sdk/${provider}`, async () => {
      labelled.length = 0;
      await using server = scriptedServer((body, wire) =>
        toolResults(body, wire).length === 0
          ? { call: { name: "run_code", input: { code: CODE } } }
          : { text: toolResults(body, wire)[0]! }
      );
      const model = provider === "anthropic"
        ? createAnthropic({ baseURL: `${server.url}/v1`, apiKey: "sk-local" })(
          "claude-sonnet-4-5",
        )
        : createOpenAI({ baseURL: `${server.url}/v1`, apiKey: "sk-local" })(
          "gpt-5",
        );
      const result = await generateText({
        model,
        prompt: "Label the five newest items tagged seven.",
        tools: { run_code },
        stopWhen: stepCountIs(4),
        providerOptions: { openai: { store: false } },
      });
      assert.deepEqual(server.refused, []);
      const answer = JSON.parse(result.text);
      assert.deepEqual(
        answer.result,
        [
          "item-19999",
          "item-19992",
          "item-19985",
          "item-19978",
          "item-19971",
        ],
      );
      assert.deepEqual(answer.logs, ["sevens 2858"]);
      assert.equal(answer.calls, 2);
      assert.deepEqual(labelled, [[19999, 19992, 19985, 19978, 19971]]);
      for (const received of server.received) {
        assert.ok(
          received.text.length < 20_000,
          `${received.text.length} bytes`,
        );
      }
    });
  }
});

Deno.test("codeTool: a large answer is stored and read back with read_result; a failing run is a tool error with its logs", async () => {
  const store = new ResultStore();
  // A zod schema: the SDK validates with it, and so does codeTool.
  const rows = tool({
    description: "Rows",
    inputSchema: z.object({ n: z.number().int() }),
    execute: ({ n }) => Array.from({ length: n }, (_, i) => ({ i })),
  });
  await using run_code = await codeTool({
    tools: { rows },
    store,
    unconfined: !HAVE_BWRAP,
  });
  const big = await run_code.execute({
    code: "return await tools.rows({ n: 3000 });",
  });
  assert.equal(big.result, undefined);
  const stored = big.result_stored as {
    reference: Record<string, unknown>;
    utf8_bytes: number;
  };
  assert.ok(stored.utf8_bytes > 8192);
  const read = await retrievalTools(store).read_result.execute({
    reference: {
      ...stored.reference,
      select: { kind: "json_pointer", pointer: "/2999/i" },
      rendering: "json",
    },
  });
  assert.deepEqual(read, { selected_json: "2999" });
  const loomRead = await run_code.execute({
    code: `return await loom.read({ ...${
      JSON.stringify(stored.reference)
    }, select: { kind: "json_pointer", pointer: "/1500" } });`,
  });
  assert.deepEqual(loomRead.result, { i: 1500 });
  const refused = await run_code.execute({
    code:
      `try { await tools.rows({ n: "many" }); } catch (e) { return [e.name, e.code]; }`,
  });
  assert.deepEqual(refused.result, ["ToolError", "invalid_arguments"]);
  await assert.rejects(
    run_code.execute({
      code: "console.log('before'); throw new Error('broken');",
    }),
    (error: Error & { code?: string }) =>
      error.code === "code_error" &&
      /^code_error: Error: broken/.test(error.message) &&
      /before/.test(error.message),
  );
  await assert.rejects(run_code.execute({ code: 1 }), /invalid_arguments/);
});
