import assert from "node:assert/strict";
import type {
  ModelCall,
  ModelProvider,
  ModelReply,
} from "../../lib/providers/model_provider.ts";
import { runSlice } from "../../lib/slice/run.ts";
import {
  chatCompletion,
  drip,
  hostileServer,
  json,
  raw,
  stall,
} from "./_hostile_server.ts";
import { forcedTool, isSelection, runAgainst } from "./_slice_server.ts";
import { tempDir } from "../_kit.ts";

const DEEP = 100_000;
const deepText = "[".repeat(DEEP) + "]".repeat(DEEP);
const SLACK_MS = 10_000;

/** Replies to the forced tool with these arguments (a JSON string). */
function answer(tool: string, args: string): Response {
  return json(chatCompletion(tool, args));
}

/** Completes the slice: select slice.complete, then give its summary. */
function complete(body: unknown): Response {
  const tool = forcedTool(body);
  return isSelection(body)
    ? answer(tool, '{"action":"slice.complete"}')
    : answer(tool, '{"summary":"Said hello"}');
}

Deno.test("a reply with invalid JSON arguments is a refusal the model reads on its next request", async () => {
  const bodies: unknown[] = [];
  await using server = hostileServer(({ n, body }) => {
    bodies.push(body);
    const tool = forcedTool(body);
    return n === 1 ? answer(tool, '{"action": "slice.compl') : complete(body);
  });
  const { outcome, report } = await runAgainst(server);
  assert.equal(outcome.stop, "completed", outcome.detail);
  assert.equal(outcome.refusals, 1);
  assert.equal(outcome.steps, 2);
  assert.equal(outcome.model_calls, 3, "the malformed reply counts as a call");
  assert.equal(report.model_calls, 3);
  assert.equal(report.requests.length, 3);
  assert.equal(report.requests[0]?.final_usage, false);
  const next = JSON.stringify(bodies[1]);
  assert.match(next, /refused \(provider_protocol\)/);
  assert.match(next, /broke the protocol \(invalid_arguments\)/);
  assert.match(next, /arguments are not valid JSON/);
  assert.doesNotMatch(JSON.stringify(bodies[0]), /broke the protocol/);
});

Deno.test("three protocol failures in a row stop the run with provider_protocol", async () => {
  await using server = hostileServer(({ body }) =>
    answer("not_" + forcedTool(body), "{}")
  );
  const { outcome, report, progress } = await runAgainst(server);
  assert.equal(outcome.stop, "provider_error");
  assert.match(
    outcome.detail,
    /^provider_protocol: 3 replies in a row broke the protocol; the last: .*called "not_loom_step" instead of the forced loom_step/,
  );
  assert.equal(outcome.model_calls, 3);
  assert.equal(outcome.refusals, 3);
  assert.equal(report.outcome.stop, "provider_error");
  assert.equal(report.model_calls, 3);
  assert.equal(progress.length, 3);
  assert.match(progress[0] ?? "", /refused \(provider_protocol\)/);
});

Deno.test("a usable reply resets the count of protocol failures", async () => {
  // bad, bad, good (an inspect step), bad, bad, then completion.
  let step = 0;
  await using server = hostileServer(({ body }) => {
    const tool = forcedTool(body);
    step += 1;
    if ([1, 2, 5, 6].includes(step)) return json({ choices: [] });
    if (step === 3) return answer(tool, '{"action":"repository.inspect"}');
    if (step === 4) return answer(tool, '{"paths":["a.txt"]}');
    return complete(body);
  });
  const { outcome } = await runAgainst(server, { maxSteps: 10 });
  assert.equal(outcome.stop, "completed", outcome.detail);
  assert.equal(outcome.refusals, 4);
  assert.equal(outcome.model_calls, 8);
});

const SHAPES: [string, (tool: string) => Response, string][] = [
  [
    "a body that is not JSON",
    () => raw("this is not json {"),
    "malformed_response",
  ],
  ["an empty choices array", () => json({ choices: [] }), "no_choice"],
  [
    "a null message",
    () => json({ choices: [{ message: null }] }),
    "malformed_response",
  ],
  [
    "finish_reason length",
    (t) => json(chatCompletion(t, "{", { finish_reason: "length" })),
    "truncated",
  ],
  [
    "no tool call",
    () =>
      json({
        choices: [{ finish_reason: "stop", message: { content: "hi" } }],
      }),
    "no_tool_call",
  ],
  ["a wrong tool", () => answer("shell.exec", "{}"), "wrong_tool"],
  ["invalid JSON arguments", (t) => answer(t, "not json"), "invalid_arguments"],
  ["arguments nested 100,000 deep", (t) => answer(t, deepText), "too_deep"],
];

for (const [name, reply, problem] of SHAPES) {
  Deno.test(`a slice survives ${name}: refused as ${problem}, then completes`, async () => {
    await using server = hostileServer(({ n, body }) =>
      n === 1 ? reply(forcedTool(body)) : complete(body)
    );
    const { outcome, report } = await runAgainst(server);
    assert.equal(outcome.stop, "completed", outcome.detail);
    assert.equal(outcome.refusals, 1);
    assert.equal(report.outcome.stop, "completed");
    assert.equal(report.model_calls, 3);
  });
}

Deno.test("a lookup nested 100,000 deep in the argument stage is refused, never a crash", async () => {
  const deepLookup = `{"$read_result":${"[".repeat(DEEP)}${"]".repeat(DEEP)}}`;
  await using server = hostileServer(({ n, body }) => {
    const tool = forcedTool(body);
    if (n === 1) return answer(tool, '{"action":"repository.inspect"}');
    if (n === 2) return answer(tool, deepLookup);
    return complete(body);
  });
  const { outcome } = await runAgainst(server);
  assert.equal(outcome.stop, "completed", outcome.detail);
  assert.equal(outcome.refusals, 1);
});

Deno.test("an embedder's provider that returns arguments nested 100,000 deep is refused too_deep", async () => {
  await using dir = await tempDir();
  const workspace = dir.path;
  const deep = JSON.parse(deepText);
  const seen: string[] = [];
  let n = 0;
  const provider: ModelProvider = {
    spec: "test:deep",
    call(call: ModelCall): Promise<ModelReply> {
      n += 1;
      seen.push(JSON.stringify(call.request.messages));
      const usage = {
        input_tokens: null,
        output_tokens: null,
        cache_read_tokens: null,
        cache_write_tokens: null,
      };
      const args = n === 1
        ? deep
        : call.phase === "selection"
        ? { action: "slice.complete" }
        : { summary: "ok" };
      return Promise.resolve({ arguments: args, usage, final_usage: true });
    },
  };
  const outcome = await runSlice({
    intent: "Nothing",
    workspace,
    maxSteps: 4,
    provider,
  }, {});
  assert.equal(outcome.stop, "completed", outcome.detail);
  assert.equal(outcome.refusals, 1);
  assert.match(seen[1] ?? "", /too_deep/);
});

Deno.test("a stalled server ends the run provider_timeout with a valid report", async () => {
  await using server = hostileServer(stall);
  const { outcome, report, elapsedMs } = await runAgainst(server, {
    timeoutMs: 300,
  });
  assert.equal(outcome.stop, "provider_error");
  assert.match(
    outcome.detail,
    /^provider_timeout: .*within the model timeout of 300 ms \(1 attempt\)/,
  );
  assert.equal(report.outcome.stop, "provider_error");
  assert.equal(report.requests.length, 1);
  assert.ok(elapsedMs < 300 + SLACK_MS, `took ${elapsedMs} ms`);
});

Deno.test("a slow call is announced while it lasts", async () => {
  await using server = hostileServer((c) =>
    drip(c, JSON.stringify(chatCompletion("loom_step", "{}")), 50)
  );
  const { outcome, waiting } = await runAgainst(server, {
    timeoutMs: 600,
    waitingNoticeMs: 100,
  });
  assert.equal(outcome.stop, "provider_error");
  assert.ok(waiting.length >= 1, "no waiting notice");
  assert.match(
    waiting[0] ?? "",
    /^step 1\/6 selection: waiting for the model for \d+ ms$/,
  );
});

Deno.test("the run timeout interrupts a call in flight", async () => {
  await using server = hostileServer(stall);
  const { outcome, report, elapsedMs } = await runAgainst(server, {
    timeoutMs: 60_000,
    runTimeoutMs: 300,
  });
  assert.equal(outcome.stop, "interrupted");
  assert.match(
    outcome.detail,
    /^The run was interrupted: the run timeout of 300 ms ran out$/,
  );
  assert.equal(outcome.steps, 0, "the unfinished step is not counted");
  assert.equal(report.outcome.stop, "interrupted");
  assert.ok(elapsedMs < 300 + SLACK_MS, `took ${elapsedMs} ms`);
});
