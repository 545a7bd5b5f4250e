/**
 * Session storage: the handle a run gets only when it owns a stable storage
 * root outside the workspace. After every acknowledged step it appends one
 * HMAC-chained record to `DIR/journal.jsonl` (flushed before the step is
 * acknowledged, so a step costs the same at step 10 as at step 1,000) and
 * writes large externally bounded results to `DIR/tool-results/<sha256>.txt`
 * atomically; `DIR/lock` names the one writer. Results of self-bounding tools
 * (`repository.inspect`) are never written, only catalogued by workspace
 * path and digest, and re-read on load.
 *
 * @module
 */
import type { StopReason } from "../briefing/context_report.ts";
import type { ActionRecord } from "../briefing/report.ts";
import type { StoredResult } from "../store/result_store.ts";
import type { ContextPolicy } from "../briefing/briefing.ts";
import type {
  SliceCounters,
  SliceSnapshot,
  SliceState,
  UnavailableResult,
} from "../slice/run_state.ts";
import type { SliceTest } from "../slice/request.ts";
import { sha256Hex } from "../store/digest.ts";
import { JournalWriter } from "./_journal.ts";
import {
  type ParsedSession,
  parseSession,
  requireJournal,
} from "./_read_session.ts";
import type { Lease, SessionSlot, Storage } from "../storage/storage.ts";
import { placeSession, takeLease } from "./_session_place.ts";
import {
  type CatalogueEntry,
  describeIssue,
  JOURNAL_FORMAT,
  laterSchema,
} from "./_schema.ts";
import {
  classify,
  expandRecord,
  type ResultOrigin,
  stepRecord,
} from "./_session_records.ts";
import { catalogueResult, verifyBody } from "./_session_results.ts";
import {
  finiteOverrides,
  isWithin,
  realish,
  refuseOverlap,
} from "./_session_util.ts";
import { EphemeralSession } from "./ephemeral_session.ts";
import { SessionError } from "./session_error.ts";
import { loadSessionKey, sessionKeyPath } from "./_session_key.ts";
import type { PersistenceOverrides } from "./tool_policy.ts";

/** How a session's slice runs: written once, in the journal's header. */
export interface SessionRun {
  /** The slice's intent. */
  readonly intent: string;
  /** The context policy. */
  readonly policy: ContextPolicy;
  /** The model spec the session resumes with, e.g. `recorded:PATH`. */
  readonly model: string;
  /** The test command, or `null` when none was configured. */
  readonly test: SliceTest | null;
  /** The step budget. */
  readonly maxSteps: number;
  /** Threshold overrides in force. */
  readonly overrides?: PersistenceOverrides;
}

/** Options of {@linkcode SessionStore.create}. */
export interface CreateSessionOptions {
  /** The workspace the session belongs to; the root must lie outside it. */
  readonly workspace: string;
  /**
   * The store's URL (`file:DIR`, `sqlite:PATH`, `postgres://…`); the root
   * then names a session in it. Default: the root is a session folder.
   */
  readonly store?: string;
  /** The session name (default: the root's base name). */
  readonly session?: string;
  /** The session key file (default {@linkcode sessionKeyPath}). */
  readonly keyFile?: string;
  /** How the slice runs. */
  readonly run: SessionRun;
}

/** Options of {@linkcode SessionStore.open}. */
export interface OpenSessionOptions {
  /** The session key file (default {@linkcode sessionKeyPath}). */
  readonly keyFile?: string;
  /**
   * The store's URL (`file:DIR`, `sqlite:PATH`, `postgres://…`); the root
   * then names a session in it. Default: the root is a session folder.
   */
  readonly store?: string;
}

/** What one save of a session did (after every acknowledged step). */
export interface SessionSaveInfo {
  /** Result files written by this save (new digests only). */
  readonly written: number;
  /** New results catalogued as persisted files. */
  readonly persisted: number;
  /** New results of externally bounded tools kept inline in the journal. */
  readonly inline: number;
  /** New results of self-bounding tools, catalogued by path and digest. */
  readonly reread: number;
  /**
   * New results left out: produced by no acknowledged record, by an
   * undeclared tool, or by a self-bounding tool without a re-readable path.
   */
  readonly skipped: readonly string[];
}

/**
 * A verified session, ready to continue: pass it to `sliceSessionHooks`
 * as `resume`.
 */
export interface LoadedSession extends Omit<SessionRun, "overrides"> {
  /** The session root (real path), or `URL#name` in a store. */
  readonly root: string;
  /** The session name. */
  readonly session: string;
  /** The workspace (real path). */
  readonly workspace: string;
  /** Threshold overrides in force. */
  readonly overrides: Readonly<Record<string, number>>;
  /** How the run ended, or `null` while it can continue. */
  readonly stop: StopReason | null;
  /**
   * How far the run got: its counters at the last acknowledged step (the
   * rest of its run state is internal and travels with it to the resume).
   */
  readonly state: SliceCounters;
  /** Verified results in id order, with their ids and digests. */
  readonly results: readonly StoredResult[];
  /** Results whose re-read source changed or disappeared. */
  readonly unavailable: readonly UnavailableResult[];
  /** Bytes of a torn last journal line that were ignored (and cut off). */
  readonly tornBytes: number;
}

const token = Symbol("SessionStore");

// Saving is for the session hooks (and tests), not a public method, so the
// run state it takes stays out of the public API: see saveSnapshot().
let save: (
  store: SessionStore,
  snapshot: SliceSnapshot,
) => Promise<SessionSaveInfo>;

/** Full run states of loaded sessions, by their public `state` object. */
const runStates = new WeakMap<SliceCounters, SliceState>();

/**
 * The owner's handle of a session root: the only object that writes there,
 * holding its lock until {@linkcode SessionStore.close}. Get one with
 * {@linkcode SessionStore.create} (new session) or
 * {@linkcode SessionStore.open} (resume); stages that must not persist get
 * {@linkcode SessionStore.fork}.
 *
 * @example Save a run, then open the session again
 * ```ts
 * import { SessionStore, sliceSessionHooks } from "@loom/loom/session";
 * import { runSlice } from "@loom/loom/slice";
 * import { ScriptedProvider, tempWorkspace } from "@loom/loom/testing";
 * import assert from "node:assert/strict";
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * await using workspace = await tempWorkspace({ "notes.txt": "todo\n" });
 * const root = await Deno.makeTempDir();
 * const run = { intent: "Nothing to change", policy: "bounded", model: "scripted", test: null, maxSteps: 2 } as const;
 * const session = await SessionStore.create(root, { workspace: workspace.path, keyFile, run });
 * const provider = new ScriptedProvider([
 *   { arguments: { action: "slice.complete" } },
 *   { arguments: { summary: "Nothing to change" } },
 * ]);
 * await runSlice(
 *   { intent: run.intent, workspace: workspace.path, maxSteps: 2, provider },
 *   { contextPolicy: "bounded", session: sliceSessionHooks(session) },
 * );
 * await session.close();
 * const again = await SessionStore.open(root, { keyFile });
 * const loaded = await again.load();
 * await again.close();
 * assert.equal(loaded.stop, "completed");
 * assert.equal(loaded.state.modelCalls, 2);
 * ```
 */
export class SessionStore {
  /** Always `owner`. */
  readonly kind: "owner" = "owner";
  /** Always `true`. */
  readonly persists: true = true;
  /**
   * The session root (real path), or where the session lives in a store
   * (`sqlite:PATH#name`, a redacted `postgres://…#name`).
   */
  readonly root: string;
  /** The workspace (real path). */
  readonly workspace: string;
  /** The session name. */
  readonly session: string;
  /** The stale lock this handle took over, described, or `null`. */
  readonly tookOverLock: string | null;
  readonly #forbidden: readonly string[];
  readonly #writer: JournalWriter;
  readonly #lock: Lease;
  readonly #slot: SessionSlot;
  readonly #owned: Storage | undefined;
  readonly #parsed: ParsedSession | undefined;
  readonly #written = new Set<string>();
  readonly #origins = new Map<string, ResultOrigin>();
  /** Results seen without a producing record yet (normally none). */
  #pending: string[] = [];
  #seq: number;
  #saved: { records: number; requests: number };
  #nextResult: number;
  #maxSteps: number;
  #overrides: Readonly<Record<string, number>>;

  private constructor(
    key: symbol,
    at: {
      slot: SessionSlot;
      owned: Storage | undefined;
      forbidden: readonly string[];
      workspace: string;
      session: string;
      writer: JournalWriter;
      lock: Lease;
      parsed?: ParsedSession;
      maxSteps: number;
      overrides: Readonly<Record<string, number>>;
    },
  ) {
    if (key !== token) {
      throw new TypeError(
        "Cannot construct a SessionStore directly: use SessionStore.create or SessionStore.open",
      );
    }
    this.root = at.slot.where;
    this.workspace = at.workspace;
    this.session = at.session;
    this.#slot = at.slot;
    this.#owned = at.owned;
    this.#forbidden = [...new Set(at.forbidden)];
    this.#writer = at.writer;
    this.#lock = at.lock;
    this.tookOverLock = at.lock.tookOver;
    this.#parsed = at.parsed;
    this.#maxSteps = at.maxSteps;
    this.#overrides = at.overrides;
    const parsed = at.parsed;
    this.#seq = parsed === undefined ? 0 : parsed.text.lines.length - 1;
    this.#saved = {
      records: parsed?.state.records.length ?? 0,
      requests: parsed?.state.requests.length ?? 0,
    };
    let next = 1;
    for (const id of parsed?.catalogue.keys() ?? []) {
      next = Math.max(next, Number(id.slice("result-".length)) + 1);
    }
    this.#nextResult = next;
    if (parsed !== undefined) {
      classify(parsed.state.records as ActionRecord[], this.#origins);
    }
  }

  /**
   * Starts a new session in `root` (created when missing): takes its lock
   * and writes the journal's header.
   *
   * @param root The session root; must lie outside the workspace.
   * @param options The workspace, the run, a session name and key file.
   * @returns The owner's handle.
   * @throws {SessionError} `session_inside_workspace` when the root is the
   *   workspace, lies inside it or contains it; `session_exists` when the
   *   root already holds a session; `session_locked`; `session_key_invalid`.
   * @throws {Deno.errors.NotFound} When the workspace does not exist.
   *
   * @example
   * ```ts
   * import { SessionError, SessionStore } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * const run = { intent: "x", policy: "bounded", model: "recorded:/r.json", test: null, maxSteps: 1 } as const;
   * await assert.rejects(
   *   SessionStore.create(`${workspace}/.loom`, { workspace, run }),
   *   (e: unknown) => e instanceof SessionError && e.code === "session_inside_workspace",
   * );
   * ```
   */
  static async create(
    root: string,
    options: CreateSessionOptions,
  ): Promise<SessionStore> {
    const workspace = await Deno.realPath(options.workspace);
    const place = await placeSession(root, options.store);
    const { slot } = place;
    let lock: Lease | undefined;
    try {
      for (const path of place.forbidden) refuseOverlap(path, workspace);
      const old = await slot.outdated();
      if (old !== undefined || await slot.journal.exists()) {
        const file = old ?? slot.journal.where;
        throw new SessionError(
          "session_exists",
          `Cannot start a session in ${slot.where}: it already holds ${
            old !== undefined
              ? "session.json"
              : slot.journal.where === slot.where
              ? "a session journal"
              : slot.journal.where.slice(
                slot.journal.where.lastIndexOf("/") + 1,
              )
          }; resume it or choose another ${
            options.store === undefined ? "directory" : "session name"
          }`,
          { file },
        );
      }
      await slot.prepare();
      const forbidden = place.forbidden.map((path) => realish(path));
      for (const path of forbidden) refuseOverlap(path, workspace);
      const key = await sessionKey(options.keyFile, [...forbidden, workspace]);
      lock = await takeLease(slot);
      const run = options.run;
      const session = options.session ?? slot.name;
      const overrides = finiteOverrides(run.overrides ?? {});
      const writer = JournalWriter.create(slot.journal, key);
      try {
        await writer.append({
          seq: 0,
          type: "header",
          format: JOURNAL_FORMAT,
          kind: "slice",
          id: crypto.randomUUID(),
          session,
          workspace,
          intent: run.intent,
          policy: run.policy,
          model: run.model,
          test: run.test === null ? null : {
            command: [...run.test.command],
            timeout_ms: run.test.timeoutMs,
          },
          max_steps: run.maxSteps,
          overrides,
        });
      } catch (error) {
        await writer.close();
        if ((error as { code?: unknown })?.code === "journal_conflict") {
          throw new SessionError(
            "session_exists",
            `Cannot start a session in ${slot.where}: another process just created one there`,
            { file: slot.journal.where, cause: error },
          );
        }
        throw error;
      }
      return new SessionStore(token, {
        slot,
        owned: place.owned,
        forbidden: [...new Set([...forbidden, ...place.forbidden])],
        workspace,
        session,
        writer,
        lock,
        maxSteps: run.maxSteps,
        overrides,
      });
    } catch (error) {
      await lock?.release();
      await place.owned?.close();
      throw error;
    }
  }

  /**
   * Opens a session to resume it: takes its lock (or a stale one), verifies
   * the journal's chain and cuts off a torn last line; then
   * {@linkcode SessionStore.load} verifies the results.
   *
   * @param root The session root.
   * @param options The key file.
   * @returns The owner's handle.
   * @throws {SessionError} `session_missing`, `session_outdated`,
   *   `session_invalid` (naming file and line), `session_tampered` (naming
   *   the first bad record), `session_locked`, `session_key_invalid` or
   *   `session_inside_workspace`.
   *
   * @example
   * ```ts
   * import { SessionError, SessionStore } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const keyFile = `${await Deno.makeTempDir()}/session.key`;
   * await assert.rejects(
   *   SessionStore.open(await Deno.makeTempDir(), { keyFile }),
   *   (e: unknown) => e instanceof SessionError && e.code === "session_missing",
   * );
   * ```
   */
  static async open(
    root: string,
    options: OpenSessionOptions = {},
  ): Promise<SessionStore> {
    const place = await placeSession(root, options.store);
    const { slot } = place;
    let lock: Lease | undefined;
    try {
      const key = await journalKey(slot, place.forbidden, options.keyFile);
      lock = await takeLease(slot);
      const { parsed, workspace } = await parseAt(slot, place.forbidden, key);
      const writer = await JournalWriter.continue(
        slot.journal,
        key,
        parsed.text,
      );
      return new SessionStore(token, {
        slot,
        owned: place.owned,
        forbidden: place.forbidden,
        workspace,
        session: parsed.header.session,
        writer,
        lock,
        parsed,
        maxSteps: parsed.maxSteps,
        overrides: parsed.overrides,
      });
    } catch (error) {
      await lock?.release();
      await place.owned?.close();
      throw error;
    }
  }

  /**
   * Paths the slice must refuse to touch (commission's `forbiddenRoots`):
   * the session root as given and as resolved.
   */
  get forbiddenRoots(): readonly string[] {
    return this.#forbidden;
  }

  /**
   * A handle for an ephemeral stage that shares this session's id but can
   * never write to its root.
   *
   * @param stage What the stage is.
   * @returns An {@linkcode EphemeralSession}.
   *
   * @example
   * ```ts
   * import { SessionStore } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const session = await SessionStore.create(await Deno.makeTempDir(), {
   *   workspace: await Deno.makeTempDir(), session: "run-7",
   *   keyFile: `${await Deno.makeTempDir()}/session.key`,
   *   run: { intent: "x", policy: "bounded", model: "recorded:/r.json", test: null, maxSteps: 1 },
   * });
   * const compactor = session.fork("compactor");
   * await session.close();
   * assert.equal(compactor.session, "run-7");
   * assert.equal("save" in compactor, false);
   * ```
   */
  fork(stage: string): EphemeralSession {
    return new EphemeralSession(stage, this.session);
  }

  /**
   * Records a new step budget or threshold overrides (a resume with flags);
   * writes nothing when both are unchanged.
   *
   * @param settings The budget and the overrides now in force.
   */
  async updateSettings(
    settings: { maxSteps: number; overrides: PersistenceOverrides },
  ): Promise<void> {
    const overrides = finiteOverrides(settings.overrides);
    if (
      settings.maxSteps === this.#maxSteps &&
      JSON.stringify(overrides) === JSON.stringify(this.#overrides)
    ) return;
    await this.#append({
      seq: this.#seq + 1,
      type: "settings",
      max_steps: settings.maxSteps,
      overrides,
    });
    this.#maxSteps = settings.maxSteps;
    this.#overrides = overrides;
  }

  static {
    save = (store, snapshot) => store.#save(snapshot);
  }

  /** See {@linkcode saveSnapshot}. */
  async #save(snapshot: SliceSnapshot): Promise<SessionSaveInfo> {
    if (
      snapshot.records.length < this.#saved.records ||
      snapshot.requests.length < this.#saved.requests
    ) {
      throw new TypeError(
        `Cannot save session ${this.root}: records and report lines only grow, but the snapshot has fewer than were saved`,
      );
    }
    const records = snapshot.records.slice(this.#saved.records);
    classify(records, this.#origins);
    const results: Record<string, CatalogueEntry> = {};
    const files: StoredResult[] = [];
    const skipped: string[] = [];
    const counts = { persisted: 0, inline: 0, reread: 0 };
    const pending: string[] = [];
    const ids = [...this.#pending];
    let next = this.#nextResult;
    while (snapshot.results.get(`result-${next}`) !== undefined) {
      ids.push(`result-${next}`);
      next += 1;
    }
    for (const id of ids) {
      const result = snapshot.results.get(id);
      if (result === undefined) continue;
      const origin = this.#origins.get(id);
      // No acknowledged record produced it (yet): never stored unless one does.
      if (origin === undefined) pending.push(id);
      const entry = origin === undefined
        ? undefined
        : catalogueResult(result, origin, this.#overrides);
      if (entry === undefined) {
        skipped.push(result.id);
        continue;
      }
      results[result.id] = entry;
      const kind = Object.keys(entry.source)[0] as keyof typeof counts;
      counts[kind] += 1;
      if (kind === "persisted") files.push(result);
    }
    const value = stepRecord(this.#seq + 1, snapshot, this.#saved, results);
    const valid = laterSchema.safeParse(JSON.parse(JSON.stringify(value)));
    if (!valid.success) {
      throw new TypeError(
        `Cannot save session ${this.root}: the snapshot is invalid: ${
          describeIssue(valid.error)
        }`,
      );
    }
    // A lease found lost stops the step before it writes anything.
    await this.#lock.check();
    let written = 0;
    for (const { sha256, bytes } of files) {
      if (this.#written.has(sha256)) continue;
      if (sha256Hex(bytes) !== sha256) {
        throw new TypeError(
          `Cannot persist ${sha256}: the result's bytes do not match its digest`,
        );
      }
      await this.#slot.bodies.put(sha256, bytes);
      this.#written.add(sha256);
      written += 1;
    }
    await this.#append(value);
    this.#saved = {
      records: snapshot.records.length,
      requests: snapshot.requests.length,
    };
    this.#nextResult = next;
    this.#pending = pending;
    return { written, ...counts, skipped };
  }

  /**
   * Verifies every result of the opened session against its digest. Reads
   * only.
   *
   * @returns The verified session; results whose re-read source changed or
   *   disappeared are listed in `unavailable`.
   * @throws {SessionError} `result_missing` or `result_corrupted` naming the
   *   file; `session_missing` for a handle from
   *   {@linkcode SessionStore.create}, which has nothing to load.
   */
  async load(): Promise<LoadedSession> {
    const parsed = this.#parsed;
    if (parsed === undefined) {
      throw new SessionError(
        "session_missing",
        `Session ${this.root} was just created: open it to load it`,
      );
    }
    const loaded = await verifyParsed(parsed, this.#slot, this.workspace);
    for (const entry of parsed.catalogue.values()) {
      if ("persisted" in entry.source) this.#written.add(entry.sha256);
    }
    return { ...loaded, maxSteps: this.#maxSteps, overrides: this.#overrides };
  }

  /** Closes the journal, releases the lock (the lease) and the store. */
  async close(): Promise<void> {
    await this.#writer.close();
    await this.#lock.release();
    await this.#owned?.close();
  }

  /** Same as {@linkcode SessionStore.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #append(value: Record<string, unknown>): Promise<void> {
    await this.#lock.check();
    await this.#writer.append(value);
    this.#seq = value.seq as number;
  }
}

/**
 * Appends the state after an acknowledged step to the session's journal:
 * first every new result file (atomically), then one flushed record with
 * the counters and what is new since the last save. An externally bounded
 * result goes to a file when {@linkcode shouldPersist} says so and stays
 * inline otherwise; self-bounding results are catalogued by workspace path
 * and digest only. The session hooks call it; tests call it directly.
 *
 * @param store The owner's handle.
 * @param snapshot The run's state; records and report lines only grow.
 * @returns What this save wrote and left out.
 * @throws {TypeError} When the snapshot would not make a valid record.
 */
export function saveSnapshot(
  store: SessionStore,
  snapshot: SliceSnapshot,
): Promise<SessionSaveInfo> {
  return save(store, snapshot);
}

/**
 * The whole run state of a loaded session (records with descriptors
 * rebuilt, notes, last turn, report lines), which its public `state` only
 * counts.
 *
 * @param loaded A session from {@linkcode SessionStore.load} or
 *   {@linkcode verifySession}.
 * @returns Its run state.
 * @throws {TypeError} When `loaded.state` was not made by either.
 */
export function runStateOf(loaded: LoadedSession): SliceState {
  const state = runStates.get(loaded.state);
  if (state === undefined) {
    throw new TypeError(
      `Cannot resume session ${loaded.root}: its state was not loaded by SessionStore.load()`,
    );
  }
  return state;
}

/**
 * Verifies a session's chain and results (as {@linkcode SessionStore.load})
 * without taking its lock or changing anything, for `loom session show
 * --verify`.
 *
 * @param root The session root.
 * @param options The key file.
 * @returns The verified session.
 * @throws {SessionError} As {@linkcode SessionStore.open} (except
 *   `session_locked`) and {@linkcode SessionStore.load}.
 *
 * @example
 * ```ts
 * import { SessionStore } from "@loom/loom/session";
 * import { verifySession } from "./session_store.ts";
 * import assert from "node:assert/strict";
 * const keyFile = `${await Deno.makeTempDir()}/session.key`;
 * const root = await Deno.makeTempDir();
 * const store = await SessionStore.create(root, {
 *   workspace: await Deno.makeTempDir(), keyFile,
 *   run: { intent: "x", policy: "bounded", model: "recorded:/r.json", test: null, maxSteps: 1 },
 * });
 * const verified = await verifySession(root, { keyFile });
 * await store.close();
 * assert.equal(verified.state.steps, 0);
 * ```
 */
export async function verifySession(
  root: string,
  options: OpenSessionOptions = {},
): Promise<LoadedSession> {
  const place = await placeSession(root, options.store);
  try {
    const key = await journalKey(place.slot, place.forbidden, options.keyFile);
    const { parsed, workspace } = await parseAt(
      place.slot,
      place.forbidden,
      key,
    );
    return await verifyParsed(parsed, place.slot, workspace);
  } finally {
    await place.owned?.close();
  }
}

/** The slot's journal must exist (`session_missing` before any key or lock). */
async function journalKey(
  slot: SessionSlot,
  forbidden: readonly string[],
  keyFile: string | undefined,
): Promise<Uint8Array> {
  await requireJournal(slot);
  return await sessionKey(keyFile, forbidden);
}

/**
 * The session key, refused when it lies inside one of the `forbidden`
 * paths (a session folder, a database file, the workspace).
 *
 * @param keyFile The key file (default {@linkcode sessionKeyPath}).
 * @param forbidden Paths the key must not lie inside.
 * @returns The key.
 * @throws {SessionError} `session_key_invalid`.
 */
export function sessionKeyFor(
  keyFile: string | undefined,
  forbidden: readonly string[],
): Promise<Uint8Array> {
  return sessionKey(keyFile, forbidden);
}

/** The key, refused when it lies inside a session root or the workspace. */
async function sessionKey(
  keyFile: string | undefined,
  forbidden: readonly string[],
): Promise<Uint8Array> {
  const path = realish(keyFile ?? sessionKeyPath());
  for (const dir of forbidden) {
    if (isWithin(path, dir)) {
      throw new SessionError(
        "session_key_invalid",
        `Cannot use the session key ${path}: it lies inside ${dir}, where the session's writer or the model could read it`,
        { file: path },
      );
    }
  }
  return await loadSessionKey(path);
}

async function parseAt(
  slot: SessionSlot,
  forbidden: readonly string[],
  key: Uint8Array,
): Promise<{ parsed: ParsedSession; workspace: string }> {
  const parsed = await parseSession(slot, key);
  const workspace = realish(parsed.header.workspace);
  for (const path of forbidden) refuseOverlap(path, workspace);
  return { parsed, workspace };
}

async function verifyParsed(
  parsed: ParsedSession,
  slot: SessionSlot,
  workspace: string,
): Promise<LoadedSession> {
  const root = slot.where;
  const results: StoredResult[] = [];
  const unavailable: UnavailableResult[] = [];
  const bytesById = new Map<string, Uint8Array>();
  const at = { slot, workspace, file: parsed.file };
  for (const [id, entry] of parsed.catalogue) {
    const { sha256, origin, capture } = entry;
    const bytes = await verifyBody(at, id, entry);
    if (typeof bytes === "string") {
      unavailable.push({
        id,
        sha256,
        origin,
        capture,
        utf8_bytes: entry.utf8_bytes,
        reason: "digest_mismatch",
        detail: bytes,
      });
      continue;
    }
    bytesById.set(id, bytes);
    results.push({ id, sha256, origin, capture, bytes });
  }
  const { header, state } = parsed;
  return {
    root,
    session: header.session,
    workspace,
    intent: header.intent,
    policy: header.policy,
    model: header.model,
    test: header.test === null
      ? null
      : { command: header.test.command, timeoutMs: header.test.timeout_ms },
    maxSteps: parsed.maxSteps,
    overrides: parsed.overrides,
    stop: state.stop,
    state: runState({
      ...state,
      records: state.records.map((r) =>
        expandRecord(r as ActionRecord, bytesById)
      ),
    }),
    results,
    unavailable,
    tornBytes: parsed.text.torn,
  };
}

/** A run state, remembered as the full state behind its public counters. */
function runState(state: SliceState): SliceState {
  runStates.set(state, state);
  return state;
}
