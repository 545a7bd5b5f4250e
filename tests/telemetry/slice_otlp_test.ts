// `loom run` of the recorded bug-fix slice (as the demo runs it) with Deno's
// own OpenTelemetry on, exporting to a receiver of the test's own: span
// names, kinds, parents, attributes, events, reference-mode references read
// back with a matching digest, metrics, and no secret of the environment in
// anything the receiver got.
import assert from "node:assert/strict";
import { loomWith, REPO_ROOT } from "../_kit.ts";
import {
  intentPath,
  prepareWorkspace,
  recordedRunArgs,
  recordingPath,
} from "../e2e/_workspace.ts";
import { named, otlpReceiver, type ReceivedSpan } from "./_otlp.ts";

/** Values no export may carry. */
const SECRETS = {
  ANTHROPIC_API_KEY: "sk-ant-FAKE-telemetry-secret-8c1f",
  OPENAI_API_KEY: "sk-FAKE-openai-telemetry-secret-51d2",
  LOOM_TEST_TOKEN: "tok-FAKE-env-secret-77a9",
};

const KIND_INTERNAL = 1;
const KIND_CLIENT = 3;

function one(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = named(spans, name);
  assert.equal(found.length, 1, `one span ${name}, got ${found.length}`);
  return found[0]!;
}

Deno.test("loom run exports the bug-fix slice's trace by the GenAI conventions, content by reference", async () => {
  await using receiver = otlpReceiver();
  await using prepared = await prepareWorkspace("bugfix");
  const session = `${prepared.root}/session`;
  const calls = (JSON.parse(
    await Deno.readTextFile(recordingPath("bugfix")),
  ) as { calls: unknown[] }).calls.length;
  const run = await loomWith(
    {
      env: {
        ...receiver.env(),
        ...SECRETS,
        LOOM_OTEL_CONTENT: "reference",
      },
    },
    ...recordedRunArgs(prepared.workspace, { maxSteps: 20 }),
    "--session",
    session,
    "--json",
  );
  assert.equal(run.code, 0, run.stderr);
  const spans = receiver.spans().filter((s) => s.scope === "@loom/loom");

  const agent = one(spans, "invoke_agent loom");
  assert.equal(agent.kind, KIND_INTERNAL);
  assert.equal(agent.parentSpanId, "");
  assert.equal(agent.attributes["gen_ai.operation.name"], "invoke_agent");
  assert.equal(agent.attributes["gen_ai.agent.name"], "loom");
  assert.equal(agent.attributes["gen_ai.provider.name"], "recorded");
  assert.equal(agent.attributes["loom.slice.stop"], "completed");
  assert.equal(agent.attributes["loom.slice.policy"], "legacy");
  assert.equal(typeof agent.attributes["gen_ai.conversation.id"], "string");
  assert.equal(agent.status.code, 0);

  // One chat span per provider request, each a client child of the agent.
  const chats = named(spans, "chat");
  assert.equal(chats.length, calls);
  for (const chat of chats) {
    assert.equal(chat.kind, KIND_CLIENT);
    assert.equal(chat.parentSpanId, agent.spanId);
    assert.equal(chat.traceId, agent.traceId);
    assert.equal(chat.attributes["gen_ai.operation.name"], "chat");
    assert.ok((chat.attributes["loom.request.bytes"] as number) > 0);
    assert.equal(chat.attributes["gen_ai.input.messages"], undefined);
  }

  // One execute_tool span per action, children of the agent.
  const tools = spans.filter((s) => s.name.startsWith("execute_tool "));
  assert.deepEqual(
    [...new Set(tools.map((s) => s.name))].sort(),
    [
      "execute_tool repository.edit",
      "execute_tool repository.inspect",
      "execute_tool slice.complete",
      "execute_tool tests.run",
    ],
  );
  for (const tool of tools) {
    assert.equal(tool.kind, KIND_INTERNAL);
    assert.equal(tool.parentSpanId, agent.spanId);
    assert.equal(tool.attributes["gen_ai.operation.name"], "execute_tool");
    assert.match(String(tool.attributes["gen_ai.tool.call.id"]), /^step-\d+$/);
  }
  // Test runs are events with their exit code and revision; the last passed.
  const runs = named(spans, "execute_tool tests.run").flatMap((s) =>
    s.events.filter((e) => e.name === "loom.test_run")
  );
  assert.ok(runs.length >= 2);
  assert.notEqual(runs[0]?.attributes["loom.test.exit_code"], 0);
  assert.equal(runs.at(-1)?.attributes["loom.test.exit_code"], 0);
  assert.match(String(runs.at(-1)?.attributes["loom.test.revision"]), /^rev-/);

  // Reference mode: the first inspection's references read back, with a
  // matching digest, from the files they were read from.
  const inspect = named(spans, "execute_tool repository.inspect")[0]!;
  const references = JSON.parse(
    String(inspect.attributes["gen_ai.tool.call.result"]),
  )["loom.references"] as {
    result: string;
    sha256: string;
    bytes: number;
    media_type: string;
    location: string;
  }[];
  assert.deepEqual(
    references.map((r) => r.location.slice(prepared.workspace.length)),
    ["/src/stats.ts", "/check.ts"],
  );
  for (const reference of references) {
    const original = `${REPO_ROOT}/fixtures/workspaces/bugfix${
      reference.location.slice(prepared.workspace.length)
    }`;
    const read = await loomWith(
      {},
      "select",
      original,
      "--sha256",
      reference.sha256,
      "--bytes",
      `0:${reference.bytes}`,
    );
    assert.equal(read.code, 0, read.stderr);
    assert.equal(read.stdout, await Deno.readTextFile(original));
    assert.equal(reference.media_type, "text/plain");
  }
  // A test run's output is kept by the session its reference names.
  const output = JSON.parse(
    String(
      named(spans, "execute_tool tests.run")[0]!.attributes[
        "gen_ai.tool.call.result"
      ],
    ),
  )["loom.references"][0];
  assert.equal(output.location, await Deno.realPath(session));
  const shown = await loomWith({}, "session", "show", session, "--json");
  assert.equal(shown.code, 0, shown.stderr);
  assert.ok(shown.stdout.includes(output.sha256));

  // Metrics by the conventions.
  const metrics = new Set(receiver.metrics().map((m) => m.name));
  assert.ok(
    metrics.has("gen_ai.client.operation.duration"),
    [...metrics].join(),
  );
  assert.ok(metrics.has("gen_ai.execute_tool.duration"));

  // No secret of the environment anywhere in what the receiver got.
  receiver.assertExportsNone(SECRETS);
});

Deno.test("LOOM_OTEL_CONTENT=full puts the conversation on the spans as the conventions shape it, and still no secret", async () => {
  await using receiver = otlpReceiver();
  await using prepared = await prepareWorkspace("bugfix");
  const run = await loomWith(
    { env: { ...receiver.env(), ...SECRETS, LOOM_OTEL_CONTENT: "full" } },
    ...recordedRunArgs(prepared.workspace, { maxSteps: 20 }),
  );
  assert.equal(run.code, 0, run.stderr);
  const spans = receiver.spans().filter((s) => s.scope === "@loom/loom");
  const [first] = named(spans, "chat");
  const system = JSON.parse(
    String(first?.attributes["gen_ai.system_instructions"]),
  );
  assert.equal(system[0].type, "text");
  const input = JSON.parse(String(first?.attributes["gen_ai.input.messages"]));
  assert.equal(input[0].role, "user");
  assert.equal(input[0].parts[0].type, "text");
  assert.ok(
    JSON.stringify(input).includes(
      (await Deno.readTextFile(intentPath("bugfix"))).trim().slice(0, 40),
    ),
  );
  const output = JSON.parse(
    String(first?.attributes["gen_ai.output.messages"]),
  );
  assert.deepEqual(output[0].parts[0].arguments, {
    action: "repository.inspect",
  });
  const tools = JSON.parse(
    String(first?.attributes["gen_ai.tool.definitions"]),
  );
  assert.equal(tools[0].name, "loom_step");
  assert.equal(tools[0].type, "function");
  const [inspect] = named(spans, "execute_tool repository.inspect");
  assert.deepEqual(
    JSON.parse(String(inspect?.attributes["gen_ai.tool.call.arguments"])),
    { paths: ["src/stats.ts", "check.ts"] },
  );
  const result = JSON.parse(
    String(inspect?.attributes["gen_ai.tool.call.result"]),
  );
  assert.equal(
    result[0].text,
    await Deno.readTextFile(
      `${REPO_ROOT}/fixtures/workspaces/bugfix/src/stats.ts`,
    ),
  );
  receiver.assertExportsNone(SECRETS);
});

Deno.test("loom refuses a LOOM_OTEL_CONTENT it does not know", async () => {
  const run = await loomWith(
    { env: { LOOM_OTEL_CONTENT: "everything" } },
    "run",
    "--workspace",
    `${REPO_ROOT}/fixtures/workspaces/bugfix`,
    "--intent",
    "Nothing",
    "--model",
    `recorded:${recordingPath("bugfix")}`,
  );
  assert.equal(run.code, 2);
  assert.match(
    run.stderr,
    /^loom run: Invalid LOOM_OTEL_CONTENT "everything": expected none, reference or full\n$/,
  );
});
