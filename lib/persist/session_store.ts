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
import type { SliceSnapshot } from "../slice/run_state.ts";
import { sha256Hex } from "../store/digest.ts";
import type { Lease, SessionSlot, Storage } from "../storage/storage.ts";
import { JournalWriter } from "./_journal.ts";
import type { ParsedSession } from "./_read_session.ts";
import { JOURNAL_FORMAT } from "./_schema.ts";
import { SaveCursor } from "./_session_save.ts";
import { sessionKeyFor } from "./_session_key.ts";
import { openingAt, placeSession } from "./_session_place.ts";
import { finiteOverrides, realish, refuseOverlap } from "./_session_util.ts";
import { EphemeralSession } from "./ephemeral_session.ts";
import { SessionError } from "./session_error.ts";
import type {
  CreateSessionOptions,
  LoadedSession,
  OpenSessionOptions,
  SessionSaveInfo,
} from "./session_types.ts";
import { journalKey, parseAt, verifyParsed } from "./session_verify.ts";
import type { PersistenceOverrides } from "./tool_policy.ts";

const token = Symbol("SessionStore");

// Saving is for the session hooks (and tests), not a public method, so the
// run state it takes stays out of the public API: see saveSnapshot().
let save: (
  store: SessionStore,
  snapshot: SliceSnapshot,
) => Promise<SessionSaveInfo>;

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
  readonly #cursor: SaveCursor;
  #seq: number;
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
    this.#seq = at.parsed === undefined ? 0 : at.parsed.text.lines.length - 1;
    this.#cursor = new SaveCursor(at.parsed);
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
    return await openingAt(place, async (lease) => {
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
      const key = await sessionKeyFor(options.keyFile, [
        ...forbidden,
        workspace,
      ]);
      const lock = await lease();
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
    });
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
    return await openingAt(place, async (lease) => {
      const key = await journalKey(slot, place.forbidden, options.keyFile);
      const lock = await lease();
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
    const plan = this.#cursor.plan(
      this.root,
      this.#seq + 1,
      snapshot,
      this.#overrides,
    );
    // A lease found lost stops the step before it writes anything.
    await this.#lock.check();
    let written = 0;
    for (const { sha256, bytes } of plan.files) {
      if (this.#cursor.written.has(sha256)) continue;
      if (sha256Hex(bytes) !== sha256) {
        throw new TypeError(
          `Cannot persist ${sha256}: the result's bytes do not match its digest`,
        );
      }
      await this.#slot.bodies.put(sha256, bytes);
      this.#cursor.written.add(sha256);
      written += 1;
    }
    await this.#append(plan.record);
    this.#cursor.commit(plan);
    return { written, ...plan.info };
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
      if ("persisted" in entry.source) this.#cursor.written.add(entry.sha256);
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
