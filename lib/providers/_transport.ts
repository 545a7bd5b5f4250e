/**
 * The attempt loop of the live providers: each attempt is bounded from the
 * request to the last byte of the body, retries honour `Retry-After` only
 * within the model timeout, and the caller's signal aborts at any point.
 *
 * The SDK clients run with their own retries off; they get a fetch that
 * buffers the whole body under the attempt's deadline, so a server that
 * stalls or drips its body cannot outlast the timeout.
 */

import { formatDuration } from "../display.ts";
import { ProviderError } from "./provider_error.ts";

/** Statuses worth another attempt (as the SDKs retry them). */
const RETRYABLE_STATUS = new Set([408, 409, 429]);
const BACKOFF_START_MS = 500;
const BACKOFF_MAX_MS = 8_000;

/** How the attempts of a provider's calls are bounded. */
export interface Transport {
  /** How messages name the provider: `Anthropic`, `The server at URL`. */
  readonly label: string;
  /** Bound of one attempt, request to the last body byte. */
  readonly timeoutMs: number;
  /** Attempts after the first. */
  readonly maxRetries: number;
  /** The fetch the attempts use (the global one by default). */
  readonly fetch: typeof fetch;
}

/** A transport with the signal of one call. */
export interface AttemptPolicy extends Transport {
  /** Aborts the call, in an attempt or in a wait between attempts. */
  readonly signal: AbortSignal | undefined;
}

/**
 * Added to the SDK's own timeout (which stops at the headers) so the
 * attempt's deadline, which covers the body too, always fires first.
 */
const SDK_TIMEOUT_SLACK_MS = 1_000;

/**
 * The SDK client options of one attempt: its bounded fetch, no retries of
 * the SDK's own, and a timeout that never fires before the attempt's.
 */
export function sdkAttemptOptions(
  transport: Transport,
  fetch: typeof globalThis.fetch,
): { fetch: typeof globalThis.fetch; maxRetries: 0; timeout: number } {
  return {
    fetch,
    maxRetries: 0,
    timeout: transport.timeoutMs + SDK_TIMEOUT_SLACK_MS,
  };
}

/** How an SDK failure is classified by the provider that caught it. */
export type AttemptFailure =
  | {
    readonly kind: "http";
    readonly status: number;
    readonly headers: Headers | undefined;
    readonly error: ProviderError;
  }
  | { readonly kind: "connection"; readonly error: ProviderError }
  | { readonly kind: "final"; readonly error: unknown };

/** The deadline of one attempt ran out (private marker, never escapes). */
class AttemptDeadline extends Error {
  override readonly name = "AttemptDeadline";
}

/**
 * Runs `send` with a bounded fetch until it succeeds, fails for good, runs
 * out of attempts, or the caller aborts.
 *
 * @throws {ProviderError} `provider_timeout` (every attempt timed out, or the
 * last one after other failures), `provider_aborted`, or the classified
 * `provider_http` / `provider_connection` error of the last attempt.
 */
export async function withAttempts<T>(
  policy: AttemptPolicy,
  send: (fetch: typeof globalThis.fetch) => Promise<T>,
  classify: (error: unknown) => AttemptFailure,
): Promise<T> {
  const attempts = policy.maxRetries + 1;
  for (let attempt = 1;; attempt++) {
    throwIfAborted(policy);
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new AttemptDeadline("deadline")),
      policy.timeoutMs,
    );
    let failure: AttemptFailure;
    try {
      return await send(boundedFetch(policy, deadline.signal));
    } catch (error) {
      throwIfAborted(policy);
      if (deadline.signal.aborted) {
        if (attempt >= attempts) throw timeoutError(policy, attempt);
        continue;
      }
      failure = classify(error);
    } finally {
      clearTimeout(timer);
    }
    if (failure.kind === "final") throw failure.error;
    const retryable = failure.kind === "connection" ||
      RETRYABLE_STATUS.has(failure.status) || failure.status >= 500;
    if (!retryable || attempt >= attempts) {
      throw withAttemptCount(failure.error, attempt);
    }
    const asked = failure.kind === "http"
      ? retryAfterMs(failure.headers)
      : undefined;
    if (asked !== undefined && asked > policy.timeoutMs) {
      throw new ProviderError(
        failure.error.code,
        `${failure.error.message} (it asked to retry after ${
          formatDuration(asked)
        }, longer than the model timeout of ${
          formatDuration(policy.timeoutMs)
        })`,
        {
          status: failure.error.status,
          attempts: attempt,
          cause: failure.error,
        },
      );
    }
    await pause(asked ?? backoffMs(attempt, policy.timeoutMs), policy);
  }
}

/** A fetch whose response body is read whole before the deadline or abort. */
function boundedFetch(
  policy: AttemptPolicy,
  deadline: AbortSignal,
): typeof fetch {
  return async (input, init) => {
    const signals = [deadline];
    if (policy.signal !== undefined) signals.push(policy.signal);
    if (init?.signal) signals.push(init.signal);
    const signal = AbortSignal.any(signals);
    const response = await policy.fetch(input, { ...init, signal });
    const body = await response.arrayBuffer();
    return new Response(body.byteLength === 0 ? null : body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function throwIfAborted(policy: AttemptPolicy): void {
  const signal = policy.signal;
  if (signal?.aborted) {
    throw new ProviderError(
      "provider_aborted",
      `The call to ${lowerLabel(policy.label)} was aborted: ${
        reasonText(signal.reason)
      }`,
      { cause: signal.reason },
    );
  }
}

function timeoutError(policy: AttemptPolicy, attempts: number): ProviderError {
  return new ProviderError(
    "provider_timeout",
    `${policy.label} sent no complete reply within the model timeout of ${
      formatDuration(policy.timeoutMs)
    } (${attempts} attempt${
      attempts === 1 ? "" : "s"
    }); raise the model timeout or check the server`,
    { attempts },
  );
}

function withAttemptCount(error: ProviderError, attempts: number) {
  const message = attempts === 1
    ? error.message
    : `${error.message} (${attempts} attempts)`;
  return new ProviderError(error.code, message, {
    status: error.status,
    usage: error.usage,
    attempts,
    cause: (error as { cause?: unknown }).cause,
  });
}

/** `retry-after-ms`, or `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const text = headers?.get("retry-after");
  if (text === null || text === undefined) return undefined;
  const seconds = Number.parseFloat(text);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function backoffMs(attempt: number, capMs: number): number {
  const base = Math.min(BACKOFF_START_MS * 2 ** (attempt - 1), BACKOFF_MAX_MS);
  return Math.min(base * (0.75 + Math.random() / 4), capMs);
}

function pause(ms: number, policy: AttemptPolicy): Promise<void> {
  return new Promise((resolve, reject) => {
    const signal = policy.signal;
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      try {
        throwIfAborted(policy);
      } catch (error) {
        reject(error);
      }
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function lowerLabel(label: string): string {
  return label.replace(/^The server/, "the server");
}

function reasonText(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return typeof reason === "string" ? reason : "no reason given";
}
