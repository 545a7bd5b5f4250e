// What every live provider (Anthropic Messages, OpenAI-compatible Chat) must
// do the same way against a fake server: retry 429 and 5xx, explain a 401
// without retrying it, name an unreachable server. Each provider's test file
// describes its dialect and registers these tests under its own name.
import assert from "node:assert/strict";
import {
  createProvider,
  type CreateProviderOptions,
} from "../../lib/providers/create_provider.ts";
import type {
  ModelProvider,
  ModelReply,
} from "../../lib/providers/model_provider.ts";
import { ProviderError } from "../../lib/providers/provider_error.ts";
import {
  type CannedResponse,
  closedPortUrl,
  fakeServer,
  type ReceivedRequest,
  RETRY_SOON,
} from "./_fake_server.ts";
import { selectionCall } from "./_requests.ts";

/** A check for `assert.rejects`/`throws`: a ProviderError with this code and message. */
export function providerError(
  code: string,
  pattern?: RegExp,
): (error: unknown) => boolean {
  return (error: unknown): boolean => {
    assert.ok(error instanceof ProviderError, `not a ProviderError: ${error}`);
    assert.equal(error.code, code);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  };
}

/** An error answer of the API: its type and message text. */
type ApiError = readonly [type: string, text: string];

/** How one provider's API speaks, for the shared tests. */
interface Dialect {
  /** As the test names say it: `Anthropic`, `OpenAI`. */
  readonly name: string;
  /** The model spec, e.g. `anthropic:claude-test`. */
  readonly spec: string;
  /** An environment holding the API key. */
  readonly env: Readonly<Record<string, string>>;
  /** The base URL to give the provider for a fake server at `url`. */
  baseUrl(url: string): string;
  /** A successful answer to the selection call, and the arguments in it. */
  readonly ok: CannedResponse;
  readonly okArguments: unknown;
  /** The usage the provider reports for `ok`. */
  readonly okUsage: ModelReply["usage"];
  /** The response facts of `ok` (id, model, finish reasons). */
  readonly okResponse: ModelReply["response"];
  /** The API's error body. */
  errorBody(type: string, text: string): unknown;
  /** Statuses retried once before a success, and the error they carry. */
  readonly retried: readonly number[];
  readonly retriedError: ApiError;
  /** A failure that outlasts `maxRetries`: its status and error, and the message it becomes. */
  readonly persistent: readonly [
    status: number,
    error: ApiError,
    maxRetries: number,
    message: RegExp,
  ];
  /** The 401 answer's error and the message the provider makes of it. */
  readonly unauthorized: readonly [error: ApiError, message: RegExp];
  /** The message for a server nobody listens at. */
  readonly unreachable: RegExp;
}

/** The dialect's provider, pointed at a fake server at `url`. */
function providerAt(
  dialect: Dialect,
  url: string,
  options: CreateProviderOptions = {},
): ModelProvider {
  return createProvider(dialect.spec, {
    env: dialect.env,
    baseUrl: dialect.baseUrl(url),
    ...options,
  });
}

/**
 * The one request the dialect's provider sends for the selection call
 * (after checking the provider's spec and that it is a POST).
 */
async function sentRequest(dialect: Dialect): Promise<ReceivedRequest> {
  await using server = fakeServer([dialect.ok]);
  const provider = providerAt(dialect, server.url);
  assert.equal(provider.spec, dialect.spec);
  await provider.call(selectionCall());
  assert.equal(server.received.length, 1);
  const [sent] = server.received;
  assert.ok(sent);
  assert.equal(sent.method, "POST");
  return sent;
}

/** The reply of the dialect's provider to the selection call when the server answers `response`. */
async function replyTo(
  dialect: Dialect,
  response: CannedResponse = dialect.ok,
): Promise<ModelReply> {
  await using server = fakeServer([response]);
  return await providerAt(dialect, server.url).call(selectionCall());
}

/**
 * Calls the dialect's provider against a server that answers `body` with
 * status 200, expecting a ProviderError.
 *
 * @returns The error, and the requests the server received.
 */
async function failedCall(
  dialect: Dialect,
  body: unknown,
  options: CreateProviderOptions = {},
): Promise<{ error: ProviderError; received: ReceivedRequest[] }> {
  await using server = fakeServer([{ status: 200, body }]);
  const error = await providerAt(dialect, server.url, options)
    .call(selectionCall())
    .then(() => undefined, (error: unknown) => error);
  assert.ok(error instanceof ProviderError, `not a ProviderError: ${error}`);
  return { error, received: server.received };
}

/** An error answer of the dialect's API with this status. */
function errorAnswer(
  dialect: Dialect,
  status: number,
  [type, text]: ApiError,
  headers?: Record<string, string>,
): CannedResponse {
  const body = dialect.errorBody(type, text);
  return headers === undefined ? { status, body } : { status, body, headers };
}

/** What a provider's own tests use, bound to its dialect. */
export interface DialectTools {
  /** The provider, pointed at a fake server at `url`. */
  at(url: string, options?: CreateProviderOptions): ModelProvider;
  /** The one request sent for the selection call (a POST, checked). */
  sent(): Promise<ReceivedRequest>;
  /** The reply to the selection call when the server answers `response` (the dialect's `ok` by default). */
  reply(response?: CannedResponse): Promise<ModelReply>;
  /** The ProviderError of a call answered by `body` (status 200), and what the server received. */
  failure(
    body: unknown,
    options?: CreateProviderOptions,
  ): Promise<{ error: ProviderError; received: ReceivedRequest[] }>;
}

/**
 * Registers the shared provider tests under the dialect's name.
 *
 * @returns The helpers for the provider's own tests.
 */
export function providerContract(dialect: Dialect): DialectTools {
  registerContract(dialect);
  return {
    at: (url, options) => providerAt(dialect, url, options),
    sent: () => sentRequest(dialect),
    reply: (response) => replyTo(dialect, response),
    failure: (body, options) => failedCall(dialect, body, options),
  };
}

function registerContract(dialect: Dialect): void {
  const { name } = dialect;
  const [status, persistentError, maxRetries, persistentMessage] =
    dialect.persistent;
  const [unauthorizedError, unauthorizedMessage] = dialect.unauthorized;

  Deno.test(`the ${name} provider returns the forced call's arguments and maps its usage`, async () => {
    assert.deepEqual(await replyTo(dialect), {
      arguments: dialect.okArguments,
      usage: dialect.okUsage,
      final_usage: true,
      response: dialect.okResponse,
    });
  });

  Deno.test(`the ${name} SDK retries 429 and 5xx answers`, async (t) => {
    for (const status of dialect.retried) {
      await t.step(`HTTP ${status} once, then success`, async () => {
        await using server = fakeServer([
          errorAnswer(dialect, status, dialect.retriedError, RETRY_SOON),
          dialect.ok,
        ]);
        const reply = await providerAt(dialect, server.url).call(
          selectionCall(),
        );
        assert.deepEqual(reply.arguments, dialect.okArguments);
        assert.equal(server.received.length, 2);
        assert.deepEqual(server.received[1]?.body, server.received[0]?.body);
      });
    }

    await t.step(
      `a ${
        status >= 500 ? "5xx" : status
      } that persists past the retries is a provider_http error`,
      async () => {
        await using server = fakeServer([
          errorAnswer(dialect, status, persistentError, RETRY_SOON),
        ]);
        const provider = providerAt(dialect, server.url, { maxRetries });
        await assert.rejects(provider.call(selectionCall()), (error) => {
          providerError("provider_http", persistentMessage)(error);
          assert.equal((error as ProviderError).status, status);
          return true;
        });
        assert.equal(server.received.length, maxRetries + 1);
      },
    );
  });

  Deno.test(`the ${name} provider explains a 401 and does not retry it`, async () => {
    await using server = fakeServer([
      errorAnswer(dialect, 401, unauthorizedError),
    ]);
    const provider = providerAt(dialect, server.url);
    await assert.rejects(provider.call(selectionCall()), (error) => {
      providerError("provider_http", unauthorizedMessage)(error);
      assert.equal((error as ProviderError).status, 401);
      return true;
    });
    assert.equal(server.received.length, 1);
  });

  Deno.test(`the ${name} provider reports an unreachable server as provider_connection`, async () => {
    const url = await closedPortUrl();
    const provider = createProvider(dialect.spec, {
      env: dialect.env,
      baseUrl: url,
      maxRetries: 0,
    });
    await assert.rejects(
      provider.call(selectionCall()),
      providerError("provider_connection", dialect.unreachable),
    );
  });
}
