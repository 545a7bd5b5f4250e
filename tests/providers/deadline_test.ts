import assert from "node:assert/strict";
import { createProvider } from "../../lib/providers/create_provider.ts";
import type { ModelCall } from "../../lib/providers/model_provider.ts";
import { ProviderError } from "../../lib/providers/provider_error.ts";
import {
  chatCompletion,
  drip,
  hostileServer,
  json,
  stall,
} from "./_hostile_server.ts";
import { selectionCall } from "./_requests.ts";
import { timed } from "../_kit/measure.ts";

/** Small on purpose: every bound below is a few hundred milliseconds. */
const TIMEOUT_MS = 300;
/** Generous slack for a loaded 2-core machine; only a hang exceeds it. */
const SLACK_MS = 5_000;
const ENV = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test" };
const OK_BODY = JSON.stringify(
  chatCompletion("select_action", '{"action":"tests.run"}'),
);

function openai(
  url: string,
  options: { maxRetries?: number; timeoutMs?: number } = {},
) {
  return createProvider("openai:fuzz", {
    env: ENV,
    baseUrl: `${url}/v1`,
    timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
    maxRetries: options.maxRetries ?? 0,
  });
}

async function failure(
  promise: Promise<unknown>,
  code: string,
): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProviderError, `not a ProviderError: ${error}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}, the call succeeded`);
}

Deno.test("a server that accepts the request and sends nothing ends as provider_timeout with the attempt count", async () => {
  await using server = hostileServer(stall);
  const provider = openai(server.url, { maxRetries: 1 });
  const [error, elapsed] = await timed(() =>
    failure(provider.call(selectionCall()), "provider_timeout")
  );
  assert.equal(error.attempts, 2);
  assert.equal(server.requests, 2);
  assert.match(
    error.message,
    /within the model timeout of 300 ms \(2 attempts\)/,
  );
  assert.ok(elapsed < 2 * TIMEOUT_MS + SLACK_MS, `took ${elapsed} ms`);
});

Deno.test("a body dripped at one byte per interval cannot outlast the attempt's deadline", async () => {
  // Headers arrive at once; the body would take OK_BODY.length × 100 ms.
  await using server = hostileServer((c) => drip(c, OK_BODY, 100));
  const provider = openai(server.url);
  const [error, elapsed] = await timed(() =>
    failure(provider.call(selectionCall()), "provider_timeout")
  );
  assert.equal(error.attempts, 1);
  assert.ok(elapsed < TIMEOUT_MS + SLACK_MS, `took ${elapsed} ms`);
});

Deno.test("a slow body that ends within the deadline is read whole", async () => {
  const short = JSON.stringify(chatCompletion("select_action", "{}"));
  await using server = hostileServer((c) => drip(c, short, 0));
  const provider = openai(server.url, { timeoutMs: 20_000 });
  const reply = await provider.call(selectionCall());
  assert.deepEqual(reply.arguments, {});
});

Deno.test("the Anthropic provider bounds a stalled call the same way", async () => {
  await using server = hostileServer(stall);
  const provider = createProvider("anthropic:claude-test", {
    env: ENV,
    baseUrl: server.url,
    timeoutMs: TIMEOUT_MS,
    maxRetries: 0,
  });
  const error = await failure(
    provider.call(selectionCall()),
    "provider_timeout",
  );
  assert.equal(error.attempts, 1);
  assert.match(error.message, /^Anthropic sent no complete reply/);
});

Deno.test("a Retry-After longer than the model timeout is not waited for", async () => {
  await using server = hostileServer(() =>
    new Response(JSON.stringify({ error: { message: "Slow down" } }), {
      status: 429,
      headers: { "retry-after": "59", "content-type": "application/json" },
    })
  );
  const provider = openai(server.url, { maxRetries: 2 });
  const [error, elapsed] = await timed(() =>
    failure(provider.call(selectionCall()), "provider_http")
  );
  assert.equal(error.status, 429);
  assert.equal(error.attempts, 1);
  assert.equal(server.requests, 1);
  assert.match(
    error.message,
    /retry after 59 s, longer than the model timeout of 300 ms/,
  );
  assert.ok(elapsed < SLACK_MS, `took ${elapsed} ms`);
});

Deno.test("a Retry-After within the model timeout is honoured", async () => {
  await using server = hostileServer(({ n }) =>
    n === 1
      ? new Response("{}", { status: 429, headers: { "retry-after": "0.05" } })
      : json(JSON.parse(OK_BODY))
  );
  const provider = openai(server.url, { maxRetries: 1, timeoutMs: 20_000 });
  const reply = await provider.call(selectionCall());
  assert.deepEqual(reply.arguments, { action: "tests.run" });
  assert.equal(server.requests, 2);
});

Deno.test("the caller's signal aborts a call in flight as provider_aborted", async () => {
  await using server = hostileServer(stall);
  const provider = openai(server.url, { timeoutMs: 60_000 });
  const controller = new AbortController();
  const call: ModelCall = { ...selectionCall(), signal: controller.signal };
  setTimeout(() => controller.abort(new Error("Interrupted by SIGINT")), 50);
  const [error, elapsed] = await timed(() =>
    failure(provider.call(call), "provider_aborted")
  );
  assert.match(error.message, /aborted: Interrupted by SIGINT/);
  assert.ok(elapsed < SLACK_MS, `took ${elapsed} ms`);
});

Deno.test("the caller's signal aborts the wait between attempts", async () => {
  await using server = hostileServer(() =>
    new Response("{}", { status: 503, headers: { "retry-after": "30" } })
  );
  const provider = openai(server.url, { timeoutMs: 60_000, maxRetries: 2 });
  const controller = new AbortController();
  const call: ModelCall = { ...selectionCall(), signal: controller.signal };
  setTimeout(() => controller.abort(new Error("Stop")), 100);
  const [, elapsed] = await timed(() =>
    failure(provider.call(call), "provider_aborted")
  );
  assert.equal(server.requests, 1);
  assert.ok(elapsed < SLACK_MS, `took ${elapsed} ms`);
});
