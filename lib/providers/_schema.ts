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
  arguments: z.json(),
  usage: usageSchema.optional(),
});

export const recordingSchema = z.strictObject({
  format: z.literal("loom-recording/1"),
  calls: z.array(callSchema),
});

export type RecordedCall = z.infer<typeof callSchema>;
export type Recording = z.infer<typeof recordingSchema>;

/** Describes the first schema issue as `key: problem`, naming the offending key path. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "unknown problem";
  const path = formatPath(issue.path);
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => formatPath([...issue.path, k]));
    return `unknown key ${keys.join(", ")}`;
  }
  if (issue.code === "invalid_type" && issue.input === undefined) {
    return `missing key ${path}`;
  }
  return `${path === "" ? "(top level)" : path}: ${issue.message}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}
