/**
 * The services' request rules for the fake servers of the tests: every fake
 * that stands in for Anthropic or OpenAI runs a request body through
 * `lib/providers/request_rules.ts` and answers a breach with the service's
 * own 400 and error body, so no test can pass on a body the real service
 * would refuse.
 */
import {
  checkAnthropicRequest,
  checkOpenAIRequest,
  checkOpenAIResponsesRequest,
  type RuleBreach,
  type Service,
} from "../../lib/providers/request_rules.ts";

/**
 * The service a request path belongs to: `/v1/messages`, `…/chat/completions`
 * or `…/responses` (OpenAI's Responses API).
 */
export function serviceOf(path: string): Service | undefined {
  if (/\/v1\/messages$/.test(path)) return "anthropic";
  if (/\/(chat\/completions|responses)$/.test(path)) return "openai";
  return undefined;
}

/** The rules `body` breaks for the service at `path` (none for other paths). */
export function breachesOf(path: string, body: unknown): RuleBreach[] {
  if (/\/v1\/messages$/.test(path)) return checkAnthropicRequest(body);
  if (/\/chat\/completions$/.test(path)) return checkOpenAIRequest(body);
  if (/\/responses$/.test(path)) return checkOpenAIResponsesRequest(body);
  return [];
}

/**
 * The service's 400 for a body that breaks a rule, or `undefined` when the
 * service would take it. Anthropic answers
 * `{"type":"error","error":{"type":…,"message":…}}`, OpenAI
 * `{"error":{"message":…,"type":…,"param":…,"code":…}}`.
 *
 * @param path The request's URL path.
 * @param body The parsed request body.
 */
export function refusal(path: string, body: unknown): Response | undefined {
  const [breach] = breachesOf(path, body);
  if (breach === undefined) return undefined;
  return Response.json(errorBody(breach), { status: breach.status });
}

/** The error JSON the service sends for a breach. */
export function errorBody(breach: RuleBreach): unknown {
  if (breach.service === "anthropic") {
    return {
      type: "error",
      error: { type: breach.type, message: breach.message },
    };
  }
  return {
    error: {
      message: breach.message,
      type: breach.type,
      param: OPENAI_INPUT_RULES.has(breach.rule)
        ? "input"
        : openAIParam(breach.path),
      code: OPENAI_CODES[breach.rule] ?? null,
    },
  };
}

/** OpenAI's `code` per rule, as the public threads cited in the rules show it. */
const OPENAI_CODES: Readonly<Record<string, string>> = {
  "openai.function_parameters_root": "invalid_function_parameters",
  "openai.function_name_pattern": "invalid_value",
  "openai.tool_choice_exists": "invalid_value",
  "openai.max_completion_tokens": "unsupported_parameter",
  "openai.temperature_default": "unsupported_value",
  "openai.function_strict_schema": "invalid_function_parameters",
};

/** Rules OpenAI reports with `param: "input"`, whatever item broke them. */
const OPENAI_INPUT_RULES: ReadonlySet<string> = new Set([
  "openai.function_call_output_pairing",
  "openai.function_call_answered",
]);

/**
 * OpenAI's `param` for a pointer: `/tools/0/function/parameters` →
 * `tools[0].function.parameters`; `/messages/1/role` → `messages.[1].role`.
 */
function openAIParam(path: string): string | null {
  if (path === "") return null;
  const tokens = path.slice(1).split("/");
  if (tokens[0] === "messages") {
    return tokens.map((t) => /^\d+$/.test(t) ? `[${t}]` : t).join(".");
  }
  return tokens.reduce(
    (out, t) => /^\d+$/.test(t) ? `${out}[${t}]` : out ? `${out}.${t}` : t,
    "",
  );
}
