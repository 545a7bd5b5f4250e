/** `--record PATH`: a run's replies become a recording that replays the run. */
import assert from "node:assert/strict";
import { runSlice } from "../../lib/slice/run.ts";
import { INTENTS, recordingPath } from "../e2e/_workspace.ts";
import { fixtureCopy } from "../_kit.ts";
import { replayServer } from "./_replay_server.ts";

Deno.test("a live run with record writes a recording that replays it offline", async () => {
  await using first = await fixtureCopy("bugfix");
  await using second = await fixtureCopy("bugfix");
  const path = `${first.root}/made.json`;
  await using server = await replayServer(
    "anthropic",
    recordingPath("bugfix"),
  );
  const live = await runSlice(
    first.request("anthropic:claude-sonnet-4-5", 30),
    {
      contextPolicy: "bounded",
      baseUrl: server.url,
      record: path,
      env: { ANTHROPIC_API_KEY: "sk-ant-secret-key" },
    },
  );
  assert.equal(live.stop, "completed");
  const text = await Deno.readTextFile(path);
  assert.ok(!text.includes("sk-ant-secret-key"), "no API key");
  assert.ok(!text.includes(INTENTS.bugfix.slice(0, 30)), "no prompt text");
  const recorded = JSON.parse(text);
  const original = JSON.parse(
    await Deno.readTextFile(recordingPath("bugfix")),
  );
  assert.equal(recorded.format, "loom-recording/1");
  // The model answered the loom_step tool: each answer under "step".
  const wrapped = original.calls.map((c: { arguments: unknown }) => ({
    step: c.arguments,
  }));
  assert.deepEqual(
    recorded.calls.map((c: { arguments: unknown }) => c.arguments),
    wrapped,
  );
  assert.deepEqual(recorded.calls[0].usage, {
    input_tokens: 0,
    output_tokens: Math.ceil(JSON.stringify(wrapped[0]).length / 4),
  });
  // The recording replays the same run under the other policy.
  const replay = await runSlice(second.request(`recorded:${path}`, 30), {
    contextPolicy: "legacy",
  });
  assert.equal(replay.stop, "completed");
  assert.equal(replay.model_calls, live.model_calls);
});

Deno.test("an unwritable record path stops the run with a provider error", async () => {
  await using copy = await fixtureCopy("bugfix");
  // This run has no test command.
  const { test: _, ...request } = copy.request(
    `recorded:${recordingPath("bugfix")}`,
    3,
  );
  const outcome = await runSlice(request, {
    record: `${copy.root}/missing/dir/r.json`,
  });
  assert.equal(outcome.stop, "provider_error");
  assert.match(
    outcome.detail,
    /recording_unwritable: Cannot write recording/,
  );
});
