/**
 * A request built exactly as a live provider would send it, without sending
 * it: the body the SDK would post, the URL it would post it to, and the
 * service rules it breaks. `loom run --dry-run` prints and checks it. No API
 * key is read, so none can be printed.
 *
 * @module
 */
import type { TurnRequest } from "../briefing/turn_request.ts";
import { ProviderError } from "./provider_error.ts";
import { providerRequestBody } from "./request_body.ts";
import { requestBreaches } from "./request_contract.ts";
import type { ProviderRequestBody } from "./request_parts.ts";
import type { RuleBreach, Service } from "./request_rules.ts";

/** What a dry run shows. */
export interface DryRunRequest {
  /** The service whose rules apply: `anthropic` or `openai`. */
  readonly service: Service;
  /** The URL the SDK would post to. */
  readonly url: string;
  /** The JSON body, as the SDK would send it. */
  readonly body: ProviderRequestBody;
  /** The rules the body breaks; empty when the service would take it. */
  readonly breaches: readonly RuleBreach[];
}

const DEFAULT_BASE: Readonly<Record<Service, string>> = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
};

const PATH: Readonly<Record<Service, string>> = {
  anthropic: "/v1/messages",
  openai: "/chat/completions",
};

/**
 * Builds the body a live provider would send for `request`, and checks it.
 *
 * @param spec `anthropic:MODEL` or `openai:MODEL`.
 * @param request The turn request.
 * @param options The base URL the run would use.
 * @returns The service, URL, body and breaches.
 * @throws {ProviderError} `bad_spec` for any other spec.
 *
 * @example
 * ```ts
 * import { dryRunRequest } from "./dry_run.ts";
 * import assert from "node:assert/strict";
 * const dry = await dryRunRequest("openai:gpt-5", {
 *   system: [{ type: "text", text: "Rules" }],
 *   messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
 *   tool: { name: "t", description: "d", input_schema: { type: "object" } },
 *   tool_choice: { type: "tool", name: "t" },
 * });
 * assert.equal(dry.url, "https://api.openai.com/v1/chat/completions");
 * assert.deepEqual(dry.breaches, []);
 * ```
 */
export async function dryRunRequest(
  spec: string,
  request: TurnRequest,
  options: { readonly baseUrl?: string | undefined } = {},
): Promise<DryRunRequest> {
  const colon = spec.indexOf(":");
  const scheme = spec.slice(0, colon);
  const model = spec.slice(colon + 1).trim();
  if ((scheme !== "anthropic" && scheme !== "openai") || model === "") {
    throw new ProviderError(
      "bad_spec",
      `A dry run builds the request of a live provider: use --model anthropic:MODEL or openai:MODEL, not ${spec}`,
    );
  }
  const body = providerRequestBody(scheme, request, model);
  const base = (options.baseUrl ?? DEFAULT_BASE[scheme]).replace(/\/+$/, "");
  return {
    service: scheme,
    url: `${base}${PATH[scheme]}`,
    body,
    breaches: await requestBreaches(scheme, body),
  };
}
