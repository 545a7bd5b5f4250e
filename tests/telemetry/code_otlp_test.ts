// `run_code` in a trace: through the real `loom mcp --servers --code` with
// Deno's own OpenTelemetry on, a run is a `run_code` span under the host's
// `tools/call run_code` SERVER span, each call the code makes is an upstream
// CLIENT span under the run (whose context the upstream receives), the
// code's `loom.store` and `loom.read` are events of the run, a stored answer
// carries its references like any offloaded answer, a failed run records its
// code as `error.type`, and neither the code, its logs, its error message
// nor a secret of the environment reaches the receiver outside `full` mode.
import assert from "node:assert/strict";
import { tempDir } from "../_kit.ts";
import { bwrapTest } from "../security/_bwrap.ts";
import {
  assertNotExported,
  assertOffloaded,
  assertUnderHost,
  HOST,
  KIND,
  named,
  otlpReceiver,
  type ReceivedSpan,
  tracedGateway,
} from "./_otlp.ts";

/** Content of the runs: none of it may be exported in `reference` mode. */
const CONTENT = [
  "CODE-CONTENT-7f3a",
  "LOG-CONTENT-91bd",
  "THROWN-CONTENT-4c2e",
];

const CALLING = `const marker = "${CONTENT[0]}";
console.log("${CONTENT[1]}");
const seen = await tools.fault.meta({});
await callTool("fault", "small", {});
const kept = await loom.store("s".repeat(5000));
const back = await loom.read(kept.reference);
return {
  received: JSON.parse(text(seen)).received,
  kept: { result: kept.result, sha256: kept.sha256 },
  back: back.length,
  pad: "r".repeat(6000),
};`;

bwrapTest(
  "a run_code run is a span under the host's request, with the code's tool calls as its children",
  async () => {
    await using receiver = otlpReceiver();
    await using dir = await tempDir();
    let session: string;
    let answer: Record<string, unknown>;
    let reference: Record<string, unknown>;
    let traceparent: unknown;
    {
      await using traced = await tracedGateway(receiver, dir.path, ["--code"]);
      const { gateway } = traced;
      session = traced.session;
      const run = (args: Record<string, unknown>) =>
        traced.call("run_code", args, {
          traceparent: HOST.traceparent,
        }) as Promise<Record<string, unknown> & { isError?: boolean }>;
      const called = await run({ code: CALLING });
      assert.notEqual(called.isError, true, JSON.stringify(called));
      answer = called.structuredContent as Record<string, unknown>;
      const failed = await run({
        code: `throw new Error("${CONTENT[2]}");`,
      });
      assert.equal(failed.isError, true);
      // Logs past 8 KiB are stored; a run that read nothing stored persists.
      const late = await run({
        code: 'console.log("l".repeat(9000));\nwhile (true) {}',
        timeout_ms: 300,
      });
      assert.equal(late.isError, true);
      await receiver.until((spans) =>
        named(spans, "tools/call run_code").length === 3
      );
      const server = named(receiver.spans(), "tools/call run_code")
        .find((s) => s.status.code !== 2);
      assert.ok(server?.attributes["loom.result.ids"], "the stored answer's");
      reference = JSON.parse(
        String(server.attributes["gen_ai.tool.call.result"]),
      )["loom.references"][0];
      // The reference reads back, digest-checked, in a gateway on the session.
      const pointed = async (pointer: string) => {
        const read = await gateway.call("read_result", {
          reference: {
            result: reference.result,
            sha256: reference.sha256,
            select: { kind: "json_pointer", pointer },
            rendering: "json",
          },
        });
        assert.equal(read.isError, undefined, JSON.stringify(read));
        return JSON.parse(read.structuredContent.selected_json);
      };
      assert.equal(await pointed("/back"), 5000);
      traceparent = await pointed("/received/traceparent");
    }
    await receiver.until((spans) =>
      named(spans, "run_code").length === 3 &&
      named(spans, "tools/call meta").length === 1
    );
    const spans = receiver.spans().filter((s) => s.scope === "@loom/loom");
    const stored = answer.result_stored as Record<string, unknown>;
    assert.equal(reference.result, stored.result);
    assert.equal(reference.sha256, stored.sha256);
    // The run read a stored result: its answer is not persisted (the seeds'
    // rule follows the data), so the reference names no place.
    assert.equal(reference.location, undefined);

    // Host request → run → the code's calls.
    const hostSpans = named(spans, "tools/call run_code");
    const runs = named(spans, "run_code");
    for (const host of hostSpans) assertUnderHost(host);
    const runOf = (host: ReceivedSpan) => {
      const found = runs.filter((r) => r.parentSpanId === host.spanId);
      assert.equal(found.length, 1, `one run span under ${host.spanId}`);
      return found[0]!;
    };
    const calling = hostSpans.find((s) => s.status.code !== 2)!;
    const run = runOf(calling);
    assert.equal(run.kind, KIND.INTERNAL);
    assert.equal(run.traceId, HOST.trace);
    assert.equal(run.attributes["loom.code.confinement"], "bubblewrap");
    assert.equal(run.attributes["loom.code.calls"], 2);
    assert.equal(run.attributes["loom.code.timeout_ms"], 30_000);
    assert.equal(run.attributes["loom.code.ms"], answer.ms);
    assert.ok((run.attributes["loom.code.log_bytes"] as number) > 0);
    assert.equal(run.attributes["error.type"], undefined);
    const meta = named(spans, "tools/call meta")[0]!;
    const small = named(spans, "tools/call small")[0]!;
    for (const client of [meta, small]) {
      assert.equal(client.kind, KIND.CLIENT);
      assert.equal(client.parentSpanId, run.spanId, `${client.name}'s parent`);
      assert.equal(client.traceId, HOST.trace);
      assert.equal(client.attributes["loom.upstream"], "fault");
    }
    // The upstream continued the trace from the call the code made.
    assert.equal(traceparent, `00-${HOST.trace}-${meta.spanId}-01`);
    const events = Object.fromEntries(run.events.map((e) => [e.name, e]));
    const kept = events["loom.store"]!.attributes;
    assert.equal((kept["loom.result.ids"] as string[]).length, 1);
    assert.equal((kept["loom.result.sha256"] as string[]).length, 1);
    assert.deepEqual(kept["loom.result.bytes"], [5000]);
    assert.deepEqual(
      events["loom.read"]!.attributes["loom.result.ids"],
      kept["loom.result.ids"],
    );
    assert.deepEqual(
      events["loom.read"]!.attributes["loom.result.sha256"],
      kept["loom.result.sha256"],
    );

    // The stored answer: its references on the host's span, as for any offload.
    assertOffloaded(calling, stored, 6000);

    // A failed run: its code as error.type, on the run and (as tool_error) on
    // the host's span; a timeout says which deadline.
    const failures = hostSpans.filter((s) => s.status.code === 2).map(runOf);
    const byType = Object.fromEntries(
      failures.map((r) => [String(r.attributes["error.type"]), r]),
    );
    assert.deepEqual(Object.keys(byType).sort(), [
      "code_error",
      "code_timeout",
    ]);
    for (const failed of failures) assert.equal(failed.status.code, 2);
    assert.equal(byType.code_error!.status.message ?? "", "");
    assert.match(
      String(byType.code_timeout!.status.message),
      /deadline of 300 ms/,
    );
    assert.equal(byType.code_timeout!.attributes["loom.code.timeout_ms"], 300);
    // The timed-out run's logs were stored, and persisted: it read nothing.
    const lateHost = hostSpans.find((s) =>
      s.spanId === byType.code_timeout!.parentSpanId
    )!;
    const [logs] = JSON.parse(
      String(lateHost.attributes["gen_ai.tool.call.result"]),
    )["loom.references"];
    assert.equal(logs.location, await Deno.realPath(session));
    assert.ok(logs.bytes >= 9000);
    assert.deepEqual(lateHost.attributes["loom.result.ids"], [logs.result]);
    for (const host of hostSpans.filter((s) => s.status.code === 2)) {
      assert.equal(host.attributes["error.type"], "tool_error");
    }

    assertNotExported(receiver, CONTENT);
  },
);
