import assert from "node:assert/strict";
import { LinearStdioTransport } from "../../../lib/mcp/gateway/linear_stdio_transport.ts";

/** A transport over a Deno program that writes `script`'s output. */
async function run(script: string, maxMessageBytes?: number) {
  const transport = new LinearStdioTransport({
    command: Deno.execPath(),
    args: ["eval", script],
    env: {},
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
  });
  const messages: unknown[] = [];
  const errors: string[] = [];
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  transport.onmessage = (m) => messages.push(m);
  transport.onerror = (e) => errors.push(e.message);
  transport.onclose = () => resolve();
  await transport.start();
  await closed;
  return { transport, messages, errors };
}

Deno.test("LinearStdioTransport reads a 20 MB line whole, past the SDK's 10 MiB limit", async () => {
  const { messages } = await run(
    `const t = "x".repeat(20_000_000); Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify({jsonrpc:"2.0",id:1,result:{content:[{type:"text",text:t}]}}) + "\\n"));`,
  );
  const [m] = messages as { result: { content: { text: string }[] } }[];
  assert.equal(m?.result.content[0]?.text.length, 20_000_000);
});

Deno.test("LinearStdioTransport skips garbage lines and keeps reading", async () => {
  const { messages, errors, transport } = await run(
    `console.log("not json"); console.log('{"jsonrpc":"2.0","method":"x"}'); console.error("boom");`,
  );
  assert.deepEqual(messages, [{ jsonrpc: "2.0", method: "x" }]);
  assert.equal(errors.length, 1);
  assert.equal(transport.garbageLines, 1);
  assert.match(transport.stderrTail, /boom/);
});

Deno.test("LinearStdioTransport cuts a line over its limit into a partial answer marked with its nonce", async (t) => {
  for (
    const [name, order] of [["id last", "result-first"], [
      "id first",
      "id-first",
    ]] as const
  ) {
    await t.step(name, async () => {
      const { messages, transport } = await run(
        `const text = "é".repeat(600); const body = ${
          order === "id-first"
            ? `{jsonrpc:"2.0",id:7,result:{content:[{type:"text",text}]}}`
            : `{result:{content:[{type:"text",text}]},jsonrpc:"2.0",id:7}`
        }; console.log(JSON.stringify(body));`,
        1001,
      );
      const [m] = messages as {
        id: number;
        result: { content: { text: string }[]; _meta: Record<string, unknown> };
      }[];
      assert.equal(m?.id, 7);
      assert.equal(m?.result._meta["loom/partial"], transport.partialNonce);
      const text = m!.result.content[0]!.text;
      assert.ok(text.length > 400 && /^é+$/.test(text), text);
      assert.ok((m!.result._meta["loom/partial_total_bytes"] as number) > 1001);
    });
  }
});

Deno.test("LinearStdioTransport reports a program that cannot start", async () => {
  const transport = new LinearStdioTransport({
    command: "/nonexistent/x",
    args: [],
    env: {},
  });
  await assert.rejects(transport.start(), /Cannot start \/nonexistent\/x/);
});
