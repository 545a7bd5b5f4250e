/**
 * Untrusted reply handling shared by the live providers: the body parsed as
 * JSON, checked against a zod schema of the provider's response, the forced
 * call's arguments bounded in depth; every failure a `provider_protocol`
 * error that says what was expected and what came, with at most a short,
 * escaped excerpt of the model's text.
 */

import type { z } from "zod";
import type { ModelReply, ModelUsage } from "./model_provider.ts";
import { mapError } from "../errors.ts";
import { ProviderError } from "./provider_error.ts";

type ProtocolProblem = NonNullable<ProviderError["problem"]>;
import { MAX_REPLY_DEPTH, nestsDeeperThan } from "./reply_depth.ts";

/** Characters of model or server text quoted in a message, at most. */
const EXCERPT_CHARS = 60;

/**
 * Quotes the start of untrusted text as a JSON string (control characters
 * escaped), clipped to a few dozen characters, with the full length when
 * clipped: `"this is not json {"`, `"aaaa…" (10000 characters)`.
 */
export function excerpt(text: string): string {
  if (text.length <= EXCERPT_CHARS) return JSON.stringify(text);
  let head = text.slice(0, EXCERPT_CHARS);
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  return `${JSON.stringify(`${head}…`)} (${text.length} characters)`;
}

/** What a value is, in a few words, without walking into it. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length} items`;
  if (typeof value === "object") {
    const keys = Object.keys(value);
    const shown = keys.slice(0, 5).map((k) => excerpt(k)).join(", ");
    return keys.length === 0
      ? "an empty object"
      : `an object with keys ${shown}${keys.length > 5 ? ", …" : ""}`;
  }
  if (typeof value === "string") return `the string ${excerpt(value)}`;
  return `${typeof value} ${String(value)}`;
}

/** A `provider_protocol` error with its problem and the usage observed. */
export function protocolError(
  problem: ProtocolProblem,
  message: string,
  usage: ModelUsage | null,
): ProviderError {
  return new ProviderError("provider_protocol", message, { problem, usage });
}

/**
 * Parses a response body as JSON and checks it against `schema`.
 *
 * @param what The response kind in messages, e.g. `a chat completion`.
 */
export function parseBody<S extends z.ZodType>(
  text: string,
  schema: S,
  label: string,
  what: string,
): z.infer<S> {
  const json = mapError(() => JSON.parse(text), () =>
    protocolError(
      "malformed_response",
      `${label} answered with a body that is not JSON where ${what} was expected: ${
        excerpt(text)
      }`,
      null,
    ));
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw protocolError(
      "malformed_response",
      `${label} answered with something other than ${what}: ${
        describeIssue(parsed.error, json)
      }`,
      null,
    );
  }
  return parsed.data;
}

/** `choices[0].message: expected object, received null`. */
function describeIssue(error: z.ZodError, input: unknown): string {
  const issue = error.issues[0];
  if (issue === undefined) return "an unknown shape";
  let at: unknown = input;
  let path = "";
  for (const part of issue.path) {
    path += typeof part === "number"
      ? `[${part}]`
      : `${path === "" ? "" : "."}${excerptKey(String(part))}`;
    at = at !== null && typeof at === "object"
      ? (at as Record<PropertyKey, unknown>)[part as PropertyKey]
      : undefined;
  }
  const where = path === "" ? "the body" : path;
  if (issue.code === "invalid_type") {
    const came = at === undefined ? "nothing" : describeValue(at);
    return `${where}: expected ${issue.expected}, got ${came}`;
  }
  return `${where}: ${issue.message.replace(/\.$/, "")}`;
}

function excerptKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(key) ? key : excerpt(key);
}

/**
 * Parses the forced call's arguments (a JSON string) and bounds their depth.
 *
 * @param tool The forced tool's name, for messages.
 */
export function parseArguments(
  text: string,
  tool: string,
  usage: ModelUsage,
): unknown {
  const args = mapError(() => JSON.parse(text), () =>
    protocolError(
      "invalid_arguments",
      `The ${tool} call's arguments are not valid JSON: ${excerpt(text)}`,
      usage,
    ));
  return checkDepth(args, tool, usage);
}

/**
 * The call of the forced tool among a reply's tool calls.
 *
 * @param said How the provider's messages put it: `other(name)` when another
 * tool was called (its name quoted), `none` when no tool was.
 * @throws {ProviderError} `provider_protocol` (`wrong_tool`, `no_tool_call`).
 */
export function forcedCall<C extends { readonly name?: string | undefined }>(
  calls: readonly C[],
  wanted: string,
  usage: ModelUsage,
  said: { readonly other: (name: string) => string; readonly none: string },
): C {
  const forced = calls.find((c) => c.name === wanted);
  if (forced !== undefined) return forced;
  const other = calls[0];
  if (other !== undefined) {
    throw protocolError(
      "wrong_tool",
      said.other(toolName(other.name ?? "")),
      usage,
    );
  }
  throw protocolError("no_tool_call", said.none, usage);
}

/** Returns `args` unless they nest deeper than {@linkcode MAX_REPLY_DEPTH}. */
export function checkDepth(
  args: unknown,
  tool: string,
  usage: ModelUsage | null,
): unknown {
  if (nestsDeeperThan(args, MAX_REPLY_DEPTH)) {
    throw protocolError(
      "too_deep",
      `The ${tool} call's arguments nest deeper than ${MAX_REPLY_DEPTH} levels; send flat arguments as the tool's schema describes`,
      usage,
    );
  }
  return args;
}

/** The tool name a reply called, quoted and clipped for a message. */
function toolName(name: string): string {
  return excerpt(name);
}

/** A provider counter, or `null` when absent or not a non-negative integer. */
export function counter(source: unknown, key: string): number | null {
  if (source === null || typeof source !== "object") return null;
  const value = (source as Record<string, unknown>)[key];
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0
    ? value
    : null;
}

/** What a response said of itself, as its service names it (fields may be absent). */
export interface ResponseFacts {
  readonly id?: string | undefined;
  readonly model?: string | undefined;
  readonly finish_reasons: readonly (string | null | undefined)[];
}

/**
 * The reply of a forced call: its checked arguments, the call's final usage
 * and what the response said of itself (absent facts left out).
 */
export function forcedReply(
  args: unknown,
  usage: ModelUsage,
  facts: ResponseFacts,
): ModelReply {
  const reasons = facts.finish_reasons.filter((r): r is string => r != null);
  return {
    arguments: args,
    usage,
    final_usage: true,
    response: {
      ...(facts.id === undefined ? {} : { id: facts.id }),
      ...(facts.model === undefined ? {} : { model: facts.model }),
      ...(reasons.length === 0 ? {} : { finish_reasons: reasons }),
    },
  };
}
