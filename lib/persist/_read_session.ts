/**
 * Reading a session journal: one loop over its records, each checked
 * against the chain (when a key is given), the closed schema and the
 * sequence of the records before it.
 *
 * @module
 */
import { join } from "node:path";
import type { z } from "zod";
import { type JournalText, readJournal } from "./_journal.ts";
import {
  type CatalogueEntry,
  describeIssue,
  type HeaderRecord,
  headerSchema,
  laterSchema,
} from "./_schema.ts";
import { emptyState, foldStep, type JournalState } from "./_session_records.ts";
import { messageOf } from "../errors.ts";
import { SessionError } from "./session_error.ts";

/** Name of the journal inside a session root. */
export const JOURNAL_FILE = "journal.jsonl";
/** Name of the state file of the old, unauthenticated format. */
export const OLD_SESSION_FILE = "session.json";
/** Name of the directory of persisted results inside a session root. */
export const RESULTS_DIR = "tool-results";

/** A journal folded into the state after its last acknowledged record. */
export interface ParsedSession {
  /** The journal file. */
  readonly file: string;
  /** The header record. */
  readonly header: HeaderRecord;
  /** The step budget in force. */
  readonly maxSteps: number;
  /** Threshold overrides in force. */
  readonly overrides: Readonly<Record<string, number>>;
  /** The run state after the last step record. */
  readonly state: JournalState;
  /** The result catalogue by id, in id order. */
  readonly catalogue: ReadonlyMap<string, CatalogueEntry>;
  /** What {@linkcode readJournal} returned (records, torn bytes, last MAC). */
  readonly text: JournalText;
}

/**
 * Reads and folds a session journal.
 *
 * @throws {SessionError} `session_missing`, `session_outdated`,
 *   `session_invalid` (naming file and line) or `session_tampered` (naming
 *   the first record that does not verify).
 */
export async function parseSession(
  root: string,
  key: Uint8Array | undefined,
): Promise<ParsedSession> {
  const file = join(root, JOURNAL_FILE);
  let text;
  try {
    text = await readJournal(file, key);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) await missing(root, error);
    if (error instanceof SessionError) throw error;
    throw new SessionError(
      "session_invalid",
      `Cannot read session journal ${file}: ${messageOf(error)}`,
      { file, cause: error },
    );
  }
  const [first, ...later] = text.lines;
  if (first === undefined) {
    throw new SessionError(
      "session_invalid",
      `Session journal ${file} is invalid at line 1: it holds no complete header record`,
      { file, line: 1 },
    );
  }
  const header = checked(headerSchema, first.value, file, first.line);
  let maxSteps = header.max_steps;
  let overrides: Readonly<Record<string, number>> = header.overrides;
  let state = emptyState();
  const catalogue = new Map<string, CatalogueEntry>();
  for (const [index, { value, line }] of later.entries()) {
    const record = checked(laterSchema, value, file, line);
    const where = `Session journal ${file} is invalid at line ${line}`;
    if (record.seq !== index + 1) {
      throw new SessionError(
        "session_invalid",
        `${where}: record ${record.seq} stands where record ${
          index + 1
        } belongs`,
        { file, line },
      );
    }
    if (record.type === "settings") {
      maxSteps = record.max_steps;
      overrides = record.overrides;
      continue;
    }
    let last = state.records.at(-1)?.sequence ?? 0;
    for (const action of record.records) {
      if (action.sequence <= last) {
        throw new SessionError(
          "session_invalid",
          `${where}: action record ${action.sequence} follows ${last}`,
          { file, line },
        );
      }
      last = action.sequence;
    }
    for (const [id, entry] of Object.entries(record.results)) {
      if (catalogue.has(id)) {
        throw new SessionError(
          "session_invalid",
          `${where}: ${id} is catalogued twice`,
          { file, line },
        );
      }
      catalogue.set(id, entry);
    }
    state = foldStep(state, record);
  }
  return {
    file,
    header,
    maxSteps,
    overrides,
    state,
    catalogue: new Map(
      [...catalogue].sort((a, b) => idNumber(a[0]) - idNumber(b[0])),
    ),
    text,
  };
}

/**
 * Checks that a root holds a journal, without reading it.
 *
 * @throws {SessionError} `session_outdated` or `session_missing`.
 */
export async function requireJournal(root: string): Promise<void> {
  await Deno.lstat(join(root, JOURNAL_FILE)).catch((e) => missing(root, e));
}

/**
 * Throws `session_missing`, or `session_outdated` for a session of the old
 * `session.json` format (its state carries no MAC, so anyone who could
 * write the folder could have changed it).
 */
async function missing(root: string, cause: unknown): Promise<never> {
  const old = join(root, OLD_SESSION_FILE);
  if (await Deno.lstat(old).then(() => true, () => false)) {
    throw new SessionError(
      "session_outdated",
      `Session ${root} was written by an older Loom (${OLD_SESSION_FILE}, format loom-session/1), whose state is not authenticated and cannot be resumed safely: start a new session with loom run --session, or finish this one with the Loom release that wrote it`,
      { file: old },
    );
  }
  throw new SessionError(
    "session_missing",
    `No session in ${root}: ${JOURNAL_FILE} does not exist`,
    { file: join(root, JOURNAL_FILE), cause },
  );
}

function checked<T>(
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

function idNumber(id: string): number {
  return Number(id.slice(id.lastIndexOf("-") + 1));
}
