// A run nothing records loads no span code: openSliceTrace() hands out the
// quiet trace until an OpenTelemetry API global is registered, and the
// recording one after (the span tests in tests/telemetry/ check what it
// records).
import assert from "node:assert/strict";
import { openSliceTrace, QUIET_TRACE } from "../../lib/slice/_slice_trace.ts";

const START = { spec: "recorded:x.json", policy: "bounded", workspace: "/w" };

Deno.test("openSliceTrace() is the quiet trace while nothing can record, and a recording one once an SDK registered", async () => {
  assert.equal(await openSliceTrace(START), QUIET_TRACE);
  assert.equal(
    await QUIET_TRACE.within(undefined, () => Promise.resolve(7)),
    7,
  );
  const { trace } = await import("@opentelemetry/api");
  const { BasicTracerProvider } = await import("@opentelemetry/sdk-trace-base");
  trace.setGlobalTracerProvider(new BasicTracerProvider());
  try {
    const recording = await openSliceTrace(START);
    assert.notEqual(recording, QUIET_TRACE);
    const call = recording.modelCall(1, "selection");
    assert.ok(call?.span.isRecording());
    recording.end("completed", "done", 1);
  } finally {
    trace.disable();
  }
});
