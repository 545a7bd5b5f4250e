/**
 * Checking a call's arguments against the tool's `inputSchema` before the
 * upstream sees them (`call_tool`), with failures the model can act on in
 * one step: each failing path and what was expected there.
 *
 * The schema comes from an upstream, so it is hostile: it is compiled by
 * ajv (JSON Schema 2020-12; a root `$schema` naming another draft is
 * checked as 2020-12, as the services do), with `pattern` run by RE2
 * (`re2js`, linear time, so no pattern can stall the gateway), formats not
 * checked, and the compiled check kept per schema object. A schema ajv
 * cannot compile (or over 256 KiB of JSON, too costly to compile on the
 * gateway's thread) is not held against the call: the arguments go to the
 * upstream unchecked, which checks them itself (the gateway logs it once).
 *
 * @module
 */
import Ajv2020Module from "ajv/dist/2020.js";
import { RE2JS } from "re2js";

/** A compiled check: the failures, or none. */
type Check = (args: unknown) => ArgumentFailure[];

/** One way the arguments miss the schema. */
export interface ArgumentFailure {
  /** RFC 6901 pointer into the arguments (`""` for the arguments object). */
  readonly path: string;
  /** What was expected there. */
  readonly expected: string;
}

/** The answer of {@linkcode checkArguments}. */
export type ArgumentCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly failures: readonly ArgumentFailure[] }
  | { readonly ok: "unchecked"; readonly why: string };

interface AjvError {
  readonly instancePath: string;
  readonly keyword: string;
  readonly message?: string;
  readonly params: Record<string, unknown>;
}

interface AjvValidate {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

interface Ajv {
  compile(schema: unknown): AjvValidate;
}

/** Most failures named in one answer. */
const MAX_FAILURES = 20;
/**
 * Largest schema compiled, in characters of JSON: ajv compiles on the
 * gateway's thread, so a hostile upstream's huge schema would hold every
 * other call; a larger one is left to the upstream.
 */
const MAX_SCHEMA_CHARS = 256 * 1024;

const compiled = new WeakMap<object, Check | { why: string }>();

/** An RE2 engine in the shape ajv's `code.regExp` option takes. */
function re2(
  pattern: string,
  flags: string,
): { test(s: string): boolean; toString(): string } {
  const regex = RE2JS.compile(
    pattern,
    flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0,
  );
  return {
    test: (s: string) => regex.test(s),
    // ajv keys its compiled patterns by this.
    toString: () => `/${pattern}/${flags}`,
  };
}
re2.code = "re2";

function newAjv(): Ajv {
  // The CommonJS module's export is the class (with a `default` alias).
  const module = Ajv2020Module as unknown as {
    default?: new (options: object) => Ajv;
  };
  const Ajv2020 = (module.default ?? module) as new (options: object) => Ajv;
  return new Ajv2020({
    strict: false,
    validateFormats: false,
    allErrors: true,
    code: { regExp: re2 },
  });
}

function compile(schema: Record<string, unknown>): Check | { why: string } {
  // Root "$schema" and "$id" are left out: ajv holds only 2020-12, and a
  // fresh instance per schema keeps hostile "$id"s from colliding.
  const { $schema: _draft, $id: _id, ...rest } = schema;
  let validate: AjvValidate;
  try {
    const size = JSON.stringify(rest).length;
    if (size > MAX_SCHEMA_CHARS) {
      return {
        why:
          `the schema is ${size} characters of JSON, over the ${MAX_SCHEMA_CHARS} checked`,
      };
    }
    validate = newAjv().compile(rest);
  } catch (error) {
    return {
      why: String(error instanceof Error ? error.message : error).slice(0, 200),
    };
  }
  return (args) => {
    if (validate(args)) return [];
    return (validate.errors ?? []).slice(0, MAX_FAILURES).map(failureOf);
  };
}

function failureOf(error: AjvError): ArgumentFailure {
  const p = error.params;
  switch (error.keyword) {
    case "required":
      return {
        path: `${error.instancePath}/${pointerToken(p.missingProperty)}`,
        expected: "a value: the property is required",
      };
    case "additionalProperties":
      return {
        path: `${error.instancePath}/${pointerToken(p.additionalProperty)}`,
        expected: "nothing: the schema allows no such property",
      };
    case "type":
      return {
        path: error.instancePath,
        expected: `a value of type ${
          Array.isArray(p.type) ? p.type.join(" or ") : String(p.type)
        }`,
      };
    default:
      return {
        path: error.instancePath,
        expected: `a value that ${
          String(error.message ?? error.keyword).replace(/^must /, "does: ")
        }`,
      };
  }
}

function pointerToken(value: unknown): string {
  return String(value).replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * Checks arguments against an input schema.
 *
 * @param schema The tool's `inputSchema` (untrusted).
 * @param args The arguments (untrusted).
 * @returns `ok: true`, the failures, or why the schema could not be used.
 *
 * @example
 * ```ts
 * import { checkArguments } from "./argument_check.ts";
 * import assert from "node:assert/strict";
 * const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };
 * assert.deepEqual(checkArguments(schema, { n: 1 }), { ok: true });
 * const refused = checkArguments(schema, { n: "1", x: 2 });
 * assert.equal(refused.ok, false);
 * assert.deepEqual(refused.ok === false && refused.failures.map((f) => f.path), ["/x", "/n"]);
 * ```
 */
export function checkArguments(
  schema: Record<string, unknown>,
  args: unknown,
): ArgumentCheck {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = compile(schema);
    compiled.set(schema, check);
  }
  if (typeof check !== "function") return { ok: "unchecked", why: check.why };
  let failures: ArgumentFailure[];
  try {
    failures = check(args);
  } catch (error) {
    return {
      ok: "unchecked",
      why: String(error instanceof Error ? error.message : error).slice(0, 200),
    };
  }
  return failures.length === 0 ? { ok: true } : { ok: false, failures };
}
