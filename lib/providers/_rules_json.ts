/**
 * What every request rule is built from: the breach it reports, and the
 * helpers that walk a body the SDK sent (any JSON, trusted in nothing).
 *
 * @module
 */

/** The two services whose request rules Loom knows. */
export type Service = "anthropic" | "openai";

/** One rule a request body breaks, as the service would refuse it. */
export interface RuleBreach {
  /** The service whose rule it is. */
  readonly service: Service;
  /** Stable rule id, `<service>.<rule>`, e.g. `anthropic.tool_schema_root`. */
  readonly rule: string;
  /** RFC 6901 pointer to the offending part of the body, e.g. `/tools/0/input_schema`. */
  readonly path: string;
  /** The HTTP status the service answers with. */
  readonly status: 400;
  /** The service's error type, e.g. `invalid_request_error`. */
  readonly type: string;
  /** The service's own message for the breach. */
  readonly message: string;
}

/** A JSON object of a body. */
export type Json = Record<string, unknown>;

/** A path into a body, as tokens: `["tools", 0, "name"]`. */
export type Tokens = readonly (string | number)[];

/** The breach of `service`'s rule `rule` (both answer 400 `invalid_request_error`). */
export function breach(
  service: Service,
  rule: string,
  path: string,
  message: string,
): RuleBreach {
  return {
    service,
    rule: `${service}.${rule}`,
    path,
    status: 400,
    type: "invalid_request_error",
    message,
  };
}

/** The breach of Anthropic's rule `rule`. */
export function anthropicBreach(
  rule: string,
  path: string,
  message: string,
): RuleBreach {
  return breach("anthropic", rule, path, message);
}

/** The breach of OpenAI's rule `rule`. */
export function openAIBreach(
  rule: string,
  path: string,
  message: string,
): RuleBreach {
  return breach("openai", rule, path, message);
}

export function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The RFC 6901 pointer of a path. */
export function pointer(...tokens: Tokens): string {
  return tokens.map((t) =>
    "/" + String(t).replaceAll("~", "~0").replaceAll("/", "~1")
  ).join("");
}

/** The dotted location Anthropic's messages use: `tools.0.custom.name`. */
export function dotted(...tokens: Tokens): string {
  return tokens.join(".");
}
