/**
 * Turns a model spec (`recorded:PATH`, `anthropic:MODEL`, `openai:MODEL`)
 * into a {@linkcode ModelProvider}, failing before any work on a bad spec, an
 * unreadable recording or a missing API key.
 *
 * @module
 */

import { anthropicProvider } from "./_anthropic.ts";
import { type Env, readKey } from "./_env.ts";
import type { LiveProviderConfig } from "./_live.ts";
import { openAIProvider } from "./_openai.ts";
import type { ModelProvider } from "./model_provider.ts";
import { ProviderError } from "./provider_error.ts";
import { RecordedProvider } from "./recorded_provider.ts";

/** Options of {@linkcode createProvider}. */
export interface CreateProviderOptions {
  /**
   * Base URL of the API: any OpenAI-compatible server for `openai:` (e.g.
   * `http://127.0.0.1:8000/v1`), or a proxy for `anthropic:`. Ignored by
   * `recorded:`.
   */
  readonly baseUrl?: string;
  /**
   * The environment to read `ANTHROPIC_API_KEY` / `OPENAI_API_KEY` from,
   * used instead of `Deno.env` when given.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The fetch the SDK clients use (default: the global fetch). */
  readonly fetch?: typeof fetch;
  /** `recorded:` only: index of the first call to replay (resuming a session). */
  readonly startAtCall?: number;
  /** Retries on 408/409/429/5xx, connection failures and timeouts (default 2). */
  readonly maxRetries?: number;
  /**
   * Bound of one attempt of a live call in milliseconds, from the request to
   * the last byte of the body (default 120,000). A `Retry-After` longer than
   * this is not waited for.
   */
  readonly timeoutMs?: number;
  /** Output token limit per call (Anthropic default 8,192; OpenAI: the server's default). */
  readonly maxTokens?: number;
}

const DEFAULT_MAX_RETRIES = 2;
/** Default bound of one attempt of a live call (`--model-timeout`). */
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;

/**
 * Creates the model provider a spec names.
 *
 * - `recorded:PATH` replays a `loom-recording/1` file (read and validated now).
 * - `anthropic:MODEL` calls Anthropic's Messages API with the official SDK;
 *   it needs `ANTHROPIC_API_KEY`.
 * - `openai:MODEL` calls Chat Completions with the official `openai` client at
 *   `baseUrl` (default OpenAI's). It needs `OPENAI_API_KEY`, except when a
 *   `baseUrl` is given: local servers often need no key, so then a missing key
 *   means no `Authorization` header is sent.
 *
 * @param spec `recorded:PATH`, `anthropic:MODEL` or `openai:MODEL`.
 * @param options Base URL, environment, fetch, resume point, retries, limits.
 * @returns A provider; nothing has been sent yet.
 * @throws {ProviderError} `bad_spec` for an unknown scheme or an empty model
 * or path; `missing_api_key` when the key variable is unset or blank;
 * `recording_invalid` / `bad_option` for a bad recording or `startAtCall`;
 * `bad_option` for a bad `baseUrl`, `maxRetries`, `timeoutMs` or `maxTokens`.
 *
 * @example
 * ```ts
 * import { createProvider, RecordedProvider } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * const path = await Deno.makeTempFile({ suffix: ".json" });
 * await Deno.writeTextFile(path, JSON.stringify({
 *   format: "loom-recording/1",
 *   calls: [
 *     { phase: "selection", tool: "select_action", arguments: { action: "repository.inspect" },
 *       usage: { input_tokens: 1200, output_tokens: 9 } },
 *     { phase: "arguments", tool: "action_arguments", arguments: { paths: ["README.md"] } },
 *   ],
 * }));
 * const provider = createProvider(`recorded:${path}`);
 * const request = {
 *   system: [{ type: "text" as const, text: "You are a careful engineer" }],
 *   messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Fix the bug" }] }],
 *   tool: { name: "select_action", description: "Choose", input_schema: { type: "object" } },
 *   tool_choice: { type: "tool" as const, name: "select_action" },
 * };
 * const reply = await provider.call({ phase: "selection", tool: "select_action", request });
 * assert.deepEqual(reply.arguments, { action: "repository.inspect" });
 * assert.equal(reply.usage.input_tokens, 1200);
 * assert.equal(reply.usage.cache_read_tokens, null);
 * assert.ok(provider instanceof RecordedProvider && provider.callsUsed === 1);
 * await Deno.remove(path);
 * ```
 */
export function createProvider(
  spec: string,
  options: CreateProviderOptions = {},
): ModelProvider {
  const colon = spec.indexOf(":");
  const scheme = colon < 0 ? "" : spec.slice(0, colon);
  const rest = colon < 0 ? "" : spec.slice(colon + 1);
  if (scheme === "recorded") {
    if (rest === "") throw badSpec(spec, "the recording path is empty");
    const recordedOptions = options.startAtCall === undefined
      ? {}
      : { startAtCall: options.startAtCall };
    return RecordedProvider.load(rest, recordedOptions);
  }
  if (scheme === "anthropic" || scheme === "openai") {
    const model = rest.trim();
    if (model === "") throw badSpec(spec, "the model name is empty");
    const config = liveConfig(scheme, options);
    return scheme === "anthropic"
      ? anthropicProvider(spec, model, config)
      : openAIProvider(spec, model, config);
  }
  throw badSpec(
    spec,
    "expected recorded:PATH, anthropic:MODEL or openai:MODEL",
  );
}

function badSpec(spec: string, why: string): ProviderError {
  return new ProviderError("bad_spec", `Invalid model spec ${spec}: ${why}`);
}

function liveConfig(
  scheme: "anthropic" | "openai",
  options: CreateProviderOptions,
): LiveProviderConfig {
  const baseUrl = options.baseUrl;
  if (baseUrl !== undefined && !isHttpUrl(baseUrl)) {
    throw new ProviderError(
      "bad_option",
      `Invalid base URL ${baseUrl}: expected an http or https URL`,
    );
  }
  checkCount("maxRetries", options.maxRetries, 0);
  checkCount("timeoutMs", options.timeoutMs, 1);
  checkCount("maxTokens", options.maxTokens, 1);
  const variable = scheme === "anthropic"
    ? "ANTHROPIC_API_KEY"
    : "OPENAI_API_KEY";
  const { key, problem } = readKey(variable, options.env as Env | undefined);
  const keyOptional = scheme === "openai" && baseUrl !== undefined;
  if (key === undefined && !keyOptional) {
    const hint = scheme === "openai"
      ? ` (a local OpenAI-compatible server without keys works with a base URL)`
      : "";
    throw new ProviderError(
      "missing_api_key",
      problem === undefined
        ? `Cannot use ${scheme}: ${variable} is not set${hint}`
        : `Cannot use ${scheme}: ${variable} is unavailable, ${problem}`,
    );
  }
  return {
    apiKey: key,
    keyVariable: variable,
    baseUrl,
    fetch: options.fetch,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    timeoutMs: options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
    maxTokens: options.maxTokens,
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function checkCount(
  name: string,
  value: number | undefined,
  min: number,
): void {
  if (value === undefined) return;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new ProviderError(
      "bad_option",
      `Invalid ${name} ${value}: expected an integer of at least ${min}`,
    );
  }
}
