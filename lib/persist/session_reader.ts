/**
 * A session read for showing it (`loom view`): any kind — a slice's, an MCP
 * server's, the gateway's, the SDK adapters' — in a folder or any store,
 * opened read-only (every write refused before the back-end), its journal
 * folded once, and each result body read only when asked for, verified
 * against its digest. Nothing is written, no lease taken, no tool called.
 *
 * @module
 */
import type { ContextPolicy } from "../briefing/briefing.ts";
import type {
  ContextReportRequest,
  ContextReportTest,
  StopReason,
} from "../briefing/context_report.ts";
import type { StoredResult } from "../store/result_store.ts";
import type { SessionSlot, Storage } from "../storage/storage.ts";
import { openStorage } from "../storage/open_storage.ts";
import { readOnlySlot, readOnlyStorage } from "../storage/read_only.ts";
import { messageOf } from "../errors.ts";
import { type AnySession, parseAnySession } from "./_read_session.ts";
import type { CatalogueEntry } from "./_schema.ts";
import { verifyResult } from "./_session_results.ts";
import { placeSession } from "./_session_place.ts";
import { SessionError } from "./session_error.ts";

/**
 * What kind of session: `slice` (`loom run --session`), `gateway`
 * (`loom mcp --servers`: results of upstream tools), `mcp` (`loom mcp
 * --root`), `adapter` (the SDK adapters' store, which serves no root).
 */
export type SessionKind = "slice" | "gateway" | "mcp" | "adapter";

/** One catalogued result, without its body. */
export interface ReadResult {
  /** `result-<n>`. */
  readonly id: string;
  /** What produced it (`repository.inspect src/a.ts`, `fs/read_file text`). */
  readonly origin: string;
  /** The producing tool (`server/tool` for the gateway's). */
  readonly tool: string;
  /** SHA-256 of the content. */
  readonly sha256: string;
  /** Size in bytes. */
  readonly bytes: number;
  /** `complete` or `partial`. */
  readonly capture: "complete" | "partial";
  /**
   * Where the body is: `persisted` (in the store), `inline` (in the
   * journal), `reread` (the workspace file it was read from), `recall`
   * (not kept: the gateway calls the tool again on resume).
   */
  readonly source: "persisted" | "inline" | "reread" | "recall";
  /** The media type of an image, audio or blob result; `null` for text. */
  readonly media_type: string | null;
}

/** A session's journal, folded: what a viewer shows of it. */
export interface SessionReading {
  /** The kind of session. */
  readonly kind: SessionKind;
  /** The session's name (its header's). */
  readonly name: string;
  /** Where it lives (a folder, or `store#name` with secrets masked). */
  readonly where: string;
  /** The workspace (slice) or served root; `null` for the adapters'. */
  readonly root: string | null;
  /** The context policy; `null` for a server's session. */
  readonly policy: ContextPolicy | null;
  /** The model spec; `null` for a server's session. */
  readonly model: string | null;
  /** How the run ended; `null` while it can continue (or for a server). */
  readonly stop: StopReason | null;
  /** Steps taken. */
  readonly steps: number;
  /** The step budget; `null` for a server's session. */
  readonly max_steps: number | null;
  /** The latest revision. */
  readonly revision: string | null;
  /** Retirement checkpoints. */
  readonly checkpoints: number;
  /** Successful lookups. */
  readonly retrievals: number;
  /** Model calls answered. */
  readonly model_calls: number;
  /** The context-report lines of every request, in order. */
  readonly requests: readonly ContextReportRequest[];
  /** Every test run, in step order. */
  readonly tests: readonly ContextReportTest[];
  /** The catalogued results, in id order. */
  readonly results: readonly ReadResult[];
}

/** Options of {@linkcode SessionReader.open}. */
export interface SessionReaderOptions {
  /**
   * The store the session is in (opened read-only by the caller, or a URL
   * this reader opens read-only and closes); without one, `root` is a
   * session folder.
   */
  readonly store?: string | Storage;
}

/** A verified result body, or why it cannot be shown. */
export type ReadBody =
  | { readonly ok: true; readonly result: StoredResult }
  | { readonly ok: false; readonly reason: string };

/**
 * One session, open for reading.
 *
 * @example
 * ```ts
 * import { SessionReader } from "./session_reader.ts";
 * import assert from "node:assert/strict";
 * await assert.rejects(
 *   SessionReader.open(await Deno.makeTempDir()),
 *   (e: unknown) => (e as { code?: string }).code === "session_missing",
 * );
 * ```
 */
export class SessionReader {
  /** The folded journal. */
  readonly reading: SessionReading;
  readonly #slot: SessionSlot;
  readonly #session: AnySession;
  readonly #owned: Storage | undefined;

  private constructor(
    slot: SessionSlot,
    session: AnySession,
    owned: Storage | undefined,
  ) {
    this.#slot = slot;
    this.#session = session;
    this.#owned = owned;
    this.reading = readingOf(slot, session);
  }

  /**
   * Opens a session and folds its journal (without the session key: the
   * chain is not checked, as `loom session show` does not; every body read
   * is checked against its digest).
   *
   * @param root The session folder, or its name in the store.
   * @param options The store.
   * @returns The reader; close it.
   * @throws {SessionError} `session_missing`, `session_outdated`,
   *   `session_invalid`.
   * @throws {StorageError} When the store cannot be opened.
   */
  static async open(
    root: string,
    options: SessionReaderOptions = {},
  ): Promise<SessionReader> {
    const store = typeof options.store === "string"
      ? await openStorage(options.store, { readOnly: true })
      : options.store === undefined
      ? undefined
      : readOnlyStorage(options.store);
    const owned = typeof options.store === "string" ? store : undefined;
    try {
      const place = await placeSession(root, store);
      const slot = readOnlySlot(place.slot);
      const session = await parseAnySession(slot, undefined);
      return new SessionReader(slot, session, owned);
    } catch (error) {
      await owned?.close();
      throw error;
    }
  }

  /**
   * A result's body, verified against its digest: read from the store or
   * the journal, or re-read from the workspace; a result the journal does
   * not keep (a gateway's recalled one), one whose file changed, or one
   * missing or damaged is a reason instead.
   *
   * @param id `result-<n>`.
   * @returns The body, or why not.
   */
  async body(id: string): Promise<ReadBody> {
    const entry = this.#session.catalogue.get(id);
    if (entry === undefined) {
      return { ok: false, reason: `The session holds no ${id}` };
    }
    if ("recall" in entry.source) {
      return {
        ok: false,
        reason:
          `${id} was not kept: the persistence rule leaves ${entry.tool}'s results out, and only the gateway, calling the tool again, can recall it`,
      };
    }
    try {
      const result = await verifyResult(
        {
          slot: this.#slot,
          workspace: this.reading.root ?? "",
          file: this.#session.file,
        },
        id,
        entry,
      );
      if (typeof result === "string") return { ok: false, reason: result };
      return { ok: true, result };
    } catch (error) {
      if (error instanceof SessionError) {
        return { ok: false, reason: error.message };
      }
      return { ok: false, reason: `Cannot read ${id}: ${messageOf(error)}` };
    }
  }

  /** Closes the store this reader opened. */
  async close(): Promise<void> {
    await this.#owned?.close();
  }
}

function readingOf(slot: SessionSlot, doc: AnySession): SessionReading {
  const results = [...doc.catalogue].map(([id, entry]) => resultOf(id, entry));
  if (doc.kind === "mcp") {
    const gateway = [...doc.catalogue.values()].some((e) =>
      "recall" in e.source || e.tool.includes("/")
    );
    return {
      kind: doc.header.root === null ? "adapter" : gateway ? "gateway" : "mcp",
      name: doc.header.session,
      where: slot.where,
      root: doc.header.root,
      policy: null,
      model: null,
      stop: null,
      steps: 0,
      max_steps: null,
      revision: null,
      checkpoints: 0,
      retrievals: 0,
      model_calls: 0,
      requests: [],
      tests: [],
      results,
    };
  }
  const { header, state } = doc;
  return {
    kind: "slice",
    name: header.session,
    where: slot.where,
    root: header.workspace,
    policy: header.policy,
    model: header.model,
    stop: state.stop,
    steps: state.steps,
    max_steps: doc.maxSteps,
    revision: state.revision,
    checkpoints: state.checkpoints,
    retrievals: state.retrievals,
    model_calls: state.modelCalls,
    requests: state.requests,
    tests: state.records.flatMap((r) =>
      r.report.kind === "tests_run"
        ? [{
          step: r.sequence,
          exit_code: r.report.exit_code,
          timed_out: r.report.timed_out,
          revision: r.report.tested_revision,
        }]
        : []
    ),
    results,
  };
}

function resultOf(id: string, entry: CatalogueEntry): ReadResult {
  const source = entry.source;
  const mime = entry.media?.block["mimeType"] ??
    (entry.media?.block["resource"] as { mimeType?: unknown } | undefined)
      ?.mimeType;
  return {
    id,
    origin: entry.origin,
    tool: entry.tool,
    sha256: entry.sha256,
    bytes: entry.utf8_bytes,
    capture: entry.capture,
    source: "persisted" in source
      ? "persisted"
      : "inline" in source
      ? "inline"
      : "recall" in source
      ? "recall"
      : "reread",
    media_type: typeof mime === "string" ? mime : null,
  };
}
