// Factories shared by tests and by the bench scripts. Free of side effects
// and permissions (unlike `_kit.ts`, which sets up the session key), so a
// script run with `--allow-read` alone can import it; tests import these
// through `_kit.ts`.
import type { ActionRecord } from "../lib/briefing/report.ts";
import {
  type Capture,
  type ResultDescriptor,
  ResultStore,
} from "../lib/store/result_store.ts";

/**
 * A small deterministic PRNG (mulberry32), for generated streams and
 * documents that must be the same on every run.
 *
 * @param seed The seed; the same seed gives the same sequence.
 * @returns A function returning the next number in [0, 1).
 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Options of {@linkcode testsRunRecord}. */
export interface TestsRunRecordOptions {
  /** The test program's exit code (default 1, a failure). */
  readonly exitCode?: number;
  /** The revision tested (default `null`, the unedited workspace). */
  readonly testedRevision?: string | null;
  /** Whether the timeout stopped the run (default false). */
  readonly timedOut?: boolean;
  /** What guarded the test process (default `"none"`). */
  readonly confinement?: string;
}

/**
 * The record of one `tests.run` step.
 *
 * @param sequence The step number.
 * @param output The descriptor of the captured output.
 * @param options Exit code, tested revision, timeout and confinement.
 * @returns The action record.
 */
export function testsRunRecord(
  sequence: number,
  output: ResultDescriptor,
  options: TestsRunRecordOptions = {},
): ActionRecord {
  return {
    sequence,
    action: "tests.run",
    arguments: {},
    report: {
      kind: "tests_run",
      exit_code: options.exitCode ?? 1,
      timed_out: options.timedOut ?? false,
      tested_revision: options.testedRevision ?? null,
      output,
      confinement: options.confinement ?? "none",
    },
  };
}

/** The keys of a context report (version 2), in the order wire-formats.md gives them. */
export const CONTEXT_REPORT_KEYS: readonly string[] =
  "version policy outcome requests checkpoints retrievals arguments_reparsed model_calls elapsed_ms model steps revision tests_validate_latest_revision tests"
    .split(" ");

/** One text to put: the text, its origin and its capture (default complete). */
export type Put = readonly [text: string, origin: string, capture?: Capture];

/**
 * A fresh result store holding these texts, put in order.
 *
 * @param puts The texts with their origins and captures.
 * @returns The store and the descriptor of each text, in order.
 */
export async function storeWith<const T extends readonly Put[]>(
  ...puts: T
): Promise<{
  results: ResultStore;
  descriptors: { -readonly [K in keyof T]: ResultDescriptor };
}> {
  const results = new ResultStore();
  const descriptors: ResultDescriptor[] = [];
  for (const [text, origin, capture = "complete"] of puts) {
    descriptors.push(await results.put(text, { origin, capture }));
  }
  return {
    results,
    descriptors: descriptors as { -readonly [K in keyof T]: ResultDescriptor },
  };
}

/**
 * A JSON document like an API dump (`{"object": "list", "data": [...]}`):
 * nested events with non-ASCII names, the shape large tool results have.
 *
 * @param events How many events (12,000 make about 2 MB indented).
 * @param space `JSON.stringify`'s indentation (none by default).
 * @returns The document.
 */
export function apiDump(events: number, space?: number): string {
  const data = Array.from({ length: events }, (_, i) => ({
    id: `evt_${i.toString(36).padStart(8, "0")}`,
    type: i % 3 === 0 ? "invoice.paid" : "customer.updated",
    amount: 1000 + i * 7,
    customer: { name: `Kunde ${i} — Zürich`, tags: ["b2b", `tier-${i % 4}`] },
    created: 1_700_000_000 + i,
  }));
  return JSON.stringify({ object: "list", has_more: false, data }, null, space);
}
