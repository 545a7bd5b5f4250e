// `loom mcp --servers` with Deno's own OpenTelemetry on: a host's trace
// continues through the gateway (SERVER span parented on the host's
// params._meta) into the upstream (CLIENT span whose context the upstream
// receives in its params._meta), an offloaded answer carries its result
// id, digest and bytes, reference mode's reference reads back through
// read_result, a tool error is error.type tool_error, and no secret of the
// environment reaches the receiver.
import assert from "node:assert/strict";
import { tempDir } from "../_kit.ts";
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

Deno.test("a host's trace continues through the gateway into the upstream's params._meta, with offloads by reference", async () => {
  await using receiver = otlpReceiver();
  await using dir = await tempDir();
  const received: unknown[] = [];
  let reference: Record<string, unknown> | undefined;
  let session: string;
  {
    await using traced = await tracedGateway(receiver, dir.path);
    const { gateway } = traced;
    session = traced.session;
    const call = (args: Record<string, unknown>) =>
      traced.call("fault__meta", args, {
        traceparent: HOST.traceparent,
        tracestate: `rojo=${HOST.span}`,
      }) as Promise<{ content: { text: string }[] }>;
    // Small: relayed as it is.
    const small = await call({});
    received.push(
      JSON.parse((small.content[0] as { text: string }).text).received,
    );
    // Large: offloaded into the store, answered with a descriptor.
    const large = await call({ pad: 20_000 });
    const descriptor = JSON.parse((large.content[0] as { text: string }).text);
    assert.match(String(descriptor.result), /^result-\d+$/);
    // A tool error.
    const unknown = await gateway.call("fault__nope");
    assert.equal(unknown.isError, true);
    await receiver.until((spans) =>
      named(spans, "tools/call fault__meta").length === 2
    );
    const offloaded = named(receiver.spans(), "tools/call fault__meta")
      .find((s) => s.attributes["loom.result.ids"] !== undefined);
    assert.ok(offloaded, "the offloaded call's span");
    reference = JSON.parse(
      String(offloaded.attributes["gen_ai.tool.call.result"]),
    )["loom.references"][0];
    assert.equal(reference?.result, descriptor.result);
    assert.equal(reference?.sha256, descriptor.sha256);
    // The reference reads back through read_result, digest-checked.
    const read = await gateway.call("read_result", {
      reference: {
        result: reference?.result,
        sha256: reference?.sha256,
        select: { kind: "bytes", start: 0, end: reference?.bytes },
      },
    });
    assert.equal(read.isError, undefined, JSON.stringify(read));
    const text = read.structuredContent.selected_text as string;
    assert.ok(text.includes("m".repeat(1000)));
    assert.ok(text.includes(HOST.trace));
  }
  // The gateway has exited and flushed.
  await receiver.until((spans) =>
    named(spans, "tools/call fault__nope").length === 1 &&
    named(spans, "tools/call meta").length === 2
  );
  const spans = receiver.spans().filter((s) => s.scope === "@loom/loom");

  // The SERVER spans continue the host's trace.
  const servers_ = named(spans, "tools/call fault__meta");
  for (const server of servers_) {
    assertUnderHost(server);
    assert.equal(server.attributes["mcp.method.name"], "tools/call");
    assert.equal(server.attributes["gen_ai.tool.name"], "fault__meta");
    assert.equal(server.attributes["gen_ai.operation.name"], "execute_tool");
    assert.equal(server.attributes["network.transport"], "pipe");
    assert.match(String(server.attributes["jsonrpc.request.id"]), /^\d+$/);
  }
  // The CLIENT spans are their children, and the upstream got their context.
  const clients = named(spans, "tools/call meta");
  for (const [i, client] of clients.entries()) {
    assert.equal(client.kind, KIND.CLIENT);
    const parent = servers_.find((s) => s.spanId === client.parentSpanId);
    assert.ok(parent, "a client span's parent is a server span");
    assert.equal(client.traceId, HOST.trace);
    assert.equal(client.attributes["loom.upstream"], "fault");
    if (i === 0) {
      const meta = received[0] as Record<string, string>;
      assert.equal(meta.traceparent, `00-${HOST.trace}-${client.spanId}-01`);
    }
  }
  // The offloaded answer's figures.
  const offloaded = servers_.find((s) =>
    s.attributes["loom.result.ids"] !== undefined
  ) as ReceivedSpan;
  assertOffloaded(offloaded, reference!, 20_000);
  assert.equal(reference?.location, await Deno.realPath(session));
  // A tool error.
  const [failed] = named(spans, "tools/call fault__nope");
  assert.equal(failed?.attributes["error.type"], "tool_error");
  assert.equal(failed?.status.code, 2);

  const metrics = new Set(receiver.metrics().map((m) => m.name));
  assert.ok(metrics.has("mcp.server.operation.duration"), [...metrics].join());
  assert.ok(metrics.has("mcp.client.operation.duration"));

  assertNotExported(receiver);
});
