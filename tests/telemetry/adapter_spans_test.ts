// The AI SDK adapter under the AI SDK's own telemetry (AI SDK 7's
// OpenTelemetry integration): Loom's offloads and retirements are events on
// the spans the SDK makes, so a team sees them inside the traces it has.
import assert from "node:assert/strict";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import {
  generateText,
  jsonSchema,
  registerTelemetry,
  stepCountIs,
  tool,
  wrapLanguageModel,
} from "ai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { createAnthropic } from "@ai-sdk/anthropic";
import { codeTool, loomMiddleware } from "../../lib/adapters/ai_sdk.ts";
import { ResultStore } from "../../lib/store/result_store.ts";
import { sha256Hex } from "../../lib/store/digest.ts";
import { scriptedServer, toolResults } from "../adapters/_scripted_server.ts";
import { HAVE_BWRAP } from "../security/_bwrap.ts";
import {
  bigDocument,
  bigDocumentModel,
  type Findings,
  longModel,
} from "../adapters/_scenario.ts";
import {
  catalogueTools,
  EMPTY,
  probeTools,
} from "../adapters/_ai_sdk_tools.ts";

const exporter = new InMemorySpanExporter();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  }),
);

// The AI SDK 7 traces through its OpenTelemetry integration.
registerTelemetry(new OpenTelemetry());

function model(url: string) {
  return createAnthropic({ baseURL: `${url}/v1`, apiKey: "sk-local" })(
    "claude-sonnet-4-5",
  );
}

Deno.test("an offload by the AI SDK adapter is an event inside the AI SDK's own trace", async () => {
  exporter.reset();
  const { text, value } = bigDocument();
  const findings: Findings = {};
  await using server = scriptedServer(bigDocumentModel("catalogue", findings));
  const store = new ResultStore();
  const result = await generateText({
    model: wrapLanguageModel({
      model: model(server.url),
      middleware: loomMiddleware({ store }),
    }),
    prompt: "Which item holds the secret?",
    tools: catalogueTools(store, value),
    stopWhen: stepCountIs(8),
  });
  assert.equal(result.text, "done");
  const spans = exporter.getFinishedSpans();
  const offloads = spans.flatMap((s) =>
    s.events.filter((e) => e.name === "loom.offload").map((e) => ({
      span: s,
      event: e,
    }))
  );
  assert.equal(offloads.length, 1);
  const [{ span, event }] = offloads as [(typeof offloads)[number]];
  // The AI SDK converts tool output outside its spans: the event is on the
  // SDK's span of the model call whose request carries the descriptor.
  assert.equal(span.name, "chat claude-sonnet-4-5");
  const root = spans.find((s) => s.parentSpanContext === undefined);
  assert.equal(root?.name, "invoke_agent claude-sonnet-4-5");
  assert.equal(span.spanContext().traceId, root?.spanContext().traceId);
  assert.deepEqual(event.attributes?.["loom.result.ids"], ["result-1"]);
  assert.deepEqual(event.attributes?.["loom.result.sha256"], [
    sha256Hex(new TextEncoder().encode(text)),
  ]);
  assert.equal(
    event.attributes?.["loom.offload.bytes_upstream"],
    new TextEncoder().encode(text).length,
  );
  assert.ok(
    (event.attributes?.["loom.offload.bytes_to_host"] as number) < 4096,
  );
});

Deno.test("retirements by the AI SDK adapter are events on the AI SDK's spans", async () => {
  exporter.reset();
  await using server = scriptedServer(longModel(24));
  const store = new ResultStore();
  const result = await generateText({
    model: wrapLanguageModel({
      model: model(server.url),
      middleware: loomMiddleware({ store, budgetBytes: 32 * 1024 }),
    }),
    prompt: "Start.",
    tools: probeTools(store),
    stopWhen: stepCountIs(30),
  });
  assert.equal(result.text, "finished");
  const retirements = exporter.getFinishedSpans().flatMap((s) =>
    s.events.filter((e) => e.name === "loom.retirement").map((e) => ({
      span: s.name,
      retired: e.attributes?.["loom.retirement.results"] as number,
    }))
  );
  assert.ok(retirements.length > 0);
  for (const r of retirements) {
    assert.equal(r.span, "chat claude-sonnet-4-5");
    assert.ok(r.retired >= 8, String(r.retired));
  }
});

Deno.test("codeTool: a run is a span inside the AI SDK's tool span, each call the code makes an execute_tool span under it", async () => {
  exporter.reset();
  const label = tool({
    inputSchema: jsonSchema<{ id: number }>({
      type: "object",
      properties: { id: { type: "integer" } },
    }),
    execute: ({ id }) => `item-${id}`,
  });
  const broken = tool({
    inputSchema: EMPTY,
    execute: (): string => {
      throw new Error("TOOL-CONTENT-0b7c");
    },
  });
  const store = new ResultStore();
  await using run_code = await codeTool({
    tools: { label, broken },
    store,
    unconfined: !HAVE_BWRAP,
  });
  const code = `const labels = await tools.label({ id: 1 });
try { await tools.broken({}); } catch {}
return { labels, pad: "p".repeat(10000) };`;
  await using server = scriptedServer((body, wire) =>
    toolResults(body, wire).length === 0
      ? { call: { name: "run_code", input: { code } } }
      : { text: "done" }
  );
  const result = await generateText({
    model: model(server.url),
    prompt: "Label item 1.",
    tools: { run_code },
    stopWhen: stepCountIs(4),
  });
  assert.equal(result.text, "done");
  const spans = exporter.getFinishedSpans();
  const names = spans.map((s) => s.name);
  const [run] = spans.filter((s) => s.name === "run_code");
  assert.ok(run, names.join(", "));
  const parent = spans.find((s) =>
    s.spanContext().spanId === run.parentSpanContext?.spanId
  );
  assert.equal(parent?.name, "execute_tool run_code", names.join(", "));
  assert.equal(
    run.attributes["loom.code.confinement"],
    HAVE_BWRAP ? "bubblewrap" : "deno-flags-only",
  );
  assert.equal(run.attributes["loom.code.calls"], 2);
  const calls = spans.filter((s) =>
    s.parentSpanContext?.spanId === run.spanContext().spanId
  );
  assert.deepEqual(calls.map((s) => s.name).sort(), [
    "execute_tool broken",
    "execute_tool label",
  ]);
  for (const call of calls) {
    assert.equal(call.attributes["gen_ai.operation.name"], "execute_tool");
    assert.equal(call.attributes["gen_ai.tool.type"], "function");
  }
  const failed = calls.find((s) => s.name === "execute_tool broken")!;
  assert.equal(failed.attributes["error.type"], "_OTHER");
  assert.equal(failed.status.code, 2);
  // The stored answer: a loom.offload event inside the SDK's trace.
  const offloads = spans.flatMap((s) =>
    s.events.filter((e) => e.name === "loom.offload")
  );
  assert.equal(offloads.length, 1);
  assert.deepEqual(offloads[0]!.attributes?.["gen_ai.tool.name"], "run_code");
  const [id] = offloads[0]!.attributes?.["loom.result.ids"] as string[];
  assert.equal(
    offloads[0]!.attributes?.["loom.result.sha256"]?.toString(),
    store.get(id!)?.sha256,
  );
  // No content outside full mode: not the code, not the tool's error.
  const exported = JSON.stringify(spans.map((s) => [
    s.attributes,
    s.events,
    s.status,
  ]));
  assert.ok(!exported.includes("TOOL-CONTENT-0b7c"));
});
