/** Shared pieces of the live (HTTP) providers. */

import { displayText } from "../display.ts";
import { ProviderError } from "./provider_error.ts";
import type { Transport } from "./_transport.ts";

/** What createProvider resolves for a live provider. */
export interface LiveProviderConfig {
  readonly apiKey: string | undefined;
  readonly baseUrl: string | undefined;
  readonly fetch: typeof fetch | undefined;
  /** Attempts after the first, on 408/409/429/5xx, connection failures and timeouts. */
  readonly maxRetries: number;
  /** Bound of one attempt, from the request to the last byte of the body. */
  readonly timeoutMs: number;
  readonly maxTokens: number | undefined;
}

/** The transport of a live provider named `label` in messages. */
export function liveTransport(
  config: LiveProviderConfig,
  label: string,
): Transport {
  return {
    label,
    timeoutMs: config.timeoutMs,
    maxRetries: config.maxRetries,
    fetch: config.fetch ?? ((input, init) => fetch(input, init)),
  };
}

/** A ProviderError for an HTTP error status, with a clear word on 401/403. */
export function httpFailure(
  provider: string,
  keyVariable: string,
  failure: { status: number; detail: unknown; cause: unknown },
): ProviderError {
  const { status } = failure;
  const detail = typeof failure.detail === "string" && failure.detail !== ""
    ? `: ${clip(failure.detail)}`
    : "";
  let message: string;
  if (status === 401) {
    message =
      `${provider} rejected the API key with HTTP 401: check ${keyVariable}${detail}`;
  } else if (status === 403) {
    message =
      `${provider} refused the request with HTTP 403: the key in ${keyVariable} lacks permission${detail}`;
  } else if (status === 429) {
    message = `${provider} is rate limiting (HTTP 429)${detail}`;
  } else if (status >= 500) {
    message = `${provider} failed with HTTP ${status}${detail}`;
  } else {
    message = `${provider} rejected the request with HTTP ${status}${detail}`;
  }
  return new ProviderError("provider_http", message, {
    status,
    cause: failure.cause,
  });
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, " ").trim().replace(/\.$/, "");
  return displayText(line, 300);
}
