/**
 * `loom run`: drives a model through a governed slice over a workspace.
 *
 * @module
 */
import { refuseUnknownContentMode } from "./_telemetry_env.ts";
import { runSlice } from "../slice/run.ts";
import {
  type RunOptions,
  type SliceRequest,
  SliceRequestError,
} from "../slice/request.ts";
import type { SliceOutcome } from "../slice/outcome.ts";
import type { ContextPolicy } from "../briefing/briefing.ts";
import { displayText } from "../display.ts";
import { defined, parseFlags, readFlagFile } from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { checkBeforeStart } from "./_preflight.ts";
import {
  parseResumable,
  parseSlice,
  RESUMABLE_OPTIONS,
  type ResumableArguments,
  SLICE_OPTIONS,
  type SliceArguments,
} from "./_run_flags.ts";
import {
  sandboxOption,
  TEST_FLAGS_HELP,
  testConfinement,
} from "./_test_flags.ts";
import { type CliIo, ExitCode, exitCodeOf, UsageError } from "./_io.ts";
import { firstTurnRequest } from "../slice/first_request.ts";
import { dryRunRequest } from "../providers/dry_run.ts";
import { contractError } from "../providers/request_contract.ts";
import { type StartupReport, startupReport } from "./_failure_report.ts";
import {
  isResume,
  newSessionHooks,
  parseResumeArguments,
  prepareResume,
  type ResumeArguments,
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
  --record-requests PATH   Append every request as sent to PATH (JSON lines,
                           loom-requests/1), for loom view; it holds prompt
                           text and what the run read of the workspace
  --session DIR            Persist the run in session DIR (outside DIR of
                           --workspace) after every step; see loom session
  --resume DIR             Continue the stopped slice of session DIR
                           (see loom run --resume DIR --help)
  --store URL              Keep the session in a store: file:DIR,
                           sqlite:PATH or postgres://user:pw@host:port/db;
                           --session NAME and --resume NAME then name a
                           session in it (see docs/storage.md)
  --persist-config F       JSON file {"maxResultSizeChars": {TOOL: N}}
  --persist-threshold T=N  Persistence threshold of tool T (repeatable): a
                           result of more than N characters goes to
                           DIR/tool-results, a smaller one stays inline in
                           DIR/journal.jsonl (default 30000);
                           repository.inspect is never persisted
  --json                   Print the summary as JSON
  --dry-run                Build the run's first request exactly as the SDK
                           of anthropic:MODEL or openai:MODEL would send it,
                           print it as JSON (service, url, body; never the
                           API key), check it against the service's request
                           rules, and exit 0, or 3 with provider_contract;
                           no model call, no workspace access
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
const DEFAULT_MODEL_TIMEOUT_MS = 120_000;

/** Parsed `loom run` arguments (a new run; see `ResumeArguments`). */
export interface RunArguments extends ResumableArguments, SliceArguments {
  /** Always `run`. */
  readonly kind: "run";
  /** `--max-steps N`, default 40. */
  readonly maxSteps: number;
  /** `--model-timeout`, default 120 s. */
  readonly modelTimeoutMs: number;
  /** `--context-policy P`, default `legacy`. */
  readonly contextPolicy: ContextPolicy;
  /** `--record PATH`. */
  readonly record?: string;
  /** `--record-requests PATH`. */
  readonly recordRequests?: string;
  /** `--session DIR`. */
  readonly session?: string;
  /** `--dry-run`: print and check the first request, run nothing. */
  readonly dryRun: boolean;
}

/**
 * Parses `loom run` arguments, a new run or a `--resume`; reads no file,
 * variable or session.
 *
 * @param args Arguments after `run`.
 * @returns The arguments, or the help text (of the resume with `--resume`).
 * @throws {UsageError} On unknown, missing or malformed options.
 */
export function parseRunArguments(
  args: readonly string[],
): Parsed<RunArguments | ResumeArguments> {
  if (isResume(args)) return parseResumeArguments(args);
  const { values } = parseFlags(args, {
    ...SLICE_OPTIONS,
    ...RESUMABLE_OPTIONS,
    record: { type: "string" },
    "record-requests": { type: "string" },
    session: { type: "string" },
    "dry-run": { type: "boolean", default: false },
  });
  if (values.help) return help(RUN_HELP);
  const slice = parseSlice(values);
  if (values.session === undefined) {
    for (
      const flag of ["persist-config", "persist-threshold", "store"] as const
    ) {
      if (values[flag] !== undefined) {
        throw new UsageError(
          "usage",
          `--${flag} needs --session: results are persisted only in a session`,
        );
      }
    }
  }
  const dryRun = values["dry-run"] === true;
  if (dryRun) {
    for (
      const flag of [
        "session",
        "record",
        "record-requests",
        "context-report",
      ] as const
    ) {
      if (values[flag] !== undefined) {
        throw new UsageError(
          "usage",
          `--dry-run makes no run, so --${flag} does not apply`,
        );
      }
    }
  }
  const resumable = parseResumable(values);
  if (
    slice.test === undefined && Object.keys(resumable.confinement).length > 0
  ) {
    throw new UsageError(
      "usage",
      "--test-env, --test-network, --unconfined-tests, --protect and --edit-test-files need --test",
    );
  }
  return {
    ...resumable,
    ...slice,
    kind: "run",
    maxSteps: slice.maxSteps ?? DEFAULT_MAX_STEPS,
    modelTimeoutMs: resumable.modelTimeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
    contextPolicy: slice.contextPolicy ?? "legacy",
    dryRun,
    ...defined({
      record: values.record,
      recordRequests: values["record-requests"],
      session: values.session,
    }),
  };
}

/** Exit codes of a run interrupted by a signal: 128 + the signal number. */
const SIGNAL_EXIT: Readonly<Record<RunSignal, number>> = {
  SIGINT: 130,
  SIGTERM: 143,
};

type RunSignal = "SIGINT" | "SIGTERM";

/** `loom run`: the exit code of the slice (see the help's table). */
export const runCommand: Command = commandOf(
  parseRunArguments,
  (a, io) =>
    refuseUnknownContentMode("run", io) ??
      (a.kind === "resume" ? resume(a, io) : run(a, io)),
);

async function resume(a: ResumeArguments, io: CliIo): Promise<number> {
  const confinement = testConfinement(a.confinement);
  const resumed = await prepareResume(a, confinement, io);
  await checkBeforeStart({
    workspace: resumed.request.workspace,
    model: String(resumed.request.provider),
    baseUrl: a.baseUrl,
    test: resumed.request.test?.command,
    contextReport: a.contextReport,
  }).catch(resumed.report.fail);
  return await execute(
    resumed.request,
    { ...resumed.options, ...progressOptions(io) },
    a.json,
    io,
    resumed.report,
  ).finally(resumed.close);
}

/**
 * `--dry-run`: prints the first request as the SDK would send it and checks
 * it; reads the intent file only (no workspace, no key, no model call).
 */
async function dryRun(a: RunArguments, io: CliIo): Promise<number> {
  const intent = "text" in a.intent
    ? a.intent.text
    : await readFlagFile(a.intent.file, "--intent-file");
  if (intent.trim() === "") {
    throw new UsageError(
      "usage",
      "Cannot run a slice without an intent: give the task as text",
    );
  }
  const request = firstTurnRequest(
    defined({ intent, test: a.test }),
    { contextPolicy: a.contextPolicy },
  );
  const dry = await dryRunRequest(
    a.model,
    request,
    defined({
      baseUrl: a.baseUrl,
    }),
  );
  io.out(
    `${
      JSON.stringify(
        { service: dry.service, url: dry.url, body: dry.body },
        null,
        2,
      )
    }\n`,
  );
  const [breach] = dry.breaches;
  if (breach !== undefined) throw contractError(breach);
  return ExitCode.ok;
}

async function run(a: RunArguments, io: CliIo): Promise<number> {
  if (a.dryRun) return await dryRun(a, io);
  const confinement = testConfinement(a.confinement);
  const report = startupReport(a.contextReport, a.contextPolicy, a.model);
  const intent = "text" in a.intent
    ? a.intent.text
    : await readFlagFile(a.intent.file, "--intent-file").catch(report.fail);
  await checkBeforeStart({
    workspace: a.workspace,
    model: a.model,
    baseUrl: a.baseUrl,
    test: a.test?.command,
    contextReport: a.contextReport,
    persistConfig: a.persistConfig,
    // In a store, --session names a session, not a folder.
    session: a.store === undefined ? a.session : undefined,
  }).catch(report.fail);
  const test = a.test === undefined ? undefined : { ...a.test, ...confinement };
  const session = a.session === undefined ? undefined : await newSessionHooks({
    root: a.session,
    store: a.store,
    workspace: a.workspace,
    intent,
    policy: a.contextPolicy,
    model: a.model,
    test: test ?? null,
    maxSteps: a.maxSteps,
    persistConfig: a.persistConfig,
    persistThresholds: a.persistThresholds,
  }, io).catch(report.fail);
  return await execute(
    defined({
      intent,
      workspace: a.workspace,
      maxSteps: a.maxSteps,
      provider: a.model,
      test,
    }),
    {
      contextPolicy: a.contextPolicy,
      ...defined({
        contextReport: a.contextReport,
        baseUrl: a.baseUrl,
        record: a.record,
        recordRequests: a.recordRequests,
        session: session?.hooks,
        runTimeoutMs: a.runTimeoutMs,
      }),
      modelTimeoutMs: a.modelTimeoutMs,
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
