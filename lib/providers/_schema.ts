/**
 * Closed zod schema of a `loom-recording/1` file (wire-formats.md "Recording").
 *
 * @module
 */

import { z } from "zod";

const counter = z.number().int().nonnegative().nullable().optional();

const usageSchema = z.strictObject({
  input_tokens: counter,
  output_tokens: counter,
  cache_read_tokens: counter,
  cache_write_tokens: counter,
});

const callSchema = z.strictObject({
  phase: z.enum(["selection", "arguments"]),
  tool: z.enum(["select_action", "action_arguments"]),
  // Any JSON value (the file came through JSON.parse); not z.json(), which
  // recurses and would overflow the stack on deeply nested arguments.
  arguments: z.unknown(),
  usage: usageSchema.optional(),
});

export const recordingSchema = z.strictObject({
  format: z.literal("loom-recording/1"),
  calls: z.array(callSchema),
});

export type RecordedCall = z.infer<typeof callSchema>;
export type Recording = z.infer<typeof recordingSchema>;

/** Describes the first schema issue as `key: problem`, naming the offending key path. */
export function describeIssue(error: z.ZodError, input: unknown): string {
  const issue = error.issues[0];
  if (issue === undefined) return "unknown problem";
  const path = formatPath(issue.path);
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => formatPath([...issue.path, k]));
    return `unknown key ${keys.join(", ")}`;
  }
  if (isMissing(input, issue.path)) return `missing key ${path}`;
  return `${path === "" ? "(top level)" : path}: ${issue.message}`;
}

/** Whether the path's last key is absent from its (present) parent object. */
function isMissing(input: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  let parent: unknown = input;
  for (const part of path.slice(0, -1)) {
    if (parent === null || typeof parent !== "object") return false;
    parent = (parent as Record<PropertyKey, unknown>)[part];
  }
  if (parent === null || typeof parent !== "object") return false;
  return !Object.hasOwn(parent, path[path.length - 1] as PropertyKey);
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}
