/**
 * `loom run`: drives a model through a governed slice over a workspace.
 *
 * @module
 */
import { runSlice } from "../slice/run.ts";
import {
  type RunOptions,
  type SliceRequest,
  SliceRequestError,
  type SliceTest,
} from "../slice/request.ts";
import type { SliceOutcome } from "../slice/outcome.ts";
import { displayText } from "../display.ts";
import {
  fsReason,
  parseArguments,
  parseDuration,
  positiveInteger,
} from "./_args.ts";
import { checkBeforeStart } from "./_preflight.ts";
import {
  sandboxOption,
  TEST_FLAG_OPTIONS,
  TEST_FLAGS_HELP,
  testConfinement,
} from "./_test_flags.ts";
import { type CliIo, ExitCode, exitCodeOf, UsageError } from "./_io.ts";

export { parseDuration };
import { type StartupReport, startupReport } from "./_failure_report.ts";
import {
  isResume,
  newSessionHooks,
  prepareResume,
  RESUME_HELP,
} from "./_session_run.ts";

/** The help text of `loom run`. */
export const RUN_HELP =
  `Usage: loom run --workspace DIR (--intent TEXT | --intent-file F) --model SPEC [options]

Runs a governed slice: the model inspects and edits files in DIR and runs the
test command until the tests validate its latest edit, or a budget runs out.

Options:
  --workspace DIR          The workspace the slice may read and write
  --intent TEXT            The task
  --intent-file F          Read the task from file F instead
  --model SPEC             recorded:PATH, anthropic:MODEL or openai:MODEL
  --base-url URL           Provider API base URL (OpenAI-compatible servers)
  --test "CMD ARGS"        Test command, run in DIR (split on spaces; quotes group)
  --test-timeout DUR       Test timeout: 120s (default), 2m, 500ms, or seconds
  --model-timeout DUR      Bound of one model call attempt, request to the
                           last byte of the reply (default 120s); a longer
                           Retry-After is not waited for
  --run-timeout DUR        Bound of the whole run; when it runs out the run
                           stops interrupted (resumable with --session)
${TEST_FLAGS_HELP}  --max-steps N            Step budget, refused steps included (default 40)
  --context-policy P       legacy (default) or bounded
  --context-report PATH    Write the JSON context report to PATH
  --record PATH            Write the model's replies as a recording to PATH
                           (replay it offline: --model recorded:PATH, loom cost)
  --session DIR            Persist the run in session DIR (outside DIR of
                           --workspace) after every step; see loom session
  --resume DIR             Continue the stopped slice of session DIR
                           (see loom run --resume DIR --help)
  --persist-config F       JSON file {"maxResultSizeChars": {TOOL: N}}
  --persist-threshold T=N  Persistence threshold of tool T (repeatable): a
                           result of more than N characters goes to
                           DIR/tool-results, a smaller one stays inline in
                           DIR/journal.jsonl (default 30000);
                           repository.inspect is never persisted
  --json                   Print the summary as JSON
  -h, --help               Show this help

Paths resolve against the directory loom was started from (also under
'deno task loom'). Every flag and file is checked before the first effect: a
bad one exits 2 before any session, model call or workspace change.
API keys come from ANTHROPIC_API_KEY or OPENAI_API_KEY.
Progress: one line per step on stderr, and a notice every 5 s while the model
is slow to answer. Summary: stdout.
SIGINT or SIGTERM aborts the model call in flight, writes the context report
(stop interrupted), prints the summary and saves the session; a second signal
exits at once.
Exit codes: 0 completed; 1 stopped without completion; 2 bad usage or bad
input (flags, files, model spec, API key, recording, session path, test
program), nothing done; 3 provider failure after the start, confinement
unavailable or internal failure; 130/143 interrupted by SIGINT/SIGTERM.
`;

const DEFAULT_MAX_STEPS = 40;
const DEFAULT_TEST_TIMEOUT_MS = 120_000;
const DEFAULT_MODEL_TIMEOUT_MS = 120_000;

/** Parsed `loom run` arguments. */
export interface RunArguments {
  readonly workspace: string;
  readonly intent: string;
  readonly model: string;
  readonly baseUrl?: string;
  readonly test?: SliceTest & { readonly command: string[] };
  readonly maxSteps: number;
  /** `--model-timeout`: bound of one model call attempt, in milliseconds. */
  readonly modelTimeoutMs: number;
  /** `--run-timeout`: bound of the whole run, in milliseconds. */
  readonly runTimeoutMs?: number;
  readonly contextPolicy: "legacy" | "bounded";
  readonly contextReport?: string;
  /** `--record PATH`. */
  readonly record?: string;
  readonly json: boolean;
  /** `--session DIR`. */
  readonly session?: string;
  /** `--persist-config F`. */
  readonly persistConfig?: string;
  /** `--persist-threshold T=N` values. */
  readonly persistThresholds?: string[];
}

/**
 * Parses `loom run` arguments (without reading the intent file).
 *
 * @param args Arguments after `run`.
 * @returns The parsed arguments and the intent file to read, if any.
 * @throws {UsageError} On unknown, missing or malformed options.
 */
export function parseRunArguments(
  args: string[],
): { help: true } | {
  help: false;
  parsed: Omit<RunArguments, "intent">;
  intent: { text: string } | { file: string };
} {
  const { values } = parseArguments({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      workspace: { type: "string" },
      intent: { type: "string" },
      "intent-file": { type: "string" },
      model: { type: "string" },
      "base-url": { type: "string" },
      test: { type: "string" },
      "test-timeout": { type: "string" },
      "model-timeout": { type: "string" },
      "run-timeout": { type: "string" },
      ...TEST_FLAG_OPTIONS,
      "max-steps": { type: "string" },
      "context-policy": { type: "string" },
      "context-report": { type: "string" },
      record: { type: "string" },
      session: { type: "string" },
      "persist-config": { type: "string" },
      "persist-threshold": { type: "string", multiple: true },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return { help: true };
  const workspace = required(values.workspace, "--workspace DIR");
  const model = required(values.model, "--model SPEC");
  const intent = intentSource(values.intent, values["intent-file"]);
  const policy = values["context-policy"] ?? "legacy";
  if (policy !== "legacy" && policy !== "bounded") {
    throw new UsageError(
      "usage",
      `Invalid --context-policy ${policy}: expected legacy or bounded`,
    );
  }
  const maxSteps = values["max-steps"] === undefined
    ? DEFAULT_MAX_STEPS
    : positiveInteger(values["max-steps"], "--max-steps");
  const timeoutMs = values["test-timeout"] === undefined
    ? DEFAULT_TEST_TIMEOUT_MS
    : parseDuration(values["test-timeout"], "--test-timeout");
  const modelTimeoutMs = values["model-timeout"] === undefined
    ? DEFAULT_MODEL_TIMEOUT_MS
    : parseDuration(values["model-timeout"], "--model-timeout");
  const runTimeoutMs = values["run-timeout"] === undefined
    ? undefined
    : parseDuration(values["run-timeout"], "--run-timeout");
  if (values["test-timeout"] !== undefined && values.test === undefined) {
    throw new UsageError("usage", "--test-timeout needs --test");
  }
  if (values.session === undefined) {
    for (const flag of ["persist-config", "persist-threshold"] as const) {
      if (values[flag] !== undefined) {
        throw new UsageError(
          "usage",
          `--${flag} needs --session: results are persisted only in a session`,
        );
      }
    }
  }
  const command = values.test === undefined
    ? undefined
    : splitCommand(values.test);
  const confinement = testConfinement(values);
  if (command === undefined && Object.keys(confinement).length > 0) {
    throw new UsageError(
      "usage",
      "--test-env, --test-network, --unconfined-tests, --protect and --edit-test-files need --test",
    );
  }
  return {
    help: false,
    intent,
    parsed: {
      workspace,
      model,
      ...(values["base-url"] === undefined
        ? {}
        : { baseUrl: values["base-url"] }),
      ...(command === undefined
        ? {}
        : { test: { command, timeoutMs, ...confinement } }),
      maxSteps,
      modelTimeoutMs,
      ...(runTimeoutMs === undefined ? {} : { runTimeoutMs }),
      contextPolicy: policy,
      ...(values["context-report"] === undefined
        ? {}
        : { contextReport: values["context-report"] }),
      ...(values.record === undefined ? {} : { record: values.record }),
      json: values.json,
      ...(values.session === undefined ? {} : { session: values.session }),
      ...(values["persist-config"] === undefined
        ? {}
        : { persistConfig: values["persist-config"] }),
      ...(values["persist-threshold"] === undefined
        ? {}
        : { persistThresholds: values["persist-threshold"] }),
    },
  };
}

/**
 * The task from `--intent TEXT` or `--intent-file F` (exactly one).
 *
 * @param text The `--intent` value.
 * @param file The `--intent-file` value.
 * @returns The text, or the file to read it from.
 * @throws {UsageError} When both or neither are given.
 */
export function intentSource(
  text: string | undefined,
  file: string | undefined,
): { text: string } | { file: string } {
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
 * A required flag's value.
 *
 * @param value The value given.
 * @param what The flag as the message names it, e.g. `--workspace DIR`.
 * @returns The value.
 * @throws {UsageError} When it is missing or empty.
 */
export function required(value: string | undefined, what: string): string {
  if (value === undefined || value === "") {
    throw new UsageError("usage", `Missing ${what}`);
  }
  return value;
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

/** Exit codes of a run interrupted by a signal: 128 + the signal number. */
const SIGNAL_EXIT: Readonly<Record<RunSignal, number>> = {
  SIGINT: 130,
  SIGTERM: 143,
};

type RunSignal = "SIGINT" | "SIGTERM";

/**
 * `loom run`.
 *
 * @param args Arguments after `run`.
 * @param io Output sinks.
 * @returns The exit code.
 */
export async function runCommand(args: string[], io: CliIo): Promise<number> {
  if (isResume(args)) {
    const resume = await prepareResume(args, io);
    if (resume.help) {
      io.out(RESUME_HELP);
      return ExitCode.ok;
    }
    await checkBeforeStart({
      workspace: resume.request.workspace,
      model: String(resume.request.provider),
      baseUrl: resume.options.baseUrl,
      test: resume.request.test?.command,
      contextReport: resume.options.contextReport,
    }).catch(resume.report.fail);
    return await execute(
      resume.request,
      {
        ...resume.options,
        ...progressOptions(io),
      },
      resume.json,
      io,
      resume.report,
    ).finally(resume.close);
  }
  const parsed = parseRunArguments(args);
  if (parsed.help) {
    io.out(RUN_HELP);
    return ExitCode.ok;
  }
  const a = parsed.parsed;
  const report = startupReport(a.contextReport, a.contextPolicy);
  let intent: string;
  if ("text" in parsed.intent) {
    intent = parsed.intent.text;
  } else {
    try {
      intent = await Deno.readTextFile(parsed.intent.file);
    } catch (error) {
      throw await report.fail(
        new UsageError(
          "usage",
          `Cannot read --intent-file ${parsed.intent.file}: ${fsReason(error)}`,
        ),
      );
    }
  }
  await checkBeforeStart({
    workspace: a.workspace,
    model: a.model,
    baseUrl: a.baseUrl,
    test: a.test?.command,
    contextReport: a.contextReport,
    persistConfig: a.persistConfig,
    session: a.session,
  }).catch(report.fail);
  const session = a.session === undefined ? undefined : await newSessionHooks({
    root: a.session,
    workspace: a.workspace,
    intent,
    policy: a.contextPolicy,
    model: a.model,
    test: a.test ?? null,
    maxSteps: a.maxSteps,
    persistConfig: a.persistConfig,
    persistThresholds: a.persistThresholds,
  }, io).catch(report.fail);
  return await execute(
    {
      intent,
      workspace: a.workspace,
      maxSteps: a.maxSteps,
      provider: a.model,
      ...(a.test === undefined ? {} : { test: a.test }),
    },
    {
      contextPolicy: a.contextPolicy,
      ...(a.contextReport === undefined
        ? {}
        : { contextReport: a.contextReport }),
      ...(a.baseUrl === undefined ? {} : { baseUrl: a.baseUrl }),
      ...(a.record === undefined ? {} : { record: a.record }),
      ...(session === undefined ? {} : { session: session.hooks }),
      modelTimeoutMs: a.modelTimeoutMs,
      ...(a.runTimeoutMs === undefined ? {} : { runTimeoutMs: a.runTimeoutMs }),
      ...sandboxOption(),
      ...progressOptions(io),
    },
    a.json,
    io,
    report,
  ).finally(() => session?.close());
}

function progressOptions(
  io: CliIo,
): Pick<RunOptions, "onProgress" | "onWaiting"> {
  return {
    onProgress: (line) => io.err(`${line}\n`),
    onWaiting: (line) => io.err(`${line}\n`),
  };
}

async function execute(
  request: SliceRequest,
  options: RunOptions,
  json: boolean,
  io: CliIo,
  report: StartupReport,
): Promise<number> {
  const interrupt = listenForSignals(io);
  let outcome: SliceOutcome;
  try {
    outcome = await runSlice(request, {
      ...options,
      signal: interrupt.signal,
    });
  } catch (error) {
    // A slice that started wrote its own report; a rejected request did not.
    if (error instanceof SliceRequestError) {
      throw await report.fail(new UsageError("usage", error.message));
    }
    throw error;
  } finally {
    interrupt.close();
  }
  io.out(json ? `${JSON.stringify(outcome, null, 2)}\n` : summary(outcome));
  const received = interrupt.received();
  return outcome.stop === "interrupted" && received !== undefined
    ? SIGNAL_EXIT[received]
    : exitCodeOf(outcome.stop);
}

/**
 * SIGINT and SIGTERM while a run goes: the first aborts the run (it stops
 * `interrupted` and writes its report, summary and session), a second one
 * exits at once.
 */
function listenForSignals(io: CliIo): {
  readonly signal: AbortSignal;
  received(): RunSignal | undefined;
  close(): void;
} {
  const controller = new AbortController();
  let received: RunSignal | undefined;
  const listeners: [RunSignal, () => void][] = [];
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    const listener = () => {
      if (received !== undefined) {
        io.err(`loom run: second ${name}, exiting without a report\n`);
        Deno.exit(SIGNAL_EXIT[name]);
      }
      received = name;
      io.err(
        `loom run: ${name} received; stopping after the model call in flight is aborted (send it again to exit at once)\n`,
      );
      controller.abort(new Error(`${name} received`));
    };
    try {
      Deno.addSignalListener(name, listener);
      listeners.push([name, listener]);
    } catch {
      // SIGTERM cannot be listened to on Windows; SIGINT still can.
    }
  }
  return {
    signal: controller.signal,
    received: () => received,
    close() {
      for (const [name, listener] of listeners) {
        Deno.removeSignalListener(name, listener);
      }
    },
  };
}

/** `after 3 steps (6 model calls)`, or in which step a run failed. */
function stepsText(o: SliceOutcome): string {
  const calls = `${o.model_calls} model call${o.model_calls === 1 ? "" : "s"}`;
  if (o.steps === 0) return `before the first step (${calls})`;
  if (o.stop === "provider_error" && o.model_calls > 0) {
    return `in step ${o.steps} (${calls}, the last one failed)`;
  }
  return `after ${o.steps} step${o.steps === 1 ? "" : "s"} (${calls})`;
}

/**
 * The human summary of an outcome.
 *
 * @param o The outcome.
 * @returns Several lines of text.
 */
export function summary(o: SliceOutcome): string {
  const lines = [
    `loom run: ${o.stop} ${stepsText(o)}`,
    `  detail: ${displayText(o.detail, 1000)}`,
    `  revision: ${o.revision ?? "none (no edit)"}`,
    `  latest test: ${
      o.latest_test === null
        ? "none"
        : `exit ${o.latest_test.exit_code}${
          o.latest_test.timed_out ? " (timed out)" : ""
        } on ${o.latest_test.tested_revision ?? "the unedited workspace"}`
    }; validates latest revision: ${
      o.tests_validate_latest_revision ? "yes" : "no"
    }`,
    `  refusals: ${o.refusals}, retrievals: ${o.retrievals}, checkpoints: ${o.checkpoints}`,
    `  policy: ${o.policy}; request bytes total ${o.request_bytes.total}, peak ${o.request_bytes.peak}`,
    `  elapsed: ${o.elapsed_ms.toFixed(1)} ms (model ${
      o.model_ms.toFixed(1)
    } ms)`,
  ];
  if (o.test_confinement !== null) {
    lines.push(`  test confinement: ${o.test_confinement}`);
  }
  if (o.test_confinement === "unconfined") {
    lines.push(
      "  WARNING: the tests ran UNCONFINED (--unconfined-tests): they could read, write and run anything you can",
    );
  }
  if (o.summary !== null) {
    lines.push(`  summary: ${displayText(o.summary, 1000)}`);
  }
  if (o.context_report !== null) {
    lines.push(`  context report: ${o.context_report}`);
  }
  return lines.join("\n") + "\n";
}
