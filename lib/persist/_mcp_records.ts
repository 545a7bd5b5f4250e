/**
 * What an MCP session records and reads back, apart from the session's
 * life: the catalogue entry of a new result and the record of a
 * catalogued one, the header a new journal begins with, the check that a
 * parsed journal is this server's MCP session, and the verification of
 * every body at open.
 *
 * @module
 */
import type { StoredResult } from "../store/result_store.ts";
import type { SessionSlot } from "../storage/storage.ts";
import { sealRecord } from "./_journal.ts";
import type { AnySession } from "./_read_session.ts";
import { type CatalogueEntry, JOURNAL_FORMAT } from "./_schema.ts";
import { verifyResult } from "./_session_results.ts";
import { SessionError } from "./session_error.ts";

/** The call behind a gateway result whose body was not persisted. */
export interface McpRecall {
  /** The upstream server's entry name. */
  readonly server: string;
  /** The upstream tool. */
  readonly tool: string;
  /** The part of the answer the result holds, e.g. `content[0]`. */
  readonly part: string;
  /** The call's arguments, when they were small enough to keep. */
  readonly arguments?: Readonly<Record<string, unknown>>;
}

/** A media result's content block, without its data. */
export interface McpMedia {
  /** The block. */
  readonly block: Readonly<Record<string, unknown>>;
  /** Where the data goes back. */
  readonly field: "data" | "resource.blob";
}

/** One catalogued result of an MCP session, its body kept or not. */
export interface McpSessionRecord {
  /** The result id. */
  readonly id: string;
  /** Its digest. */
  readonly sha256: string;
  /** What produced it. */
  readonly origin: string;
  /** `complete` or `partial`. */
  readonly capture: "complete" | "partial";
  /** Its size. */
  readonly utf8_bytes: number;
  /** When it was stored (ms since the epoch), for a gateway result. */
  readonly stored_at?: number;
  /** The content block of a media result. */
  readonly media?: McpMedia;
  /** Set when only the descriptor was kept: the call to make again. */
  readonly recall?: McpRecall;
}

/** What {@linkcode McpSession.save} records besides the result (the gateway). */
export interface McpSaveOptions {
  /** Keep only the descriptor and this call, not the body. */
  readonly recall?: McpRecall;
  /** The content block of a media result. */
  readonly media?: McpMedia;
  /** Record when the result was stored. */
  readonly stamped?: boolean;
}

/** Creates the journal's header, unless another server just did. */
export async function createHeader(
  slot: SessionSlot,
  key: Uint8Array,
  root: string | null,
): Promise<void> {
  const header = sealRecord(key, "", {
    seq: 0,
    type: "header",
    format: JOURNAL_FORMAT,
    kind: "mcp",
    id: crypto.randomUUID(),
    session: slot.name,
    root,
  });
  await slot.journal.extend(
    0,
    (tail) => tail.records.length > 0 ? [] : [header.text],
  );
}

/** The catalogue entry of a new result. */
export function entryOf(
  result: Omit<StoredResult, "id">,
  options: McpSaveOptions,
): CatalogueEntry {
  return {
    sha256: result.sha256,
    origin: result.origin,
    capture: result.capture,
    utf8_bytes: result.bytes.length,
    tool: toolOf(result.origin),
    source: options.recall === undefined
      ? { persisted: `tool-results/${result.sha256}.txt` }
      : {
        recall: {
          ...options.recall,
          ...(options.recall.arguments === undefined
            ? {}
            : { arguments: { ...options.recall.arguments } }),
        },
      },
    ...(options.stamped ? { stored_at: Date.now() } : {}),
    ...(options.media === undefined ? {} : {
      media: {
        block: { ...options.media.block },
        field: options.media.field,
      },
    }),
  };
}

/** The MCP session of a parsed journal, refusing a slice's or another root's. */
export function mcpSession(
  parsed: AnySession,
  slot: SessionSlot,
  root: string | null,
): Extract<AnySession, { kind: "mcp" }> {
  if (parsed.kind !== "mcp") {
    throw new SessionError(
      "session_invalid",
      `Session journal ${parsed.file} is not the session of an MCP server (it is a slice's, written by loom run); give loom mcp its own --session`,
      { file: parsed.file, line: 1 },
    );
  }
  if (parsed.header.root !== root) {
    const named = (r: string | null) =>
      r === null ? "no root (an SDK adapter's store)" : `the root ${r}`;
    throw new SessionError(
      "session_invalid",
      `Session ${slot.where} belongs to ${named(parsed.header.root)}, not ${
        named(root)
      }; give each its own session`,
      { file: parsed.file, line: 1 },
    );
  }
  return parsed;
}

/** The catalogued results, each body verified against its digest. */
export async function verified(
  slot: SessionSlot,
  root: string | null,
  file: string,
  catalogue: ReadonlyMap<string, CatalogueEntry>,
): Promise<StoredResult[]> {
  const results: StoredResult[] = [];
  for (const [id, entry] of catalogue) {
    // A gateway result kept as its call only has no body to verify.
    if ("recall" in entry.source) continue;
    if (!("persisted" in entry.source)) {
      throw new SessionError(
        "session_invalid",
        `Session journal ${file} is invalid: ${id} of an MCP session must be persisted`,
        { file },
      );
    }
    // Only a re-read source reads the workspace, and an MCP session's
    // results are all persisted (checked above).
    const workspace = root ?? slot.where;
    const result = await verifyResult({ slot, workspace, file }, id, entry);
    if (typeof result === "string") {
      throw new SessionError("result_corrupted", result, { file });
    }
    results.push(result);
  }
  return results;
}

/** The tool of an origin such as `inspect_files a.txt`: its first word. */
function toolOf(origin: string): string {
  return origin.split(/\s/, 1)[0] || "mcp";
}

function recallOf(
  source: Extract<CatalogueEntry["source"], { recall: unknown }>,
): McpRecall {
  const { server, tool, part, arguments: args } = source.recall;
  return {
    server,
    tool,
    part,
    ...(args === undefined ? {} : { arguments: args }),
  };
}

/** One catalogue entry as a record. */
export function recordOf(id: string, entry: CatalogueEntry): McpSessionRecord {
  return {
    id,
    sha256: entry.sha256,
    origin: entry.origin,
    capture: entry.capture,
    utf8_bytes: entry.utf8_bytes,
    ...(entry.stored_at === undefined ? {} : { stored_at: entry.stored_at }),
    ...(entry.media === undefined ? {} : { media: entry.media }),
    ...("recall" in entry.source ? { recall: recallOf(entry.source) } : {}),
  };
}
