/**
 * The check a live provider runs on each request body before the HTTP call:
 * the services' request rules (`request_rules.ts`, loaded on the first
 * check, as the SDKs are), and the `provider_contract` error of a breach.
 *
 * @module
 */
import type { RuleBreach, Service } from "./request_rules.ts";
import { ProviderError } from "./provider_error.ts";

const SERVICE_NAME: Readonly<Record<Service, string>> = {
  anthropic: "Anthropic",
  openai: "OpenAI",
};

/**
 * The rules `body` breaks for `service`, loading the rules on first use.
 *
 * @param service `anthropic` or `openai`.
 * @param body The request body as the SDK sends it.
 * @returns Every breach; empty when the service takes the body.
 *
 * @example
 * ```ts
 * import { requestBreaches } from "./request_contract.ts";
 * import assert from "node:assert/strict";
 * const breaches = await requestBreaches("anthropic", {
 *   model: "claude-sonnet-4-5",
 *   messages: [{ role: "user", content: "Hi" }],
 * });
 * assert.deepEqual(breaches.map((b) => b.rule), ["anthropic.max_tokens_required"]);
 * ```
 */
export async function requestBreaches(
  service: Service,
  body: unknown,
): Promise<RuleBreach[]> {
  const rules = await import("./request_rules.ts");
  // As the SDK serializes it: `undefined` fields are not sent.
  const sent: unknown = JSON.parse(JSON.stringify(body));
  return service === "anthropic"
    ? rules.checkAnthropicRequest(sent)
    : rules.checkOpenAIRequest(sent);
}

/**
 * The `provider_contract` error of a breach: which rule, where in the body,
 * and the service's own message.
 *
 * @param breach The first rule the body breaks.
 * @returns The error, with `rule` and `path` set.
 *
 * @example
 * ```ts
 * import { contractError } from "./request_contract.ts";
 * import assert from "node:assert/strict";
 * const error = contractError({
 *   service: "openai",
 *   rule: "openai.max_completion_tokens",
 *   path: "/max_tokens",
 *   status: 400,
 *   type: "invalid_request_error",
 *   message: "Unsupported parameter: 'max_tokens' is not supported with this model.",
 * });
 * assert.equal(error.code, "provider_contract");
 * assert.equal(error.path, "/max_tokens");
 * ```
 */
export function contractError(breach: RuleBreach): ProviderError {
  const said = breach.message.replace(/\.$/, "");
  return new ProviderError(
    "provider_contract",
    `${
      SERVICE_NAME[breach.service]
    } would refuse this request (rule ${breach.rule} at ${
      breach.path === "" ? "the body" : breach.path
    }), so it was not sent: ${said}`,
    { rule: breach.rule, path: breach.path },
  );
}

/**
 * Throws `provider_contract` when `body` breaks a rule of `service`.
 *
 * @param service `anthropic` or `openai`.
 * @param body The request body as the SDK sends it.
 * @throws {ProviderError} `provider_contract`, naming the first broken rule.
 */
export async function checkRequestBody(
  service: Service,
  body: unknown,
): Promise<void> {
  const [breach] = await requestBreaches(service, body);
  if (breach !== undefined) throw contractError(breach);
}
