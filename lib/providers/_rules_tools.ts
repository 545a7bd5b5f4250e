/**
 * The rules on tool definitions and on the forced `tool_choice`, each stated
 * once: Anthropic's custom tools, and OpenAI's functions, whose rules are the
 * same in Chat Completions (`tools[i].function`) and the Responses API
 * (`tools[i]`) and are applied to both shapes from one statement.
 *
 * Each rule cites where the service documents it, or a public thread where
 * its exact error message appears.
 *
 * @module
 */
import Ajv2020Module from "ajv/dist/2020.js";
import {
  breach,
  dotted,
  type Json,
  pointer,
  type RuleBreach,
  type Service,
  type Tokens,
} from "./_rules_json.ts";
import { isPlainObject } from "../plain_object.ts";

// ---------------------------------------------------------------------------
// What a tool's schema must be (the conditions; each service words them)

interface MetaValidator {
  validateSchema(schema: unknown): boolean | Promise<unknown>;
}

let metaValidator: MetaValidator | undefined;

/** Whether `schema` is valid under the JSON Schema 2020-12 meta-schema. */
function validDraft202012(schema: unknown): boolean {
  if (metaValidator === undefined) {
    // The CommonJS module's export is the class (with a `default` alias).
    const module = Ajv2020Module as unknown as {
      default?: new (options: object) => MetaValidator;
    };
    const Ajv2020 = (module.default ?? module) as new (
      options: object,
    ) => MetaValidator;
    // `strict: false`: unknown keywords are allowed by the meta-schema (and
    // by the services); only what the meta-schema refuses is refused.
    metaValidator = new Ajv2020({ strict: false, validateFormats: false });
  }
  // A root "$schema" naming another draft (draft-07 is what zod and the MCP
  // SDK emit, and what hosts pass on) is not refused by the services; ajv
  // would throw on a meta-schema it does not hold, so the schema is checked
  // against 2020-12 whatever it declares.
  const checked = isPlainObject(schema) && "$schema" in schema
    ? Object.fromEntries(
      Object.entries(schema).filter(([key]) => key !== "$schema"),
    )
    : schema;
  return metaValidator.validateSchema(checked) === true;
}

/**
 * What is wrong with the root of a tool's schema, if anything: not an object
 * schema (`type: "object"`), or one of the service's forbidden keywords at
 * the top level.
 */
function rootProblem(
  schema: unknown,
  forbidden: readonly string[],
): "not_object" | "forbidden_keyword" | undefined {
  if (!isPlainObject(schema) || schema["type"] !== "object") {
    return "not_object";
  }
  if (forbidden.some((k) => k in schema)) return "forbidden_keyword";
  return undefined;
}

/** The root keywords Anthropic refuses in `input_schema`. */
const ANTHROPIC_ROOT_FORBIDDEN = ["oneOf", "allOf", "anyOf"] as const;
/** The root keywords OpenAI refuses in a function's `parameters`. */
const OPENAI_ROOT_FORBIDDEN = [
  "oneOf",
  "anyOf",
  "allOf",
  "enum",
  "not",
] as const;

/** The first strict-mode breach of an object schema, depth first. */
function strictProblem(
  schema: unknown,
  context: string[],
): { context: string[]; text: string } | undefined {
  if (!isPlainObject(schema)) return undefined;
  const isObjectSchema = schema["type"] === "object" ||
    (Array.isArray(schema["type"]) && schema["type"].includes("object")) ||
    isPlainObject(schema["properties"]);
  if (isObjectSchema) {
    if (schema["additionalProperties"] !== false) {
      return {
        context,
        text:
          "'additionalProperties' is required to be supplied and to be false.",
      };
    }
    const properties = isPlainObject(schema["properties"])
      ? Object.keys(schema["properties"])
      : [];
    const required = new Set(
      (Array.isArray(schema["required"]) ? schema["required"] : []).filter((
        r,
      ) => typeof r === "string"),
    );
    const missing = properties.find((p) => !required.has(p));
    if (missing !== undefined) {
      return {
        context,
        text:
          `'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`,
      };
    }
    for (const p of properties) {
      const inner = strictProblem(
        (schema["properties"] as Json)[p],
        [...context, "properties", p],
      );
      if (inner !== undefined) return inner;
    }
  }
  if (isPlainObject(schema["items"])) {
    const inner = strictProblem(schema["items"], [...context, "items"]);
    if (inner !== undefined) return inner;
  }
  for (const key of ["anyOf", "$defs", "definitions"] as const) {
    const value = schema[key];
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((v, n) => [String(n), v])
      : isPlainObject(value)
      ? Object.entries(value)
      : [];
    for (const [k, v] of entries) {
      const inner = strictProblem(v, [...context, key, k]);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Anthropic's custom tools

/**
 * The rules on Anthropic's custom tool `tools[i]`: its name, and its
 * `input_schema`'s type, root and meta-schema.
 */
export function anthropicTool(tool: Json, i: number): RuleBreach[] {
  const breaches: RuleBreach[] = [];
  const name = tool["name"];
  // Tool names match ^[a-zA-Z0-9_-]{1,64}$.
  // Source: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
  // ("name: must match the regex ^[a-zA-Z0-9_-]{1,64}$"); message seen in
  // https://github.com/inngest/agent-kit/pull/108 and
  // https://github.com/apify/tester-mcp-client/issues/11
  if (typeof name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    breaches.push(breach(
      "anthropic",
      "tool_name_pattern",
      pointer("tools", i, "name"),
      `${
        dotted("tools", i, "custom", "name")
      }: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`,
    ));
  }
  const schema = tool["input_schema"];
  const at = pointer("tools", i, "input_schema");
  const where = dotted("tools", i, "custom", "input_schema");
  const problem = rootProblem(schema, ANTHROPIC_ROOT_FORBIDDEN);
  // `input_schema` is a JSON Schema object of type "object".
  // Source: https://docs.anthropic.com/en/api/messages (tools.input_schema.type:
  // "object", required). The exact refusal is not quoted in a public thread;
  // this message follows the wording of the service's other field checks
  // ("tools.0.custom.name: String should match pattern …").
  if (problem === "not_object") {
    breaches.push(breach(
      "anthropic",
      "tool_schema_type",
      isPlainObject(schema) ? `${at}/type` : at,
      `${where}.type: Input should be 'object'`,
    ));
    return breaches;
  }
  // No oneOf/allOf/anyOf at the root of input_schema.
  // Message seen in https://github.com/anthropics/claude-code/issues/5319,
  // https://github.com/anthropics/claude-code/issues/5973 and
  // https://github.com/mobile-next/mobile-mcp/issues/344 (the service refuses
  // it though the tool-use docs do not list it).
  if (problem === "forbidden_keyword") {
    breaches.push(breach(
      "anthropic",
      "tool_schema_root",
      at,
      `${where}: input_schema does not support oneOf, allOf, or anyOf at the top level`,
    ));
  }
  // input_schema is valid JSON Schema 2020-12 (the service checks the meta-schema).
  // Source: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
  // (input_schema: "A JSON Schema object"); message seen in
  // https://github.com/acomagu/vscode-as-mcp-server/issues/6
  if (!validDraft202012(schema)) {
    breaches.push(breach(
      "anthropic",
      "tool_schema_draft_2020_12",
      at,
      `${where}: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://docs.anthropic.com/en/docs/tool-use.`,
    ));
  }
  return breaches;
}

// ---------------------------------------------------------------------------
// OpenAI's functions: one statement for Chat Completions and Responses

/** Where a function's fields sit in one of OpenAI's two body shapes. */
export interface FunctionShape {
  /** The function's own path: `tools/i/function` (Chat) or `tools/i` (Responses). */
  readonly at: Tokens;
  /** How the service's messages name it: `tools[i].function` or `tools[i]`. */
  readonly where: string;
  /**
   * Whether `parameters: null` means "no parameters" (Responses, where the
   * Agents SDK sends it) rather than a schema of the wrong type (Chat).
   */
  readonly nullIsAbsent: boolean;
}

/**
 * The rules on an OpenAI function definition (`{name, parameters, strict}`):
 * its name, its parameters' root and, with `strict: true`, the strict-mode
 * schema rules.
 */
export function openAIFunction(fn: Json, shape: FunctionShape): RuleBreach[] {
  const breaches: RuleBreach[] = [];
  const name = fn["name"];
  const where = `${shape.where}.name`;
  // Function names match ^[a-zA-Z0-9_-]+$, at most 64 characters.
  // Source: https://platform.openai.com/docs/api-reference/chat/create
  // (function.name: "a-z, A-Z, 0-9, or contain underscores and dashes, with a
  // maximum length of 64") and
  // https://platform.openai.com/docs/api-reference/responses/create
  // (tools[].name, the same); message seen in https://github.com/brekkylab/ailoy/pull/109
  if (typeof name !== "string" || !/^[a-zA-Z0-9_-]+$/.test(name)) {
    breaches.push(breach(
      "openai",
      "function_name_pattern",
      pointer(...shape.at, "name"),
      `Invalid '${where}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
    ));
  } else if (name.length > 64) {
    breaches.push(breach(
      "openai",
      "function_name_pattern",
      pointer(...shape.at, "name"),
      `Invalid '${where}': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`,
    ));
  }
  const parameters = fn["parameters"];
  if (parameters === undefined || (shape.nullIsAbsent && parameters === null)) {
    return breaches;
  }
  const at = pointer(...shape.at, "parameters");
  // The parameters have type "object" and no oneOf/anyOf/allOf/enum/not at
  // the top level.
  // Source: https://platform.openai.com/docs/guides/function-calling
  // (parameters: "a JSON Schema object"); messages seen in
  // https://github.com/nspady/google-calendar-mcp/issues/39,
  // https://github.com/chatanywhere/GPT_API_free/issues/403 and, for
  // Responses (param `tools[1].parameters`),
  // https://github.com/kevinwatt/mysql-mcp/issues/5
  const problem = rootProblem(parameters, OPENAI_ROOT_FORBIDDEN);
  if (problem !== undefined) {
    const type =
      isPlainObject(parameters) && typeof parameters["type"] === "string"
        ? parameters["type"]
        : "null";
    breaches.push(breach(
      "openai",
      "function_parameters_root",
      at,
      `Invalid schema for function '${String(name)}': ${
        problem === "not_object"
          ? `schema must be a JSON Schema of 'type: "object"', got 'type: ${type}'.`
          : "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level."
      }`,
    ));
    return breaches;
  }
  // With `strict: true`, every object schema lists every property in
  // `required` and sets `additionalProperties: false`, at every depth.
  // Source: https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
  // ("all fields must be required", "additionalProperties: false must always
  // be set in objects"; function calling with `strict: true` follows the same
  // rules in Chat Completions and Responses); messages seen in
  // https://github.com/kevinwatt/mysql-mcp/issues/5 (required) and
  // https://github.com/lastmile-ai/openai-agents-mcp/issues/2,
  // https://github.com/openai/openai-agents-python/issues/1023 (additionalProperties).
  if (fn["strict"] === true) {
    const strict = strictProblem(parameters, []);
    if (strict !== undefined) {
      breaches.push(breach(
        "openai",
        "function_strict_schema",
        at,
        `Invalid schema for function '${String(name)}': In context=(${
          strict.context.map((c) => `'${c}'`).join(", ")
        }), ${strict.text}`,
      ));
    }
  }
  return breaches;
}

// ---------------------------------------------------------------------------
// The forced tool_choice

/** A `tool_choice` that forces one tool, as a service's body shapes it. */
export interface ForcedChoice {
  /** The tool it names (whatever the body holds there). */
  readonly name: unknown;
  /** The path of that name in the body. */
  readonly path: Tokens;
}

/**
 * A forced `tool_choice` names a tool of the request.
 * Source: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use
 * (`{"type": "tool", "name": …}` forces a tool given in `tools`; message seen
 * in https://github.com/anomalyco/opencode/issues/14710);
 * https://platform.openai.com/docs/api-reference/chat/create and
 * https://platform.openai.com/docs/api-reference/responses/create
 * (`{"type": "function", …}` "forces the model to call that tool"). The
 * wording of OpenAI's refusal is not published in a public thread; that
 * message is Loom's.
 */
export function forcedToolExists(
  service: Service,
  choice: ForcedChoice | undefined,
  names: ReadonlySet<string>,
): RuleBreach[] {
  if (choice === undefined) return [];
  const { name } = choice;
  if (typeof name === "string" && names.has(name)) return [];
  return [breach(
    service,
    "tool_choice_exists",
    pointer(...choice.path),
    service === "anthropic"
      ? `Tool '${String(name)}' not found in provided tools`
      : `Invalid value for 'tool_choice': no function named '${
        String(name)
      }' is in 'tools'.`,
  )];
}
