/**
 * Reading a session journal: one loop over its records, each checked
 * against the chain (when a key is given), the closed schema and the
 * sequence of the records before it. One format serves every kind of
 * session: a slice's (`loom run`) and an MCP server's (`loom mcp`).
 *
 * @module
 */
import type { SessionSlot } from "../storage/storage.ts";
import { type JournalText, readJournal } from "./_journal.ts";
import {
  type CatalogueEntry,
  checkedRecord,
  type HeaderRecord,
  headerSchema,
  laterSchema,
  type McpHeaderRecord,
  OLD_MCP_FORMAT,
} from "./_schema.ts";
import { emptyState, foldStep, type JournalState } from "./_session_records.ts";
import { idNumber, McpCatalogue } from "./_mcp_catalogue.ts";
import { messageOf } from "../errors.ts";
import { SessionError } from "./session_error.ts";

/** Name of a persisted body in a catalogue entry (any back-end). */
export const RESULTS_DIR = "tool-results";

/** A slice's journal folded into the state after its last acknowledged record. */
export interface ParsedSession {
  /** Always `slice`. */
  readonly kind: "slice";
  /** The journal (a path or a redacted URL#session). */
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

/** An MCP server's journal folded into its result catalogue. */
export interface ParsedMcpSession {
  /** Always `mcp`. */
  readonly kind: "mcp";
  /** The journal (a path or a redacted URL#session). */
  readonly file: string;
  /** The header record. */
  readonly header: McpHeaderRecord;
  /** The result catalogue by id, in id order. */
  readonly catalogue: ReadonlyMap<string, CatalogueEntry>;
  /** The catalogue as folded, ready to take in later records. */
  readonly folded: McpCatalogue;
  /** What {@linkcode readJournal} returned. */
  readonly text: JournalText;
}

/** A journal of either kind. */
export type AnySession = ParsedSession | ParsedMcpSession;

/**
 * Reads and folds a journal of either kind.
 *
 * @throws {SessionError} `session_missing`, `session_outdated`,
 *   `session_invalid` (naming file and line) or `session_tampered` (naming
 *   the first record that does not verify).
 */
export async function parseAnySession(
  slot: SessionSlot,
  key: Uint8Array | undefined,
): Promise<AnySession> {
  await requireJournal(slot);
  const file = slot.journal.where;
  let text;
  try {
    text = await readJournal(slot.journal, key);
  } catch (error) {
    if (error instanceof SessionError || isStorageFailure(error)) throw error;
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
  if (first.value.format === OLD_MCP_FORMAT) {
    throw new SessionError(
      "session_outdated",
      `Session ${slot.where} was written by an older loom mcp (${OLD_MCP_FORMAT}), before one journal format served every kind of session: its results can be stored again, so delete it (or give loom mcp another --session) and start afresh`,
      { file, line: 1 },
    );
  }
  if (first.value.kind === "mcp") {
    const folded = McpCatalogue.fromLines(file, text.lines, text.mac, key);
    const catalogue = new Map<string, CatalogueEntry>();
    for (const id of folded.idsFrom(0)) catalogue.set(id, folded.entry(id)!);
    return {
      kind: "mcp",
      file,
      header: folded.header!,
      catalogue: sorted(catalogue),
      folded,
      text,
    };
  }
  const header = checkedRecord(headerSchema, first.value, file, first.line);
  let maxSteps = header.max_steps;
  let overrides: Readonly<Record<string, number>> = header.overrides;
  let state = emptyState();
  const catalogue = new Map<string, CatalogueEntry>();
  for (const [index, { value, line }] of later.entries()) {
    const record = checkedRecord(laterSchema, value, file, line);
    const where = `Session journal ${file} is invalid at line ${line}`;
    sequenced(record.seq, index, file, line);
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
      twice(catalogue, id, file, line);
      catalogue.set(id, entry);
    }
    state = foldStep(state, record);
  }
  return {
    kind: "slice",
    file,
    header,
    maxSteps,
    overrides,
    state,
    catalogue: sorted(catalogue),
    text,
  };
}

/**
 * Reads and folds a slice's journal.
 *
 * @throws {SessionError} As {@linkcode parseAnySession}, and
 *   `session_invalid` for an MCP server's session.
 */
export async function parseSession(
  slot: SessionSlot,
  key: Uint8Array | undefined,
): Promise<ParsedSession> {
  const parsed = await parseAnySession(slot, key);
  if (parsed.kind === "slice") return parsed;
  throw new SessionError(
    "session_invalid",
    `Session ${slot.where} is the session of an MCP server (loom mcp --session), not of a slice: loom run cannot resume it`,
    { file: parsed.file, line: 1 },
  );
}

/**
 * Checks that a slot holds a journal, without reading it.
 *
 * @throws {SessionError} `session_outdated` or `session_missing`.
 */
export async function requireJournal(slot: SessionSlot): Promise<void> {
  if (await slot.journal.exists()) return;
  const old = await slot.outdated();
  if (old !== undefined) {
    throw new SessionError(
      "session_outdated",
      `Session ${slot.where} was written by an older Loom (session.json, format loom-session/1), whose state is not authenticated and cannot be resumed safely: start a new session with loom run --session, or finish this one with the Loom release that wrote it`,
      { file: old },
    );
  }
  throw new SessionError(
    "session_missing",
    `No session in ${slot.where}: ${
      slot.journal.where === slot.where
        ? "its journal does not exist"
        : `${basenameOf(slot.journal.where)} does not exist`
    }`,
    { file: slot.journal.where },
  );
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Whether an error is the storage layer's (passed on unchanged). */
function isStorageFailure(error: unknown): boolean {
  return (error as { name?: unknown })?.name === "StorageError";
}

function sequenced(seq: number, index: number, file: string, line: number) {
  if (seq !== index + 1) {
    throw new SessionError(
      "session_invalid",
      `Session journal ${file} is invalid at line ${line}: record ${seq} stands where record ${
        index + 1
      } belongs`,
      { file, line },
    );
  }
}

function twice(
  catalogue: ReadonlyMap<string, CatalogueEntry>,
  id: string,
  file: string,
  line: number,
) {
  if (catalogue.has(id)) {
    throw new SessionError(
      "session_invalid",
      `Session journal ${file} is invalid at line ${line}: ${id} is catalogued twice`,
      { file, line },
    );
  }
}

function sorted(
  catalogue: Map<string, CatalogueEntry>,
): Map<string, CatalogueEntry> {
  return new Map(
    [...catalogue].sort((a, b) => idNumber(a[0]) - idNumber(b[0])),
  );
}
