/**
 * Session storage: the handle a run gets only when it owns a stable storage
 * root. It persists tool results and the session state so a stopped slice
 * can resume; nothing else can write there (ephemeral stages get an
 * {@linkcode EphemeralSession}).
 *
 * Layout of a session root `DIR` (which must lie outside the workspace):
 *
 * ```
 * DIR/session.json                  state, event archive, result catalogue
 * DIR/tool-results/<sha256>.txt     bodies of large externally bounded results
 * ```
 *
 * Both are written atomically (temp file in the same directory, flushed,
 * renamed). File names come only from SHA-256 digests. A result of an
 * externally bounded tool (`tests.run`) goes to `tool-results/` only when
 * {@linkcode shouldPersist} says so (its size in characters is above the
 * tool's effective threshold); a smaller one is kept inline in its
 * catalogue entry. Both are verified against their digest on load. Results
 * of self-bounding tools (`repository.inspect`) are never written, not even
 * inside `session.json`: the catalogue names their workspace path and
 * digest, and a load re-reads and verifies them. `session.json` never holds
 * a preview, nor the body of a persisted or self-bounding result.
 *
 * @module
 */
import { join } from "node:path";
import type { StopReason } from "../briefing/context_report.ts";
import type { ActionRecord } from "../briefing/report.ts";
import { serializeEvent, toEvent } from "../briefing/event.ts";
import type { StoredResult } from "../store/result_store.ts";
import type { SliceTest } from "../slice/request.ts";
import type {
  SliceProgressState,
  UnavailableResultEntry,
} from "../slice/checkpoint.ts";
import { writeAtomic } from "./_atomic.ts";
import { sha256Hex } from "../store/digest.ts";
import { isCleanRelative, realish } from "./_paths.ts";
import {
  describeIssue,
  SESSION_FORMAT,
  type SessionJson,
  sessionSchema,
} from "./_schema.ts";
import { EphemeralSession } from "./ephemeral_session.ts";
import { SessionError } from "./session_error.ts";
import type { PersistenceOverrides, ToolDeclaration } from "./tool_policy.ts";
import {
  type CatalogueEntry,
  compactRecord,
  expandRecord,
} from "./_session_records.ts";
import { readPersisted, rereadSource } from "./_session_results.ts";
import { buildCatalogue } from "./_session_catalogue.ts";
import {
  basenameOf,
  exists,
  finiteOverrides,
  messageOf,
  refuseOverlap,
  sortedById,
  sortedEntries,
} from "./_session_util.ts";

/**
 * Name of the session state file inside a session root.
 *
 * @example
 * ```ts
 * import { SESSION_FILE } from "./session_store.ts";
 * import assert from "node:assert/strict";
 * assert.equal(SESSION_FILE, "session.json");
 * ```
 */
export const SESSION_FILE = "session.json";
/**
 * Name of the directory of persisted results inside a session root.
 *
 * @example
 * ```ts
 * import { RESULTS_DIR } from "./session_store.ts";
 * import assert from "node:assert/strict";
 * assert.equal(RESULTS_DIR, "tool-results");
 * ```
 */
export const RESULTS_DIR = "tool-results";

/** Slice progress a session carries: numbers, notes and the last turn. */
export interface SessionProgress extends
  Pick<
    SliceProgressState,
    | "edits"
    | "refusals"
    | "consecutiveRefusals"
    | "retrievals"
    | "bytesTotal"
    | "bytesPeak"
    | "modelMs"
    | "archived"
    | "checkpoints"
    | "notes"
    | "lastTurn"
    | "requests"
  > {
  /** How the run ended, or `null` while it can continue. */
  readonly stop: StopReason | null;
}

/**
 * Progress of a session that has not taken a step.
 *
 * @example
 * ```ts
 * import { EMPTY_PROGRESS } from "./session_store.ts";
 * import assert from "node:assert/strict";
 * assert.equal(EMPTY_PROGRESS.stop, null);
 * assert.equal(EMPTY_PROGRESS.lastTurn, null);
 * ```
 */
export const EMPTY_PROGRESS: SessionProgress = Object.freeze({
  stop: null,
  edits: 0,
  refusals: 0,
  consecutiveRefusals: 0,
  retrievals: 0,
  bytesTotal: 0,
  bytesPeak: 0,
  modelMs: 0,
  archived: 0,
  checkpoints: 0,
  notes: [],
  lastTurn: null,
  requests: [],
});

/** Everything {@linkcode SessionStore.save} writes, after an acknowledged step. */
export interface SessionSnapshot {
  /** The slice's intent. */
  readonly intent: string;
  /** The context policy. */
  readonly policy: "legacy" | "bounded";
  /** The model spec the session resumes with, e.g. `recorded:PATH`. */
  readonly model: string;
  /** The test command, or `null` when none was configured. */
  readonly test: SliceTest | null;
  /** The latest workspace revision, `null` before any edit. */
  readonly revision: string | null;
  /** The step budget. */
  readonly maxSteps: number;
  /** Steps taken so far. */
  readonly stepsUsed: number;
  /** Model calls answered so far (a recorded model resumes at this call). */
  readonly modelCallsUsed: number;
  /** Every acknowledged action record, in sequence order. */
  readonly records: readonly ActionRecord[];
  /** The stored results, e.g. `resultStore.stored()`. */
  readonly results: Iterable<StoredResult>;
  /** Run counters to carry over (non-negative integers only: never text). */
  readonly counters?: Readonly<Record<string, number>>;
  /** Slice progress (default {@linkcode EMPTY_PROGRESS}). */
  readonly progress?: SessionProgress;
  /** Threshold overrides in force (recorded for the resume). */
  readonly overrides?: PersistenceOverrides;
  /** Declarations of actions beyond the built-in ones. */
  readonly tools?: Readonly<Record<string, ToolDeclaration>>;
}

/** What one {@linkcode SessionStore.save} did. */
export interface SessionSaveInfo {
  /** Result files written by this save (new digests only). */
  readonly written: number;
  /** Results persisted as files, in all. */
  readonly persisted: number;
  /**
   * Results of externally bounded tools at or below their threshold, kept
   * inline in `session.json`.
   */
  readonly inline: number;
  /** Results of self-bounding tools, catalogued by path and digest only. */
  readonly reread: number;
  /**
   * Results left out: produced by no acknowledged record, by an undeclared
   * tool, or by a self-bounding tool without a re-readable path.
   */
  readonly skipped: readonly string[];
}

/** A catalogued result that could not be restored. */
export interface UnavailableResult extends UnavailableResultEntry {
  /** Always `digest_mismatch`: references to it fail with that code. */
  readonly reason: "digest_mismatch";
}

/** A verified session, ready to continue. */
export interface LoadedSession {
  /** The session root (real path). */
  readonly root: string;
  /** The session name. */
  readonly session: string;
  /** The workspace (real path). */
  readonly workspace: string;
  /** The slice's intent. */
  readonly intent: string;
  /** The context policy. */
  readonly policy: "legacy" | "bounded";
  /** The model spec. */
  readonly model: string;
  /** The test command, or `null`. */
  readonly test: SliceTest | null;
  /** The latest revision, or `null`. */
  readonly revision: string | null;
  /** The step budget stored. */
  readonly maxSteps: number;
  /** Steps already taken. */
  readonly stepsUsed: number;
  /** Model calls already answered. */
  readonly modelCallsUsed: number;
  /** Run counters carried over. */
  readonly counters: Readonly<Record<string, number>>;
  /** Slice progress. */
  readonly progress: SessionProgress;
  /** Threshold overrides recorded. */
  readonly overrides: Readonly<Record<string, number>>;
  /** Action records with descriptors rebuilt (previews from restored bytes). */
  readonly records: readonly ActionRecord[];
  /** Verified results in id order, with their ids and digests. */
  readonly results: readonly StoredResult[];
  /** Results whose re-read source changed or disappeared. */
  readonly unavailable: readonly UnavailableResult[];
}

/** Options of {@linkcode SessionStore.create}. */
export interface CreateSessionOptions {
  /** The workspace the session belongs to; the root must lie outside it. */
  readonly workspace: string;
  /** The session name (default: the root's base name). */
  readonly session?: string;
}

const token = Symbol("SessionStore");
const encoder = new TextEncoder();

/**
 * The owner's handle of a session root: the only object that writes there.
 * Get one with {@linkcode SessionStore.create} (new session) or
 * {@linkcode SessionStore.open} (resume); stages that must not persist get
 * {@linkcode SessionStore.fork}.
 *
 * @example
 * ```ts
 * import { ResultStore } from "@loom/loom/reference";
 * import { SessionStore } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const workspace = await Deno.makeTempDir();
 * const root = await Deno.makeTempDir();
 * const session = await SessionStore.create(root, { workspace });
 * const results = new ResultStore();
 * const output = await results.put("1 failed\n", { origin: "tests.run deno test", capture: "partial" });
 * await session.save({
 *   intent: "Fix the bug", policy: "bounded", model: "recorded:r.json", test: null,
 *   revision: null, maxSteps: 10, stepsUsed: 1, modelCallsUsed: 2,
 *   records: [{ sequence: 1, action: "tests.run", arguments: {}, report: {
 *     kind: "tests_run", exit_code: 1, timed_out: false, tested_revision: null,
 *     output, confinement: "none",
 *   } }],
 *   results: results.stored(),
 * });
 * const loaded = await (await SessionStore.open(root)).load();
 * assert.equal(loaded.results[0]?.id, "result-1");
 * assert.equal(loaded.results[0]?.sha256, output.sha256);
 * assert.equal(session.fork("compactor").persists, false);
 * ```
 */
export class SessionStore {
  /** Always `owner`. */
  readonly kind: "owner" = "owner";
  /** Always `true`. */
  readonly persists: true = true;
  /** The session root (real path). */
  readonly root: string;
  /** The workspace (real path). */
  readonly workspace: string;
  /** The session name. */
  readonly session: string;
  readonly #forbidden: readonly string[];
  readonly #written = new Set<string>();
  #stale = new Map<string, CatalogueEntry>();

  private constructor(
    key: symbol,
    paths: { root: string; given: string; workspace: string; session: string },
  ) {
    if (key !== token) {
      throw new TypeError(
        "Cannot construct a SessionStore directly: use SessionStore.create or SessionStore.open",
      );
    }
    this.root = paths.root;
    this.workspace = paths.workspace;
    this.session = paths.session;
    this.#forbidden = [...new Set([paths.root, paths.given])];
  }

  /**
   * Starts a new session in `root` (created when missing).
   *
   * @param root The session root; must lie outside the workspace.
   * @param options The workspace and an optional session name.
   * @returns The owner's handle.
   * @throws {SessionError} `session_inside_workspace` when the root is the
   *   workspace, lies inside it or contains it; `session_exists` when the
   *   root already holds a `session.json`.
   * @throws {Deno.errors.NotFound} When the workspace does not exist.
   *
   * @example
   * ```ts
   * import { SessionError, SessionStore } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * await assert.rejects(
   *   SessionStore.create(`${workspace}/.loom`, { workspace }),
   *   (e: unknown) => e instanceof SessionError && e.code === "session_inside_workspace",
   * );
   * ```
   */
  static async create(
    root: string,
    options: CreateSessionOptions,
  ): Promise<SessionStore> {
    const workspace = await Deno.realPath(options.workspace);
    const given = realish(root);
    refuseOverlap(given, workspace);
    if (await exists(join(given, SESSION_FILE))) {
      throw new SessionError(
        "session_exists",
        `Cannot start a session in ${given}: it already holds ${SESSION_FILE}; resume it or choose another directory`,
        { file: join(given, SESSION_FILE) },
      );
    }
    await Deno.mkdir(join(given, RESULTS_DIR), {
      recursive: true,
      mode: 0o700,
    });
    const real = await Deno.realPath(given);
    refuseOverlap(real, workspace);
    const session = options.session ?? basenameOf(real);
    return new SessionStore(token, {
      root: real,
      given,
      workspace,
      session,
    });
  }

  /**
   * Opens an existing session to resume it. Reads and validates
   * `session.json`; {@linkcode SessionStore.load} then verifies the results.
   *
   * @param root The session root.
   * @returns The owner's handle.
   * @throws {SessionError} `session_missing`, `session_invalid` (naming the
   *   file and key) or `session_inside_workspace`.
   *
   * @example
   * ```ts
   * import { SessionError, SessionStore } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const root = await Deno.makeTempDir();
   * await assert.rejects(
   *   SessionStore.open(root),
   *   (e: unknown) => e instanceof SessionError && e.code === "session_missing",
   * );
   * ```
   */
  static async open(root: string): Promise<SessionStore> {
    const given = realish(root);
    const doc = await readSessionFile(given);
    const workspace = realish(doc.workspace);
    refuseOverlap(given, workspace);
    return new SessionStore(token, {
      root: given,
      given,
      workspace,
      session: doc.session,
    });
  }

  /**
   * Paths the slice must refuse to touch (commission's `forbiddenRoots`):
   * the session root as given and as resolved.
   */
  get forbiddenRoots(): readonly string[] {
    return this.#forbidden;
  }

  /**
   * A handle for an ephemeral stage (compactor, summariser, helper) that
   * shares this session's id but can never write to its root.
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
   * });
   * const compactor = session.fork("compactor");
   * assert.equal(compactor.session, "run-7");
   * assert.equal("save" in compactor, false);
   * ```
   */
  fork(stage: string): EphemeralSession {
    return new EphemeralSession(stage, this.session);
  }

  /**
   * Persists the state after an acknowledged step: first every new result
   * file (`tool-results/<sha256>.txt`), then `session.json`, each
   * atomically. A result of an externally bounded tool is written to a file
   * when {@linkcode shouldPersist} says so (more characters than the tool's
   * effective threshold, overrides included) and kept inline in its
   * catalogue entry otherwise. Results of self-bounding tools are
   * catalogued by workspace path and digest only, whatever the overrides.
   *
   * @param snapshot The run's state.
   * @returns What was written and what was left out.
   * @throws {TypeError} When the snapshot would not make a valid session.
   *
   * @example
   * ```ts
   * import { ResultStore } from "@loom/loom/reference";
   * import { SessionStore } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * await Deno.writeTextFile(`${workspace}/a.txt`, "secret body\n");
   * const root = await Deno.makeTempDir();
   * const session = await SessionStore.create(root, { workspace });
   * const results = new ResultStore();
   * const descriptor = await results.put("secret body\n", { origin: "repository.inspect a.txt", capture: "complete" });
   * const info = await session.save({
   *   intent: "Read", policy: "legacy", model: "recorded:r.json", test: null, revision: null,
   *   maxSteps: 4, stepsUsed: 1, modelCallsUsed: 2, results: results.stored(),
   *   records: [{ sequence: 1, action: "repository.inspect", arguments: { paths: ["a.txt"] },
   *     report: { kind: "inspected", files: [{ path: "a.txt", descriptor }] } }],
   * });
   * assert.equal(info.reread, 1);
   * assert.equal(info.written, 0);
   * assert.equal(info.inline, 0);
   * assert.equal((await Deno.readTextFile(`${root}/session.json`)).includes("secret body"), false);
   * ```
   */
  async save(snapshot: SessionSnapshot): Promise<SessionSaveInfo> {
    const overrides = snapshot.overrides ?? {};
    const { catalogue, files, skipped, reread, persisted, inline } =
      buildCatalogue({
        records: snapshot.records,
        results: snapshot.results,
        tools: snapshot.tools,
        overrides,
        owner: this.persists,
        resultsDir: RESULTS_DIR,
      });
    for (const [id, entry] of this.#stale) {
      if (!(id in catalogue)) catalogue[id] = entry;
    }
    const doc: SessionJson = {
      format: SESSION_FORMAT,
      session: this.session,
      workspace: this.workspace,
      intent: snapshot.intent,
      policy: snapshot.policy,
      model: snapshot.model,
      test: snapshot.test === null ? null : {
        command: [...snapshot.test.command],
        timeout_ms: snapshot.test.timeoutMs,
      },
      revision: snapshot.revision,
      max_steps: snapshot.maxSteps,
      steps_used: snapshot.stepsUsed,
      model_calls_used: snapshot.modelCallsUsed,
      overrides: finiteOverrides(overrides),
      counters: { ...snapshot.counters },
      progress: progressJson(snapshot.progress ?? EMPTY_PROGRESS),
      events: snapshot.records.map((record) => ({
        sha256: sha256Hex(encoder.encode(serializeEvent(toEvent(record)))),
        record: compactRecord(record),
      })),
      results: sortedById(catalogue),
    };
    const checked = sessionSchema.safeParse(JSON.parse(JSON.stringify(doc)));
    if (!checked.success) {
      throw new TypeError(
        `Cannot save session ${this.root}: the snapshot is invalid: ${
          describeIssue(checked.error)
        }`,
      );
    }
    let written = 0;
    for (const file of files) {
      if (this.#written.has(file.sha256)) continue;
      if (sha256Hex(file.bytes) !== file.sha256) {
        throw new TypeError(
          `Cannot persist ${file.path}: the result's bytes do not match its digest`,
        );
      }
      await writeAtomic(join(this.root, file.path), file.bytes);
      this.#written.add(file.sha256);
      written += 1;
    }
    await writeAtomic(
      join(this.root, SESSION_FILE),
      encoder.encode(`${JSON.stringify(doc, null, 1)}\n`),
    );
    return { written, persisted, inline, reread, skipped };
  }

  /**
   * Loads and verifies the session: every persisted file and inline body
   * against its digest, every re-read source against the digest stored for
   * it, every event against its archived digest. Reads only; nothing is
   * written or repaired.
   *
   * @returns The verified session. Results whose re-read source changed or
   *   disappeared are listed in `unavailable` (references to them must fail
   *   with `digest_mismatch`) and stay in the catalogue of later saves.
   * @throws {SessionError} `result_missing` or `result_corrupted` naming the
   *   file (`session.json` for an inline body); `session_missing` or
   *   `session_invalid`.
   *
   * @example
   * ```ts
   * import { SessionError, SessionStore } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const workspace = await Deno.makeTempDir();
   * const root = await Deno.makeTempDir();
   * const session = await SessionStore.create(root, { workspace });
   * await assert.rejects(
   *   session.load(),
   *   (e: unknown) => e instanceof SessionError && e.code === "session_missing",
   * );
   * ```
   */
  async load(): Promise<LoadedSession> {
    const doc = await readSessionFile(this.root);
    const workspace = realish(doc.workspace);
    refuseOverlap(this.root, workspace);
    const file = join(this.root, SESSION_FILE);
    const results: StoredResult[] = [];
    const unavailable: UnavailableResult[] = [];
    const stale = new Map<string, CatalogueEntry>();
    const verified: string[] = [];
    const bytesById = new Map<string, Uint8Array>();
    for (const [id, entry] of sortedEntries(doc.results)) {
      const meta = {
        id,
        sha256: entry.sha256,
        origin: entry.origin,
        capture: entry.capture,
      };
      if ("persisted" in entry.source) {
        const expected = `${RESULTS_DIR}/${entry.sha256}.txt`;
        if (entry.source.persisted !== expected) {
          throw new SessionError(
            "session_invalid",
            `Session file ${file} is invalid: results.${id}.source.persisted must be ${expected}, names come only from digests`,
            { file },
          );
        }
        const bytes = await readPersisted(this.root, expected, entry);
        verified.push(entry.sha256);
        bytesById.set(id, bytes);
        results.push({ ...meta, bytes });
        continue;
      }
      if ("inline" in entry.source) {
        const bytes = encoder.encode(entry.source.inline);
        if (
          bytes.length !== entry.utf8_bytes ||
          sha256Hex(bytes) !== entry.sha256
        ) {
          throw new SessionError(
            "result_corrupted",
            `Inline result ${id} in ${file} does not match its SHA-256 digest ${entry.sha256}: it was changed or damaged after it was written`,
            { file },
          );
        }
        bytesById.set(id, bytes);
        results.push({ ...meta, bytes });
        continue;
      }
      const path = entry.source.reread.path;
      if (!isCleanRelative(path)) {
        throw new SessionError(
          "session_invalid",
          `Session file ${file} is invalid: results.${id}.source.reread.path ${
            JSON.stringify(path)
          } is not a clean workspace-relative path`,
          { file },
        );
      }
      const reread = await rereadSource(workspace, this.root, path, entry);
      if (reread.bytes !== undefined) {
        bytesById.set(id, reread.bytes);
        results.push({ ...meta, bytes: reread.bytes });
      } else {
        stale.set(id, entry);
        unavailable.push({
          ...meta,
          utf8_bytes: entry.utf8_bytes,
          reason: "digest_mismatch",
          detail: reread.detail,
        });
      }
    }
    const records: ActionRecord[] = [];
    let last = 0;
    for (const [index, event] of doc.events.entries()) {
      const record = event.record as ActionRecord;
      if (record.sequence <= last) {
        throw new SessionError(
          "session_invalid",
          `Session file ${file} is invalid: events[${index}] has sequence ${record.sequence} after ${last}`,
          { file },
        );
      }
      last = record.sequence;
      const digest = sha256Hex(encoder.encode(serializeEvent(toEvent(record))));
      if (digest !== event.sha256) {
        throw new SessionError(
          "session_invalid",
          `Session file ${file} is invalid: event ${record.sequence} does not match its archived digest`,
          { file },
        );
      }
      records.push(expandRecord(record, bytesById));
    }
    for (const sha of verified) this.#written.add(sha);
    this.#stale = stale;
    return {
      root: this.root,
      session: doc.session,
      workspace,
      intent: doc.intent,
      policy: doc.policy,
      model: doc.model,
      test: doc.test === null
        ? null
        : { command: doc.test.command, timeoutMs: doc.test.timeout_ms },
      revision: doc.revision,
      maxSteps: doc.max_steps,
      stepsUsed: doc.steps_used,
      modelCallsUsed: doc.model_calls_used,
      counters: doc.counters,
      progress: progressOf(doc.progress),
      overrides: doc.overrides,
      records,
      results,
      unavailable,
    };
  }
}

/**
 * Reads and validates `DIR/session.json` without touching result files.
 *
 * @param root The session root.
 * @returns The parsed document.
 * @throws {SessionError} `session_missing` or `session_invalid`.
 */
export async function readSessionFile(root: string): Promise<SessionJson> {
  const file = join(root, SESSION_FILE);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new SessionError(
        "session_missing",
        `No session in ${root}: ${SESSION_FILE} does not exist`,
        { file, cause: error },
      );
    }
    throw new SessionError(
      "session_invalid",
      `Cannot read session file ${file}: ${messageOf(error)}`,
      { file, cause: error },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SessionError(
      "session_invalid",
      `Session file ${file} is not valid JSON: ${messageOf(error)}`,
      { file, cause: error },
    );
  }
  const parsed = sessionSchema.safeParse(json);
  if (!parsed.success) {
    throw new SessionError(
      "session_invalid",
      `Session file ${file} is invalid: ${describeIssue(parsed.error)}`,
      { file },
    );
  }
  return parsed.data;
}

function progressJson(p: SessionProgress): SessionJson["progress"] {
  return {
    stop: p.stop,
    edits: p.edits,
    refusals: p.refusals,
    consecutive_refusals: p.consecutiveRefusals,
    retrievals: p.retrievals,
    bytes_total: p.bytesTotal,
    bytes_peak: p.bytesPeak,
    model_ms: p.modelMs,
    archived: p.archived,
    checkpoints: p.checkpoints,
    notes: [...p.notes],
    last_turn: p.lastTurn === null ? null : {
      sequence: p.lastTurn.sequence,
      phase: p.lastTurn.phase,
      candidates: [...p.lastTurn.candidates],
      notes: [...p.lastTurn.notes],
      lookups: [...p.lastTurn.lookups],
      retired: p.lastTurn.retired,
      results: p.lastTurn.results,
    },
    requests: p.requests.map((line) => ({ ...line })),
  };
}

function progressOf(p: SessionJson["progress"]): SessionProgress {
  return {
    stop: p.stop,
    edits: p.edits,
    refusals: p.refusals,
    consecutiveRefusals: p.consecutive_refusals,
    retrievals: p.retrievals,
    bytesTotal: p.bytes_total,
    bytesPeak: p.bytes_peak,
    modelMs: p.model_ms,
    archived: p.archived,
    checkpoints: p.checkpoints,
    notes: p.notes,
    lastTurn: p.last_turn,
    requests: p.requests,
  };
}
