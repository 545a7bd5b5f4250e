/**
 * TypeScript types from JSON Schemas, for a model to read: `type`,
 * `properties` and `required`, `items` and tuples, `enum` and `const`,
 * `anyOf`/`oneOf` (unions), `allOf` (intersections), `nullable`, and local
 * `$ref`s (`#`, `#/$defs/…`, `#/definitions/…`) resolved in place. What it
 * cannot say becomes `unknown`. Schemas are untrusted: any value is
 * accepted, a reference cycle ends in `unknown`, and nesting deeper than
 * `maxDepth` or work past `maxNodes` (a schema of a million properties, a
 * chain of references that doubles at each step) ends in `unknown` too, with
 * `exhausted` set so the caller can try again shallower.
 *
 * @module
 */
import { docComment } from "./_doc_comment.ts";
import { isPlainObject } from "../plain_object.ts";

/** Limits of one rendering. */
export interface TypeLimits {
  /** Nesting depth past which a type is `unknown`. */
  readonly maxDepth: number;
  /** Schema nodes visited past which every type is `unknown`. */
  readonly maxNodes: number;
}

/** A rendered type: its text, and how tightly it binds. */
interface Rendered {
  readonly text: string;
  /** 0 a union, 1 an intersection, 2 anything else. */
  readonly prec: 0 | 1 | 2;
}

const atom = (text: string): Rendered => ({ text, prec: 2 });
const UNKNOWN = atom("unknown");
const NEVER = atom("never");

/** Properties shown per object; the rest are an index signature. */
const MAX_PROPERTIES = 200;
/** Members of an `enum` shown as literals; a longer enum is its base type. */
const MAX_ENUM = 64;
/** Characters of a property's description. */
export const PROPERTY_DOC_CHARS = 1000;
/** An object type with no comment fits one line up to this width. */
const INLINE_WIDTH = 80;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

type Schema = Record<string, unknown>;

/** One rendering of types under one root schema (for its `$ref`s). */
export class SchemaTypes {
  readonly #root: unknown;
  readonly #limits: TypeLimits;
  readonly #active: string[] = [];
  #nodes = 0;
  #exhausted = false;

  constructor(root: unknown, limits: TypeLimits) {
    this.#root = root;
    this.#limits = limits;
  }

  /** Whether some type was cut to `unknown` by a limit. */
  get exhausted(): boolean {
    return this.#exhausted;
  }

  /** The type of `schema`, multi-line parts indented by `indent`. */
  type(schema: unknown, indent: string): string {
    return this.#render(schema, 0, indent).text;
  }

  /** The schema itself, or the target of its top-level `$ref`. */
  resolved(schema: unknown): unknown {
    if (isPlainObject(schema) && typeof schema.$ref === "string") {
      return resolveRef(schema.$ref, this.#root) ?? schema;
    }
    return schema;
  }

  /** The description (or title) of `schema` or of the target of its `$ref`. */
  description(schema: unknown): string | undefined {
    for (const s of [schema, this.resolved(schema)]) {
      if (!isPlainObject(s)) continue;
      if (typeof s.description === "string" && s.description.trim() !== "") {
        return s.description;
      }
      if (typeof s.title === "string" && s.title.trim() !== "") return s.title;
    }
    return undefined;
  }

  #spend(): boolean {
    if (++this.#nodes > this.#limits.maxNodes) this.#exhausted = true;
    return !this.#exhausted;
  }

  #render(schema: unknown, depth: number, indent: string): Rendered {
    if (!this.#spend()) return UNKNOWN;
    if (depth > this.#limits.maxDepth) {
      this.#exhausted = true;
      return UNKNOWN;
    }
    if (schema === false) return NEVER;
    if (!isPlainObject(schema)) return UNKNOWN;
    if ("const" in schema) return literal(schema.const) ?? UNKNOWN;
    if (Array.isArray(schema.enum)) return this.#enum(schema.enum);
    const parts: Rendered[] = [];
    if (typeof schema.$ref === "string") {
      parts.push(this.#ref(schema.$ref, depth, indent));
    }
    const base = this.#base(schema, depth, indent);
    if (base !== undefined) parts.push(base);
    if (Array.isArray(schema.allOf)) {
      for (const s of schema.allOf) {
        parts.push(this.#render(s, depth + 1, indent));
      }
    }
    for (const key of ["anyOf", "oneOf"] as const) {
      const list = schema[key];
      if (!Array.isArray(list)) continue;
      parts.push(union(list.map((s) => this.#render(s, depth + 1, indent))));
    }
    const type = parts.length === 0 ? UNKNOWN : intersection(parts);
    return schema.nullable === true ? union([type, atom("null")]) : type;
  }

  #ref(ref: string, depth: number, indent: string): Rendered {
    const target = resolveRef(ref, this.#root);
    if (target === undefined || this.#active.includes(ref)) return UNKNOWN;
    this.#active.push(ref);
    try {
      return this.#render(target, depth + 1, indent);
    } finally {
      this.#active.pop();
    }
  }

  #enum(values: readonly unknown[]): Rendered {
    if (values.length > MAX_ENUM) {
      const kinds = new Set(values.slice(0, MAX_ENUM * 4).map(kindOf));
      return union([...kinds].sort().map(atom));
    }
    const members: Rendered[] = [];
    for (const value of values) {
      if (!this.#spend()) return UNKNOWN;
      members.push(literal(value) ?? UNKNOWN);
    }
    return union(members);
  }

  #base(schema: Schema, depth: number, indent: string): Rendered | undefined {
    let types = typeof schema.type === "string"
      ? [schema.type]
      : Array.isArray(schema.type)
      ? schema.type.filter((t): t is string => typeof t === "string")
      : [];
    if (types.length === 0) {
      if (
        isPlainObject(schema.properties) || "additionalProperties" in schema
      ) {
        types = ["object"];
      } else if ("items" in schema || "prefixItems" in schema) {
        types = ["array"];
      } else return undefined;
    }
    const members = [...new Set(types)].map((type): Rendered => {
      switch (type) {
        case "string":
        case "boolean":
        case "null":
          return atom(type);
        case "number":
        case "integer":
          return atom("number");
        case "array":
          return this.#array(schema, depth, indent);
        case "object":
          return this.#object(schema, depth, indent);
        default:
          return UNKNOWN;
      }
    });
    return union(members);
  }

  #array(schema: Schema, depth: number, indent: string): Rendered {
    const tuple = Array.isArray(schema.prefixItems)
      ? schema.prefixItems
      : Array.isArray(schema.items)
      ? schema.items
      : undefined;
    if (tuple !== undefined) {
      const items = tuple.slice(0, MAX_PROPERTIES).map((s) =>
        this.#render(s, depth + 1, indent).text
      );
      return atom(`[${items.join(", ")}]`);
    }
    if (!("items" in schema)) return atom("unknown[]");
    const item = this.#render(schema.items, depth + 1, indent);
    return atom(item.prec < 2 ? `(${item.text})[]` : `${item.text}[]`);
  }

  #object(schema: Schema, depth: number, indent: string): Rendered {
    const inner = `${indent}  `;
    const required = new Set(
      Array.isArray(schema.required)
        ? schema.required.filter((r) => typeof r === "string")
        : [],
    );
    const properties = isPlainObject(schema.properties)
      ? schema.properties
      : {};
    const members: { doc: string; line: string }[] = [];
    let more = false;
    for (const name in properties) {
      if (!Object.hasOwn(properties, name)) continue;
      if (members.length === MAX_PROPERTIES || !this.#spend()) {
        more = true;
        break;
      }
      const sub = properties[name];
      const type = this.#render(sub, depth + 1, inner).text;
      const description = this.description(sub);
      const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
      members.push({
        doc: description === undefined
          ? ""
          : docComment(description, inner, PROPERTY_DOC_CHARS),
        line: `${key}${required.has(name) ? "" : "?"}: ${type};`,
      });
    }
    const extra = schema.additionalProperties;
    if (more) {
      members.push({ doc: "", line: "[key: string]: unknown;" });
    } else if (members.length === 0 && extra !== false) {
      if (isPlainObject(extra) && Object.keys(extra).length > 0) {
        const value = this.#render(extra, depth + 1, inner).text;
        members.push({ doc: "", line: `[key: string]: ${value};` });
      } else if (!isPlainObject(schema.properties)) {
        members.push({ doc: "", line: "[key: string]: unknown;" });
      }
    }
    if (members.length === 0) return atom("{}");
    const oneLine = `{ ${members.map((m) => m.line).join(" ")} }`;
    if (
      members.every((m) => m.doc === "") && !oneLine.includes("\n") &&
      indent.length + oneLine.length <= INLINE_WIDTH
    ) return atom(oneLine.replace(/;( })$/, "$1"));
    const body = members.map((m) => `${m.doc}${inner}${m.line}\n`).join("");
    return atom(`{\n${body}${indent}}`);
  }
}

/** The target of a local `$ref` (`#` or a JSON Pointer fragment), if any. */
function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith("#")) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (fragment === "") return root;
  if (!fragment.startsWith("/")) return undefined;
  let node = root;
  for (const raw of fragment.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(node) && /^(0|[1-9][0-9]{0,8})$/.test(key)) {
      node = node[Number(key)];
    } else if (isPlainObject(node) && Object.hasOwn(node, key)) {
      node = node[key];
    } else return undefined;
  }
  return node;
}

/** The base type of a JSON value. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  const kind = typeof value;
  return kind === "string" || kind === "number" || kind === "boolean"
    ? kind
    : "unknown";
}

/** A literal type for a JSON scalar; `undefined` for anything else. */
function literal(value: unknown): Rendered | undefined {
  if (typeof value === "string") return atom(JSON.stringify(value));
  if (typeof value === "number") {
    return atom(Number.isFinite(value) ? String(value) : "number");
  }
  if (typeof value === "boolean" || value === null) return atom(String(value));
  return undefined;
}

function union(members: readonly Rendered[]): Rendered {
  const texts = new Set<string>();
  for (const m of members) {
    if (m.text === "unknown") return UNKNOWN;
    if (m.text !== "never") texts.add(m.text);
  }
  if (texts.size === 0) return NEVER;
  if (texts.size === 1) return members.find((m) => texts.has(m.text))!;
  return { text: [...texts].join(" | "), prec: 0 };
}

function intersection(members: readonly Rendered[]): Rendered {
  const kept = new Map<string, Rendered>();
  for (const m of members) if (m.text !== "unknown") kept.set(m.text, m);
  if (kept.size === 0) return UNKNOWN;
  if (kept.size === 1) return [...kept.values()][0]!;
  const texts = [...kept.values()].map((m) =>
    m.prec === 0 ? `(${m.text})` : m.text
  );
  return { text: texts.join(" & "), prec: 1 };
}
