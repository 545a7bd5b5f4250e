// A library user with an OpenTelemetry SDK of their own (no OTEL_DENO): the
// SDK registered with @opentelemetry/api gets Loom's spans, parented and
// carrying the conventions' attributes, with the token arithmetic of each
// provider. In-process, so it is fast; the CLI tests in otlp_test.ts check
// what Deno's own exporter sends.
import assert from "node:assert/strict";
import { metrics, trace } from "@opentelemetry/api";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { runSlice } from "../../lib/slice/run.ts";
import type {
  ModelCall,
  ModelProvider,
  ModelReply,
} from "../../lib/providers/model_provider.ts";
import { tempWorkspace } from "../../lib/testing/temp_workspace.ts";
import { fixtureCopy } from "../_kit.ts";
import { recordingPath } from "../e2e/_workspace.ts";

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  }),
);

/** A reader collected on demand. */
class OnDemand extends MetricReader {
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}
const reader = new OnDemand();
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

/** The data points of a histogram, by name. */
async function points(name: string): Promise<DataPoint<Histogram>[]> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
    .filter((m) => m.descriptor.name === name)
    .flatMap((m) => m.dataPoints as DataPoint<Histogram>[]);
}

/** A provider answering inspect → complete, with the usage a service reports. */
function provider(spec: string, usage: ModelReply["usage"]): ModelProvider {
  const replies = [
    { action: "repository.inspect" },
    { paths: ["README.md"] },
    { action: "slice.complete" },
    { summary: "Read it" },
  ];
  let next = 0;
  return {
    spec,
    call(_call: ModelCall): Promise<ModelReply> {
      const args = replies[next++];
      return Promise.resolve({
        arguments: args,
        usage,
        final_usage: true,
        response: {
          id: `msg_${next}`,
          model: "model-x",
          finish_reasons: ["tool_use"],
        },
      });
    },
  };
}

function byName(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((s) => s.name === name);
}

async function run(spec: string, usage: ModelReply["usage"]) {
  exporter.reset();
  await using workspace = await tempWorkspace({ "README.md": "hello\n" });
  const outcome = await runSlice({
    intent: "Read the README",
    workspace: workspace.path,
    maxSteps: 4,
    provider: provider(spec, usage),
  });
  assert.equal(outcome.stop, "completed");
  return exporter.getFinishedSpans();
}

Deno.test("a user's SDK gets invoke_agent, chat and execute_tool spans with parents and attributes", async () => {
  const spans = await run("anthropic:claude-test", {
    input_tokens: 10,
    output_tokens: 5,
    cache_read_tokens: 100,
    cache_write_tokens: 20,
  });
  const [agent] = byName(spans, "invoke_agent loom");
  assert.ok(agent);
  assert.equal(agent.kind, 0); // INTERNAL
  assert.equal(agent.attributes["gen_ai.operation.name"], "invoke_agent");
  assert.equal(agent.attributes["gen_ai.agent.name"], "loom");
  assert.equal(agent.attributes["gen_ai.provider.name"], "anthropic");
  assert.equal(agent.attributes["gen_ai.request.model"], "claude-test");
  assert.equal(agent.attributes["loom.slice.stop"], "completed");
  assert.equal(agent.attributes["loom.slice.policy"], "legacy");
  const agentId = agent.spanContext().spanId;

  const calls = byName(spans, "chat claude-test");
  assert.equal(calls.length, 4);
  for (const call of calls) {
    assert.equal(call.kind, 2); // CLIENT
    assert.equal(call.parentSpanContext?.spanId, agentId);
    assert.equal(call.spanContext().traceId, agent.spanContext().traceId);
    // Anthropic's input_tokens leave cache reads and writes out: added.
    assert.equal(call.attributes["gen_ai.usage.input_tokens"], 130);
    assert.equal(call.attributes["gen_ai.usage.cache_read.input_tokens"], 100);
    assert.equal(
      call.attributes["gen_ai.usage.cache_creation.input_tokens"],
      20,
    );
    assert.equal(call.attributes["gen_ai.usage.output_tokens"], 5);
    assert.equal(call.attributes["gen_ai.response.model"], "model-x");
    assert.deepEqual(call.attributes["gen_ai.response.finish_reasons"], [
      "tool_use",
    ]);
    assert.ok((call.attributes["loom.request.bytes"] as number) > 0);
    // Content is off by default.
    assert.equal(call.attributes["gen_ai.input.messages"], undefined);
  }

  const [inspect] = byName(spans, "execute_tool repository.inspect");
  assert.ok(inspect);
  assert.equal(inspect.parentSpanContext?.spanId, agentId);
  assert.equal(inspect.attributes["gen_ai.tool.name"], "repository.inspect");
  assert.equal(inspect.attributes["gen_ai.tool.call.id"], "step-1");
  assert.equal(inspect.attributes["loom.outcome"], "ok");
  assert.equal(inspect.attributes["gen_ai.tool.call.result"], undefined);
  const [complete] = byName(spans, "execute_tool slice.complete");
  assert.equal(complete?.attributes["loom.outcome"], "completed");
});

Deno.test("a user's meter provider gets the conventions' token and duration histograms", async () => {
  await run("anthropic:claude-metrics", {
    input_tokens: 10,
    output_tokens: 5,
    cache_read_tokens: 100,
    cache_write_tokens: 20,
  });
  const tokens = (await points("gen_ai.client.token.usage")).filter((p) =>
    p.attributes["gen_ai.request.model"] === "claude-metrics"
  );
  const byType = Object.fromEntries(
    tokens.map((p) => [p.attributes["gen_ai.token.type"], p.value]),
  );
  // Four calls, each 130 input tokens (cache included) and 5 output.
  assert.equal(byType.input?.count, 4);
  assert.equal(byType.input?.sum, 4 * 130);
  assert.equal(byType.output?.sum, 4 * 5);
  assert.equal(tokens[0]?.attributes["gen_ai.provider.name"], "anthropic");
  assert.equal(tokens[0]?.attributes["gen_ai.operation.name"], "chat");
  const calls = (await points("gen_ai.client.operation.duration")).filter((
    p,
  ) => p.attributes["gen_ai.request.model"] === "claude-metrics");
  assert.equal(calls.reduce((n, p) => n + p.value.count, 0), 4);
  const tools = await points("gen_ai.execute_tool.duration");
  assert.ok(
    tools.some((p) =>
      p.attributes["gen_ai.tool.name"] === "repository.inspect"
    ),
  );
});

Deno.test("OpenAI's prompt_tokens already hold the cached tokens: input is not added to", async () => {
  const spans = await run("openai:gpt-test", {
    input_tokens: 130,
    output_tokens: 5,
    cache_read_tokens: 100,
    cache_write_tokens: null,
  });
  const [call] = byName(spans, "chat gpt-test");
  assert.equal(call?.attributes["gen_ai.provider.name"], "openai");
  assert.equal(call?.attributes["gen_ai.usage.input_tokens"], 130);
  assert.equal(call?.attributes["gen_ai.usage.cache_read.input_tokens"], 100);
  assert.equal(
    call?.attributes["gen_ai.usage.cache_creation.input_tokens"],
    undefined,
  );
});

Deno.test("retirement checkpoints of a bounded run are events on its agent span", async () => {
  exporter.reset();
  await using copy = await fixtureCopy("long");
  const outcome = await runSlice(
    copy.request(`recorded:${recordingPath("long")}`, 60),
    { contextPolicy: "bounded" },
  );
  assert.ok(outcome.checkpoints > 0);
  const [agent] = byName(exporter.getFinishedSpans(), "invoke_agent loom");
  const events = agent?.events.filter((e) => e.name === "loom.retirement") ??
    [];
  assert.equal(events.length, outcome.checkpoints);
  assert.deepEqual(
    events.map((e) => e.attributes?.["loom.retirement.checkpoints"]),
    events.map((_, i) => i + 1),
  );
  for (const event of events) {
    assert.ok((event.attributes?.["loom.retirement.results"] as number) > 0);
  }
  assert.equal(agent?.attributes["loom.slice.stop"], "step_budget");
  assert.equal(agent?.status.code, 2); // ERROR: the run did not complete
});
