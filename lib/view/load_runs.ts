/**
 * Turns what `loom view` and `loom report --html` were given into runs:
 * sessions (a session folder, a folder of session folders, or names in a
 * store — every session of the store when none is named), report files,
 * recordings, each with the recording and request log given after it.
 *
 * @module
 */
import { basename, join } from "node:path";
import { SessionReader } from "../persist/session_reader.ts";
import type { Storage } from "../storage/storage.ts";
import { openStorage } from "../storage/open_storage.ts";
import { JOURNAL_FILE } from "../storage/file_storage.ts";
import {
  readRecordingFile,
  readReportFile,
  ViewInputError,
  type ViewSource,
} from "./inputs.ts";
import { RequestLogReader } from "./request_log_reader.ts";

/** One run as given: what it is, and what belongs to it. */
export interface RunInput {
  /** A session folder (or a folder of them), or a name in the store. */
  readonly session?: string;
  /** A report file (a context report, or a gateway's). */
  readonly report?: string;
  /** A recording: the run's replies, or a run of its own when alone. */
  readonly record?: string;
  /** A request log (`loom run --record-requests`). */
  readonly requests?: string;
}

/** Loaded runs; close them when done (sessions hold their store open). */
export interface LoadedRuns extends AsyncDisposable {
  /** The runs, `r1`, `r2`, … in the order given. */
  readonly runs: readonly ViewSource[];
  /** Closes the sessions and the store. */
  close(): Promise<void>;
}

/**
 * Loads runs, checking every file first: nothing is served from an input
 * that cannot be read.
 *
 * @param inputs The runs as given, in order.
 * @param store The store URL sessions are named in (opened read-only).
 * @returns The runs.
 * @throws {ViewInputError} `view_input_invalid` for an input that is none
 *   of the above (and the readers' own errors: `report_invalid`,
 *   `request_log_invalid`, `recording_invalid`, `session_missing`, …).
 */
export async function loadRuns(
  inputs: readonly RunInput[],
  store?: string,
): Promise<LoadedRuns> {
  const storage = store === undefined
    ? undefined
    : await openStorage(store, { readOnly: true });
  const runs: ViewSource[] = [];
  const readers: SessionReader[] = [];
  const close = async () => {
    for (const reader of readers) await reader.close();
    await storage?.close();
  };
  try {
    const given: readonly RunInput[] =
      inputs.length === 0 && storage !== undefined
        ? (await storage.listSessions()).map((session) => ({ session }))
        : inputs;
    for (const input of given) {
      const sessions = input.session === undefined
        ? [undefined]
        : await sessionsOf(input.session, storage);
      if (
        sessions.length > 1 && (input.requests ?? input.record) !== undefined
      ) {
        throw new ViewInputError(
          "view_input_invalid",
          `${input.session} holds ${sessions.length} sessions: give --requests and --record after one of them`,
        );
      }
      for (const name of sessions) {
        const reader = name === undefined
          ? undefined
          : await SessionReader.open(name, {
            ...(storage === undefined ? {} : { store: storage }),
          });
        if (reader !== undefined) readers.push(reader);
        const report = input.report === undefined
          ? undefined
          : await readReportFile(input.report);
        const replies = input.record === undefined
          ? undefined
          : await readRecordingFile(input.record);
        const requests = input.requests === undefined
          ? undefined
          : await RequestLogReader.open(input.requests);
        const file = input.report ?? input.record ?? input.requests ?? "";
        runs.push({
          id: `r${runs.length + 1}`,
          name: reader?.reading.name ?? basename(file),
          where: reader?.reading.where ?? file,
          ...(reader === undefined ? {} : { session: reader }),
          ...(report === undefined ? {} : { report }),
          ...(replies === undefined ? {} : { replies }),
          ...(requests === undefined ? {} : { requests }),
        });
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { runs, close, [Symbol.asyncDispose]: close };
}

/**
 * The sessions a SESSION argument names: a name in the store; a session
 * folder; or each session folder directly under a folder.
 */
async function sessionsOf(
  given: string,
  storage: Storage | undefined,
): Promise<string[]> {
  if (storage !== undefined) return [given];
  if (await isFile(join(given, JOURNAL_FILE))) return [given];
  const found: string[] = [];
  try {
    for await (const entry of Deno.readDir(given)) {
      if (
        entry.isDirectory &&
        await isFile(join(given, entry.name, JOURNAL_FILE))
      ) found.push(join(given, entry.name));
    }
  } catch {
    // Not a folder: the reader says what is wrong with it.
    return [given];
  }
  return found.length === 0 ? [given] : found.sort();
}

async function isFile(path: string): Promise<boolean> {
  return (await Deno.lstat(path).catch(() => undefined))?.isFile === true;
}
