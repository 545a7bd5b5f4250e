/**
 * Closed zod schemas for references, lookup requests and edit contents
 * (wire-formats.md). Internal: the public API exports plain interfaces.
 *
 * @module
 */
import { z } from "zod";

const offset = z.number().int();

/** `{"kind": "whole"}` and the other selectors, closed. */
export const selectorSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("whole") }),
  z.strictObject({ kind: z.literal("bytes"), start: offset, end: offset }),
  z.strictObject({ kind: z.literal("lines"), start: offset, end: offset }),
  z.strictObject({ kind: z.literal("json_pointer"), pointer: z.string() }),
]);

/** A reference to a stored result or an archived event, closed. */
export const referenceSchema = z.strictObject({
  result: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits"),
  select: selectorSchema,
  rendering: z.enum(["text", "json"]).optional(),
});

/** `{"$list_results": n}` and `{"$list_history": n}` offsets. */
export const listOffsetSchema = z.number().int().min(0);

/** The four lookup request shapes, each a closed one-key object. */
export const lookupRequestSchema = z.union([
  z.strictObject({ $read_result: referenceSchema }),
  z.strictObject({ $list_results: listOffsetSchema }),
  z.strictObject({ $read_history: referenceSchema }),
  z.strictObject({ $list_history: listOffsetSchema }),
]);

/** One edit segment: new literal text or a reference to stored content. */
export const segmentSchema = z.union([
  z.strictObject({ literal: z.string() }),
  z.strictObject({ ref: referenceSchema }),
]);

/** Composed edit contents (segments checked one by one, see edit_contents.ts). */
export const segmentedContentsSchema = z.strictObject({
  segments: z.array(z.unknown()),
});

/**
 * Describes the first problem zod found, for a failure message.
 *
 * @param error A zod error.
 * @returns `at select.start: expected int` style text.
 */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "it does not match the schema";
  const path = issue.path.map(String).join(".");
  const message = issue.message.length > 120
    ? issue.message.slice(0, 120) + "…"
    : issue.message;
  return path === "" ? message : `at ${path.slice(0, 80)}: ${message}`;
}

/** Arguments checked against a tool's schema: the value, or why not. */
export type CheckedArguments<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly message: string };

/**
 * Checks a tool call's (or an action's) arguments against its schema, with
 * the sentence every face refuses them in.
 *
 * @param schema The tool's schema.
 * @param args The arguments (untrusted JSON).
 * @param tool The tool or action, for the message.
 * @returns The parsed value, or the message of an `invalid_arguments` refusal.
 */
export function checkArguments<T>(
  schema: z.ZodType<T>,
  args: unknown,
  tool: string,
): CheckedArguments<T> {
  const parsed = schema.safeParse(args);
  return parsed.success ? { ok: true, value: parsed.data } : {
    ok: false,
    message: `The arguments of ${tool} do not match its schema: ${
      describeIssue(parsed.error)
    }`,
  };
}
