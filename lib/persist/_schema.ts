import { z } from "zod";
import {
  contextReportRequestSchema,
  STOP_REASONS,
} from "../briefing/context_report_schema.ts";
import { SLICE_COUNTERS } from "../slice/run_state.ts";
import { TOOL_DECLARATIONS } from "./tool_policy.ts";
import { SessionError } from "./session_error.ts";

const digest = z.string().regex(
  /^[0-9a-f]{64}$/,
  "must be 64 lowercase hex digits",
);
const resultId = z.string().regex(/^result-[1-9][0-9]*$/, "must be result-<n>");
const count = z.number().int().nonnegative();

const selector = z.union([
  z.strictObject({ kind: z.literal("whole") }),
  z.strictObject({ kind: z.literal("bytes"), start: count, end: count }),
  z.strictObject({ kind: z.literal("lines"), start: count, end: count }),
  z.strictObject({ kind: z.literal("json_pointer"), pointer: z.string() }),
]);

const reference = z.strictObject({
  result: z.string(),
  sha256: digest,
  select: selector,
  rendering: z.enum(["text", "json"]).optional(),
});

/** A descriptor as the session keeps it: compact, never a preview. */
const compactDescriptor = z.strictObject({
  result: resultId.optional(),
  sha256: digest.optional(),
  origin: z.string(),
  capture: z.enum(["complete", "partial"]),
  utf8_bytes: count,
  reference: reference.optional(),
  result_unavailable: z.enum(["store_full", "too_large"]).optional(),
});

const report = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("inspected"),
    files: z.array(z.strictObject({
      path: z.string(),
      descriptor: compactDescriptor.optional(),
      missing: z.literal(true).optional(),
      error: z.strictObject({ code: z.string(), reason: z.string() })
        .optional(),
    })),
  }),
  z.strictObject({
    kind: z.literal("edited"),
    revision: z.string(),
    files: z.array(z.strictObject({
      path: z.string(),
      utf8_bytes: count,
      sha256: digest,
    })),
  }),
  z.strictObject({
    kind: z.literal("tests_run"),
    exit_code: z.number().int(),
    timed_out: z.boolean(),
    tested_revision: z.string().nullable(),
    output: compactDescriptor,
    confinement: z.string(),
  }),
  z.strictObject({
    kind: z.literal("refused"),
    code: z.string(),
    reason: z.string(),
  }),
]);

const record = z.strictObject({
  sequence: z.number().int().positive(),
  action: z.string(),
  arguments: z.unknown(),
  report,
});

/**
 * Where a catalogued body comes from: a file under `tool-results/`, the
 * body itself (a result of an externally bounded tool at or below its
 * threshold), or the workspace (self-bounding tools).
 */
const source = z.union([
  z.strictObject({ persisted: z.string() }),
  z.strictObject({ inline: z.string() }),
  z.strictObject({ reread: z.strictObject({ path: z.string().min(1) }) }),
  // A gateway result whose body the persistence rule left out: the call
  // that produced it, made again on resume only for a read-only,
  // idempotent tool and kept only when the digest matches.
  z.strictObject({
    recall: z.strictObject({
      server: z.string(),
      tool: z.string(),
      part: z.string(),
      arguments: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
]);

const catalogueEntry = z.strictObject({
  sha256: digest,
  origin: z.string(),
  capture: z.enum(["complete", "partial"]),
  utf8_bytes: count,
  tool: z.string(),
  source,
  // Gateway results: when they were stored (for --max-age), and the content
  // block of an image, audio or blob (a whole read answers it).
  stored_at: z.number().optional(),
  media: z.strictObject({
    block: z.record(z.string(), z.unknown()),
    field: z.enum(["data", "resource.blob"]),
  }).optional(),
}).superRefine((entry, context) => {
  // A self-bounding tool's body is never stored, not even inline.
  const declared = Object.hasOwn(TOOL_DECLARATIONS, entry.tool)
    ? TOOL_DECLARATIONS[entry.tool]
    : undefined;
  if (
    declared !== undefined && !Number.isFinite(declared.maxResultSizeChars) &&
    !("reread" in entry.source)
  ) {
    context.addIssue({
      code: "custom",
      path: ["source"],
      message: `must be reread: results of ${entry.tool} are never stored`,
    });
  }
});

const lastTurn = z.strictObject({
  sequence: count,
  phase: z.enum(["selection", "arguments"]),
  candidates: z.array(z.string()),
  notes: z.array(z.string()),
  lookups: z.array(z.unknown()),
  retired: count,
  results: count,
});

/** A counter name as the journal writes it: `modelCalls` → `model_calls`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

const counters = z.strictObject(
  Object.fromEntries(
    SLICE_COUNTERS.map((name) => [
      snakeCase(name),
      // Journals written before the counter existed read as 0.
      name === "argumentsReparsed"
        ? z.number().nonnegative().default(0)
        : z.number().nonnegative(),
    ]),
  ),
);

const overrides = z.record(z.string(), z.number().positive());

/** The format tag of a session journal's header. */
export const JOURNAL_FORMAT = "loom-journal/1";

/** The first record of a slice's session: what it runs and where. */
export const headerSchema = z.strictObject({
  seq: z.literal(0),
  type: z.literal("header"),
  format: z.literal(JOURNAL_FORMAT),
  kind: z.literal("slice").optional(),
  id: z.string().min(1),
  session: z.string().min(1),
  workspace: z.string().min(1),
  intent: z.string(),
  policy: z.enum(["legacy", "bounded"]),
  model: z.string().min(1),
  test: z.strictObject({
    command: z.array(z.string()).min(1),
    timeout_ms: z.number().int().positive(),
  }).nullable(),
  max_steps: z.number().int().positive(),
  overrides,
});

/** The header record as parsed. */
export type HeaderRecord = z.infer<typeof headerSchema>;

/**
 * The first record of an MCP server's session (`loom mcp`, the gateway):
 * the same format, with the server's root instead of a slice's run; `null`
 * for the SDK adapters' store, which serves no workspace.
 */
export const mcpHeaderSchema = z.strictObject({
  seq: z.literal(0),
  type: z.literal("header"),
  format: z.literal(JOURNAL_FORMAT),
  kind: z.literal("mcp"),
  id: z.string().min(1),
  session: z.string().min(1),
  root: z.string().min(1).nullable(),
});

/** An MCP session's header as parsed. */
export type McpHeaderRecord = z.infer<typeof mcpHeaderSchema>;

/** The header format of MCP sessions written before one format served all. */
export const OLD_MCP_FORMAT = "loom-mcp-session/1";

/** A later record: a resume with a new budget or new thresholds. */
const settingsSchema = z.strictObject({
  seq: z.number().int().positive(),
  type: z.literal("settings"),
  max_steps: z.number().int().positive(),
  overrides,
});

/** A step record: the state after an acknowledged step, new items only. */
const stepSchema = z.strictObject({
  seq: z.number().int().positive(),
  type: z.literal("step"),
  counters,
  revision: z.string().nullable(),
  notes: z.array(z.string()),
  last_turn: lastTurn.nullable(),
  stop: z.enum(STOP_REASONS).nullable(),
  records: z.array(record),
  requests: z.array(contextReportRequestSchema),
  results: z.record(resultId, catalogueEntry),
});

/** Any record after the header. */
export const laterSchema = z.discriminatedUnion("type", [
  settingsSchema,
  stepSchema,
]);

/** A record of an MCP session after the header: results it stored. */
export const mcpResultsSchema = z.strictObject({
  seq: z.number().int().positive(),
  type: z.literal("results"),
  results: z.record(resultId, catalogueEntry),
});

/** An MCP session's results record as parsed. */
export type McpResultsRecord = z.infer<typeof mcpResultsSchema>;

/** A record after the header, as parsed. */
export type LaterRecord = z.infer<typeof laterSchema>;
/** A step record as parsed. */
export type StepRecord = z.infer<typeof stepSchema>;
/** One entry of the result catalogue. */
export type CatalogueEntry = z.infer<typeof catalogueEntry>;
/** One action record as the journal keeps it. */
export type JournalActionRecord = z.infer<typeof record>;

/** The closed schema of a persistence config file. */
export const persistenceConfigSchema = z.strictObject({
  maxResultSizeChars: z.record(
    z.string(),
    z.number().positive("must be a positive number"),
  ),
});

/** Names the first problem of a zod error: the key path and what is wrong. */
export function describeIssue(error: z.ZodError): string {
  // An unknown key explains more than the missing key it probably replaces.
  const issue = error.issues.find((i) => i.code === "unrecognized_keys") ??
    error.issues[0];
  if (issue === undefined) return "unknown problem";
  const path = formatPath(issue.path);
  if (issue.code === "unrecognized_keys") {
    return `unknown key ${
      issue.keys.map((k) => formatPath([...issue.path, k])).join(", ")
    }`;
  }
  if (issue.code === "invalid_type" && issue.message.endsWith("undefined")) {
    return `missing key ${path}`;
  }
  return `${path === "" ? "(top level)" : path}: ${issue.message}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string" && /^[A-Za-z_$][\w$]*$/.test(part)) {
      out += out === "" ? part : `.${part}`;
    } else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

/**
 * A journal record checked against its schema.
 *
 * @throws {SessionError} `session_invalid`, naming the file and line.
 */
export function checkedRecord<T>(
  schema: z.ZodType<T>,
  value: unknown,
  file: string,
  line: number,
): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new SessionError(
    "session_invalid",
    `Session journal ${file} is invalid at line ${line}: ${
      describeIssue(parsed.error)
    }`,
    { file, line },
  );
}
