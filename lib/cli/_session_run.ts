/**
 * The session side of `loom run`: `--session DIR` persists the run as it
 * goes; `--resume DIR [--max-steps N]` continues a stopped one with the
 * model, test command and policy stored in the session.
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import type { ContextPolicy } from "../briefing/briefing.ts";
import {
  loadPersistenceConfig,
  mergePersistenceConfigs,
  type PersistenceConfig,
  PersistenceConfigError,
} from "../persist/persistence_config.ts";
import { SessionError } from "../persist/session_error.ts";
import { StorageError } from "../storage/storage_error.ts";
import { errorCategory } from "../errors.ts";
import { SessionStore } from "../persist/session_store.ts";
import type { LoadedSession } from "../persist/session_types.ts";
import { sliceSessionHooks } from "../persist/slice_session.ts";
import type { RunOptions, SliceRequest, SliceTest } from "../slice/request.ts";
import type { SliceSessionHooks } from "../slice/run_state.ts";
import { defined, parseFlags, positiveInteger, required } from "./_args.ts";
import { help, type Parsed } from "./_command.ts";
import {
  parseResumable,
  RESUMABLE_OPTIONS,
  type ResumableArguments,
  SLICE_OPTIONS,
} from "./_run_flags.ts";
import {
  sandboxOption,
  TEST_FLAGS_HELP,
  type TestConfinement,
} from "./_test_flags.ts";
import { type CliIo, UsageError } from "./_io.ts";
import { type StartupReport, startupReport } from "./_failure_report.ts";

/** Whether `loom run` arguments ask for a resume. */
export function isResume(args: readonly string[]): boolean {
  return args.some((a) => a === "--resume" || a.startsWith("--resume="));
}

/** What a new session needs from `loom run`'s arguments. */
export interface NewSessionArguments {
  readonly root: string;
  /** `--store URL`: `root` names a session in it. */
  readonly store?: string | undefined;
  readonly workspace: string;
  readonly intent: string;
  readonly policy: ContextPolicy;
  readonly model: string;
  readonly test: SliceTest | null;
  readonly maxSteps: number;
  readonly persistConfig?: string | undefined;
  readonly persistThresholds?: PersistenceConfig | undefined;
}

/** Session hooks of a run, and how to release the session afterwards. */
export interface RunSession {
  /** The hooks for `RunOptions.session`. */
  readonly hooks: SliceSessionHooks;
  /** Closes the journal and releases the lock (call when the run ends). */
  close(): Promise<void>;
}

/**
 * Creates the session of `loom run --session DIR` and its hooks.
 *
 * @throws {UsageError} When the root overlaps the workspace, already holds a
 *   session, is locked, the key is unusable, or the persistence config is
 *   invalid.
 */
export async function newSessionHooks(
  a: NewSessionArguments,
  io: CliIo,
): Promise<RunSession> {
  const config = await persistenceConfig(
    a.persistConfig,
    a.persistThresholds,
    io,
  );
  let store: SessionStore;
  try {
    store = await SessionStore.create(a.root, {
      workspace: a.workspace,
      ...(a.store === undefined ? {} : { store: a.store }),
      run: {
        intent: a.intent,
        policy: a.policy,
        model: absoluteModel(a.model),
        test: a.test,
        maxSteps: a.maxSteps,
        overrides: config.overrides,
      },
    });
  } catch (error) {
    throw usage(error);
  }
  return {
    hooks: sliceSessionHooks(store, {
      onSaved: (_, checkpoint) => saved(io, store.root, checkpoint.steps),
    }),
    close: () => store.close(),
  };
}

/** A resume, ready for `runSlice`. */
export interface PreparedResume {
  readonly request: SliceRequest;
  readonly options: RunOptions;
  /** Closes the journal and releases the lock (call when the run ends). */
  close(): Promise<void>;
  /** Writes the context report if the resumed slice cannot start. */
  readonly report: StartupReport;
}

/** The help text of `loom run --resume`. */
export const RESUME_HELP =
  `Usage: loom run --resume DIR [--max-steps N] [options]

Continues the slice stored in session DIR (written by 'loom run --session
DIR') with the intent, workspace, model, test command and context policy
stored there, and prints the workspace and test command before the first
model call. Results and events come back with the same ids and digests;
a recorded model continues from its next unused call. The journal's MAC
chain and every persisted result are verified first: a tampered record, a
missing or damaged file, or a session another process holds stops the
resume (exit 2) and nothing in the session is overwritten.

Options:
  --max-steps N            New step budget, counting the steps already taken
                           (default: the stored budget)
  --context-report PATH    Write the JSON context report (whole run) to PATH
  --base-url URL           Provider API base URL
  --model-timeout DUR      Bound of one model call attempt (default 120s)
  --run-timeout DUR        Bound of this run (see loom run --help)
  --persist-config F       Threshold overrides file (see loom run --help)
  --persist-threshold T=N  Threshold override for tool T (repeatable)
  --store URL              The store the session is in (file:DIR,
                           sqlite:PATH, postgres://…); DIR is then its name
  --json                   Print the summary as JSON
  -h, --help               Show this help

The test's confinement is not stored in the session; give its flags again:
${TEST_FLAGS_HELP}`;

/** Parsed `loom run --resume DIR …` arguments. */
export interface ResumeArguments extends ResumableArguments {
  /** Always `resume`. */
  readonly kind: "resume";
  /** `--resume DIR`: the session to continue. */
  readonly root: string;
  /** `--max-steps N`: the new budget (default: the stored one). */
  readonly maxSteps?: number;
}

// The step budget is the one flag of a slice's description a resume takes.
const { "max-steps": _budget, ...SLICE_STORED } = SLICE_OPTIONS;

/** The flags of a new run that a resume takes from its session instead. */
const STORED_OPTIONS = {
  ...SLICE_STORED,
  session: { type: "string" },
} as const;

/**
 * Parses `loom run --resume DIR …`; opens nothing.
 *
 * @param args Arguments after `run`.
 * @returns The arguments, or the resume's help text.
 * @throws {UsageError} On bad options, or a flag whose value the session
 *   stores.
 */
export function parseResumeArguments(
  args: readonly string[],
): Parsed<ResumeArguments> {
  const { values } = parseFlags(args, {
    resume: { type: "string" },
    "max-steps": { type: "string" },
    ...RESUMABLE_OPTIONS,
    ...STORED_OPTIONS,
  });
  if (values.help) return help(RESUME_HELP);
  for (const flag of Object.keys(STORED_OPTIONS)) {
    if (values[flag as StoredFlag] !== undefined) {
      throw new UsageError(
        "usage",
        `--resume continues with the workspace, intent, model, test command and policy stored in the session; drop --${flag}`,
      );
    }
  }
  const root = required(values.resume, "--resume DIR");
  return {
    kind: "resume",
    root,
    ...defined({
      maxSteps: positiveInteger(values["max-steps"], "--max-steps"),
    }),
    ...parseResumable(values),
  };
}

type StoredFlag = keyof typeof STORED_OPTIONS;

/**
 * Loads and verifies the session of a resume and prepares its run.
 *
 * @param a The parsed arguments.
 * @param confinement The test's confinement, `--test-env` values read.
 * @param io Where the resume notice and session progress go.
 * @returns The request and options of the resumed slice.
 * @throws {UsageError} On a missing, invalid or damaged session, a
 *   completed session, or a budget already used up (the context report,
 *   if asked for, says why).
 */
export async function prepareResume(
  a: ResumeArguments,
  confinement: TestConfinement,
  io: CliIo,
): Promise<PreparedResume> {
  const report = startupReport(a.contextReport, "legacy");
  let store: SessionStore;
  let loaded;
  try {
    store = await SessionStore.open(
      a.root,
      a.store === undefined ? {} : { store: a.store },
    );
  } catch (error) {
    throw await report.fail(usage(error));
  }
  let session: SliceSessionHooks;
  let maxSteps: number;
  try {
    try {
      loaded = await store.load();
    } catch (error) {
      throw usage(error);
    }
    report.policy = loaded.policy;
    report.model = loaded.model;
    const steps = loaded.state.steps;
    if (loaded.stop === "completed") {
      throw new UsageError(
        "usage",
        `Session ${store.root} already completed after ${steps} steps: there is nothing to resume`,
      );
    }
    maxSteps = a.maxSteps ?? loaded.maxSteps;
    if (maxSteps <= steps) {
      throw new UsageError(
        "usage",
        `Session ${store.root} already used ${steps} of ${maxSteps} steps: give a larger --max-steps`,
      );
    }
    const flags = await persistenceConfig(
      a.persistConfig,
      a.persistThresholds,
      io,
    );
    const overrides = mergePersistenceConfigs(
      { overrides: loaded.overrides, warnings: [] },
      flags,
    ).overrides;
    await store.updateSettings({ maxSteps, overrides });
    session = sliceSessionHooks(store, {
      resume: loaded,
      onSaved: (_, checkpoint) => saved(io, store.root, checkpoint.steps),
    });
    io.err(resumeNotice(store, loaded));
  } catch (error) {
    await store.close();
    throw await report.fail(error);
  }
  return {
    close: () => store.close(),
    report,
    request: {
      intent: loaded.intent,
      workspace: loaded.workspace,
      maxSteps,
      provider: loaded.model,
      ...(loaded.test === null
        ? {}
        : { test: { ...loaded.test, ...confinement } }),
    },
    options: {
      contextPolicy: loaded.policy,
      session,
      ...sandboxOption(),
      ...defined({
        contextReport: a.contextReport,
        baseUrl: a.baseUrl,
        modelTimeoutMs: a.modelTimeoutMs,
        runTimeoutMs: a.runTimeoutMs,
      }),
    },
  };
}

/** What a resume prints before the first model call. */
function resumeNotice(store: SessionStore, loaded: LoadedSession): string {
  const lines = [
    `resuming ${store.root} after step ${loaded.state.steps} (model call ${loaded.state.modelCalls})`,
    `workspace ${loaded.workspace}`,
    loaded.test === null
      ? "no test command"
      : `test command ${
        loaded.test.command.join(" ")
      } (timeout ${loaded.test.timeoutMs} ms)`,
  ];
  if (store.tookOverLock !== null) lines.push(store.tookOverLock);
  if (loaded.tornBytes > 0) {
    lines.push(
      `ignored a torn last journal line (${loaded.tornBytes} bytes): the step it described was never acknowledged and is taken again`,
    );
  }
  const stale = loaded.unavailable;
  if (stale.length > 0) {
    const ids = stale.slice(0, 8).map((u) => u.id).join(", ");
    lines.push(
      `${stale.length} inspected result${
        stale.length === 1 ? " is" : "s are"
      } stale (file changed after inspection): ${ids}${
        stale.length > 8 ? ", …" : ""
      }; references to ${
        stale.length === 1 ? "it" : "them"
      } fail with digest_mismatch`,
    );
  }
  return lines.map((line) => `loom run: ${line}\n`).join("");
}

async function persistenceConfig(
  file: string | undefined,
  thresholds: PersistenceConfig | undefined,
  io: CliIo,
): Promise<PersistenceConfig> {
  try {
    const config = mergePersistenceConfigs(
      file === undefined
        ? { overrides: {}, warnings: [] }
        : await loadPersistenceConfig(file),
      thresholds ?? { overrides: {}, warnings: [] },
    );
    for (const warning of config.warnings) io.err(`loom run: ${warning}\n`);
    return config;
  } catch (error) {
    if (error instanceof PersistenceConfigError) {
      throw new UsageError("usage", error.message);
    }
    throw error;
  }
}

function usage(error: unknown): unknown {
  if (error instanceof SessionError) {
    return new UsageError("usage", `${error.code}: ${error.message}`);
  }
  if (
    error instanceof StorageError &&
    errorCategory(error.code) === "bad_input"
  ) {
    return new UsageError("usage", `${error.code}: ${error.message}`);
  }
  return error;
}

function saved(io: CliIo, root: string, steps: number): void {
  io.err(`session: saved step ${steps} to ${root}\n`);
}

/** A `recorded:` spec with a relative path, made absolute for a later resume. */
function absoluteModel(spec: string): string {
  if (!spec.startsWith("recorded:")) return spec;
  const path = spec.slice("recorded:".length);
  return isAbsolute(path) ? spec : `recorded:${resolve(path)}`;
}
