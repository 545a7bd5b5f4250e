// `loom mcp --servers` with Deno's own OpenTelemetry on: a host's trace
// continues through the gateway (SERVER span parented on the host's
// params._meta) into the upstream (CLIENT span whose context the upstream
// receives in its params._meta), an offloaded answer carries its result
// id, digest and bytes, reference mode's reference reads back through
// read_result, a tool error is error.type tool_error, and no secret of the
// environment reaches the receiver.
import assert from "node:assert/strict";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { tempDir } from "../_kit.ts";
import { connectGateway, denoEntry, FAULT, serversFile } from "../_kit/mcp.ts";
import { named, otlpReceiver, type ReceivedSpan } from "./_otlp.ts";

const SECRETS = {
  ANTHROPIC_API_KEY: "sk-ant-FAKE-gateway-secret-3b7e",
  GITHUB_TOKEN: "ghp_FAKEgatewaySecret0c4d",
};
const HOST_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const HOST_SPAN = "00f067aa0ba902b7";
const KIND_SERVER = 2;
const KIND_CLIENT = 3;

Deno.test("a host's trace continues through the gateway into the upstream's params._meta, with offloads by reference", async () => {
  await using receiver = otlpReceiver();
  await using dir = await tempDir();
  const servers = await serversFile(dir.path, {
    fault: { ...denoEntry(FAULT), persist: true },
  });
  const session = `${dir.path}/session`;
  const received: unknown[] = [];
  let reference: Record<string, unknown> | undefined;
  {
    await using gateway = await connectGateway(
      servers,
      ["--session", session, "--offload-bytes", "4096"],
      {
        env: {
          ...receiver.env(),
          ...SECRETS,
          LOOM_OTEL_CONTENT: "reference",
        },
      },
    );
    const call = async (args: Record<string, unknown>) =>
      await gateway.client.request({
        method: "tools/call",
        params: {
          name: "fault__meta",
          arguments: args,
          _meta: {
            traceparent: `00-${HOST_TRACE}-${HOST_SPAN}-01`,
            tracestate: "rojo=00f067aa0ba902b7",
          },
        },
      }, CallToolResultSchema);
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
    assert.ok(text.includes(HOST_TRACE));
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
    assert.equal(server.kind, KIND_SERVER);
    assert.equal(server.traceId, HOST_TRACE);
    assert.equal(server.parentSpanId, HOST_SPAN);
    assert.equal(server.attributes["mcp.method.name"], "tools/call");
    assert.equal(server.attributes["gen_ai.tool.name"], "fault__meta");
    assert.equal(server.attributes["gen_ai.operation.name"], "execute_tool");
    assert.equal(server.attributes["network.transport"], "pipe");
    assert.match(String(server.attributes["jsonrpc.request.id"]), /^\d+$/);
  }
  // The CLIENT spans are their children, and the upstream got their context.
  const clients = named(spans, "tools/call meta");
  for (const [i, client] of clients.entries()) {
    assert.equal(client.kind, KIND_CLIENT);
    const parent = servers_.find((s) => s.spanId === client.parentSpanId);
    assert.ok(parent, "a client span's parent is a server span");
    assert.equal(client.traceId, HOST_TRACE);
    assert.equal(client.attributes["loom.upstream"], "fault");
    if (i === 0) {
      const meta = received[0] as Record<string, string>;
      assert.equal(meta.traceparent, `00-${HOST_TRACE}-${client.spanId}-01`);
    }
  }
  // The offloaded answer's figures.
  const offloaded = servers_.find((s) =>
    s.attributes["loom.result.ids"] !== undefined
  ) as ReceivedSpan;
  assert.deepEqual(offloaded.attributes["loom.result.ids"], [
    reference?.result,
  ]);
  assert.deepEqual(offloaded.attributes["loom.result.sha256"], [
    reference?.sha256,
  ]);
  assert.ok(
    (offloaded.attributes["loom.offload.bytes_upstream"] as number) > 20_000,
  );
  assert.ok(
    (offloaded.attributes["loom.offload.bytes_to_host"] as number) < 4096,
  );
  assert.equal(reference?.location, await Deno.realPath(session));
  // A tool error.
  const [failed] = named(spans, "tools/call fault__nope");
  assert.equal(failed?.attributes["error.type"], "tool_error");
  assert.equal(failed?.status.code, 2);

  const metrics = new Set(receiver.metrics().map((m) => m.name));
  assert.ok(metrics.has("mcp.server.operation.duration"), [...metrics].join());
  assert.ok(metrics.has("mcp.client.operation.duration"));

  receiver.assertExportsNone(SECRETS);
});
