/**
 * The flags `loom run`, `loom run --resume` and `loom cost` share, and the
 * checks of their values: written once, so the three commands word their
 * errors alike.
 *
 * @module
 */
import type { ContextPolicy } from "../briefing/briefing.ts";
import {
  parseThresholdFlags,
  type PersistenceConfig,
  PersistenceConfigError,
} from "../persist/persistence_config.ts";
import { defined, parseDuration, positiveInteger, required } from "./_args.ts";
import { UsageError } from "./_io.ts";
import {
  parseTestConfinement,
  TEST_FLAG_OPTIONS,
  type TestConfinementFlags,
} from "./_test_flags.ts";

/** The task: given inline, or a file to read when the run starts. */
export type IntentSource = { readonly text: string } | {
  readonly file: string;
};

/** The flags that describe a slice: `loom run` and `loom cost` take them. */
export const SLICE_OPTIONS = {
  workspace: { type: "string" },
  intent: { type: "string" },
  "intent-file": { type: "string" },
  model: { type: "string" },
  test: { type: "string" },
  "test-timeout": { type: "string" },
  "max-steps": { type: "string" },
  "context-policy": { type: "string" },
} as const;

/** The parsed values of {@linkcode SLICE_OPTIONS}. */
export type SliceValues = {
  readonly [K in keyof typeof SLICE_OPTIONS]?: string | undefined;
};

/** The checked values of {@linkcode SLICE_OPTIONS}. */
export interface SliceArguments {
  /** `--workspace DIR`. */
  readonly workspace: string;
  /** `--model SPEC`. */
  readonly model: string;
  /** `--intent TEXT` or `--intent-file F` (read when the command runs). */
  readonly intent: IntentSource;
  /** `--context-policy P`. */
  readonly contextPolicy?: ContextPolicy;
  /** `--max-steps N`. */
  readonly maxSteps?: number;
  /** `--test` and `--test-timeout`. */
  readonly test?: TestCommand;
}

/**
 * Checks the flags that describe a slice; reads nothing.
 *
 * @param values The parsed flags.
 * @returns The checked values; the defaults are the command's.
 * @throws {UsageError} On a missing workspace, model or task, or a
 *   malformed policy, budget or test command.
 */
export function parseSlice(values: SliceValues): SliceArguments {
  return defined({
    workspace: required(values.workspace, "--workspace DIR"),
    model: required(values.model, "--model SPEC"),
    intent: intentSource(values.intent, values["intent-file"]),
    contextPolicy: contextPolicy(values["context-policy"]),
    maxSteps: positiveInteger(values["max-steps"], "--max-steps"),
    test: testCommand(values.test, values["test-timeout"]),
  });
}

/** The flags of `loom run` that also apply to `loom run --resume`. */
export const RESUMABLE_OPTIONS = {
  "context-report": { type: "string" },
  "base-url": { type: "string" },
  "model-timeout": { type: "string" },
  "run-timeout": { type: "string" },
  "persist-config": { type: "string" },
  "persist-threshold": { type: "string", multiple: true },
  store: { type: "string" },
  json: { type: "boolean", default: false },
  ...TEST_FLAG_OPTIONS,
} as const;

/** The parsed values of {@linkcode RESUMABLE_OPTIONS}. */
export interface ResumableValues {
  readonly "context-report"?: string | undefined;
  readonly "base-url"?: string | undefined;
  readonly "model-timeout"?: string | undefined;
  readonly "run-timeout"?: string | undefined;
  readonly "persist-config"?: string | undefined;
  readonly "persist-threshold"?: readonly string[] | undefined;
  readonly store?: string | undefined;
  readonly json: boolean;
  readonly "test-env"?: readonly string[] | undefined;
  readonly "test-network": boolean;
  readonly "unconfined-tests": boolean;
  readonly protect?: readonly string[] | undefined;
  readonly "edit-test-files": boolean;
}

/** The checked values of {@linkcode RESUMABLE_OPTIONS}. */
export interface ResumableArguments {
  /** `--context-report PATH`. */
  readonly contextReport?: string;
  /** `--base-url URL`. */
  readonly baseUrl?: string;
  /** `--model-timeout`: bound of one model call attempt, in milliseconds. */
  readonly modelTimeoutMs?: number;
  /** `--run-timeout`: bound of the whole run, in milliseconds. */
  readonly runTimeoutMs?: number;
  /** `--persist-config F`. */
  readonly persistConfig?: string;
  /** The `--persist-threshold T=N` overrides. */
  readonly persistThresholds?: PersistenceConfig;
  /** `--store URL`: the session is a name in this store. */
  readonly store?: string;
  /** `--json`. */
  readonly json: boolean;
  /** The test's confinement flags (an empty object when none). */
  readonly confinement: TestConfinementFlags;
}

/**
 * Checks the flags `loom run` shares with `--resume`; reads nothing.
 *
 * @param values The parsed flags.
 * @returns The checked values.
 * @throws {UsageError} On a malformed number, duration, threshold or
 *   confinement flag.
 */
export function parseResumable(values: ResumableValues): ResumableArguments {
  const thresholds = values["persist-threshold"];
  return {
    ...defined({
      contextReport: values["context-report"],
      baseUrl: values["base-url"],
      modelTimeoutMs: parseDuration(values["model-timeout"], "--model-timeout"),
      runTimeoutMs: parseDuration(values["run-timeout"], "--run-timeout"),
      persistConfig: values["persist-config"],
      store: values.store,
      persistThresholds: thresholds === undefined
        ? undefined
        : persistThresholds(thresholds),
    }),
    json: values.json,
    confinement: parseTestConfinement(values),
  };
}

function persistThresholds(values: readonly string[]): PersistenceConfig {
  try {
    return parseThresholdFlags(values);
  } catch (error) {
    if (error instanceof PersistenceConfigError) {
      throw new UsageError("usage", error.message);
    }
    throw error;
  }
}

/**
 * The task from `--intent TEXT` or `--intent-file F` (exactly one).
 *
 * @param text The `--intent` value.
 * @param file The `--intent-file` value.
 * @returns The text, or the file to read it from.
 * @throws {UsageError} When both or neither are given.
 */
function intentSource(
  text: string | undefined,
  file: string | undefined,
): IntentSource {
  if (text !== undefined && file !== undefined) {
    throw new UsageError("usage", "Give --intent or --intent-file, not both");
  }
  if (text !== undefined) return { text };
  if (file !== undefined) return { file };
  throw new UsageError(
    "usage",
    "Missing the task: give --intent TEXT or --intent-file F",
  );
}

/**
 * The value of `--context-policy`.
 *
 * @param value The value given.
 * @returns The policy, or `undefined` when none was given.
 * @throws {UsageError} When it is neither `legacy` nor `bounded`.
 */
function contextPolicy(
  value: string | undefined,
): ContextPolicy | undefined {
  if (value === undefined || value === "legacy" || value === "bounded") {
    return value;
  }
  throw new UsageError(
    "usage",
    `Invalid --context-policy ${value}: expected legacy or bounded`,
  );
}

/** The test command of `--test` and `--test-timeout`. */
export interface TestCommand {
  /** Program and arguments. */
  readonly command: string[];
  /** The timeout in milliseconds. */
  readonly timeoutMs: number;
}

/** Default of `--test-timeout`. */
const DEFAULT_TEST_TIMEOUT_MS = 120_000;

/**
 * The test command of `--test "CMD ARGS"` and `--test-timeout DUR`.
 *
 * @param test The `--test` value.
 * @param timeout The `--test-timeout` value.
 * @returns The command, or `undefined` without `--test`.
 * @throws {UsageError} On a bad duration or command, or a timeout without
 *   a test.
 */
function testCommand(
  test: string | undefined,
  timeout: string | undefined,
): TestCommand | undefined {
  const timeoutMs = parseDuration(timeout, "--test-timeout");
  if (test === undefined) {
    if (timeoutMs !== undefined) {
      throw new UsageError("usage", "--test-timeout needs --test");
    }
    return undefined;
  }
  return {
    command: splitCommand(test),
    timeoutMs: timeoutMs ?? DEFAULT_TEST_TIMEOUT_MS,
  };
}

/**
 * Splits a command line on whitespace; single or double quotes group words
 * and a backslash escapes the next character. No other shell syntax.
 *
 * @param text The command line.
 * @returns Program and arguments.
 * @throws {UsageError} On an empty command or an unterminated quote.
 */
export function splitCommand(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote !== null) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"' && i + 1 < text.length) {
        word += text[++i];
      } else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote !== null) {
    throw new UsageError("usage", `Invalid --test ${text}: unterminated quote`);
  }
  if (inWord) words.push(word);
  if (words.length === 0) {
    throw new UsageError("usage", "Invalid --test: empty command");
  }
  return words;
}
