/**
 * Session scope: who may persist. Only a run that owns a stable storage root
 * — `loom run --session DIR`, or an embedder passing a named session — gets
 * a {@linkcode SessionStore}. Ephemeral stages (a compactor, a summariser, a
 * forked helper run) get an {@linkcode EphemeralSession}, which has no
 * root and no write methods, even when they share the session id.
 *
 * @module
 */
import { placeSession } from "./_session_place.ts";
import { EphemeralSession } from "./ephemeral_session.ts";
import { SessionStore } from "./session_store.ts";
import type { SessionRun } from "./session_types.ts";

/** The scope of a run that owns its storage root. */
export interface OwnerScope {
  /** Discriminant. */
  readonly kind: "owner";
  /** The session root; must lie outside the workspace. */
  readonly root: string;
  /** The workspace. */
  readonly workspace: string;
  /** The session name (default: the root's base name). */
  readonly session?: string;
  /** How the slice runs (written when the session is created). */
  readonly run: SessionRun;
  /** The session key file (default: `sessionKeyPath()`). */
  readonly keyFile?: string;
  /** The store; `root` then names a session in it (default: a folder). */
  readonly store?: string;
}

/** The scope of a stage that never persists. */
export interface EphemeralScope {
  /** Discriminant. */
  readonly kind: "ephemeral";
  /** What the stage is, e.g. `compactor`, `summariser`, `helper`. */
  readonly stage: string;
  /** A session id shared for tracing; it grants nothing. */
  readonly session?: string;
}

/** Who may persist: the owner of a storage root, or an ephemeral stage. */
export type SessionScope = OwnerScope | EphemeralScope;

/** A session handle of either kind; test `persists` (or `kind`) to narrow. */
export type SessionHandle = SessionStore | EphemeralSession;

/**
 * Opens the session handle a scope is entitled to. An owner scope creates
 * the session (or opens the existing one in its root); an ephemeral scope
 * gets a handle that cannot write, whatever session id it carries.
 *
 * @param scope The scope.
 * @returns A {@linkcode SessionStore} for an owner, an
 *   {@linkcode EphemeralSession} for an ephemeral stage.
 * @throws {SessionError} As {@linkcode SessionStore.create} and
 *   {@linkcode SessionStore.open} for owner scopes.
 * @throws {TypeError} When the scope kind is unknown.
 *
 * @example
 * ```ts
 * import { openSession } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const summariser = await openSession({ kind: "ephemeral", stage: "summariser", session: "run-1" });
 * assert.equal(summariser.persists, false);
 * const owner = await openSession({
 *   kind: "owner", root: await Deno.makeTempDir(), workspace: await Deno.makeTempDir(), session: "run-1",
 *   keyFile: `${await Deno.makeTempDir()}/session.key`,
 *   run: { intent: "x", policy: "bounded", model: "recorded:/r.json", test: null, maxSteps: 1 },
 * });
 * assert.equal(owner.persists, true);
 * await owner.close();
 * ```
 */
export function openSession(scope: OwnerScope): Promise<SessionStore>;
/**
 * Opens the handle of an ephemeral stage: it can never write.
 *
 * @param scope The ephemeral scope.
 * @returns An {@linkcode EphemeralSession}.
 *
 * @example
 * ```ts
 * import { openSession } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const helper = await openSession({ kind: "ephemeral", stage: "helper" });
 * assert.equal(helper.persists, false);
 * ```
 */
export function openSession(scope: EphemeralScope): Promise<EphemeralSession>;
/**
 * Opens the handle a scope of either kind is entitled to.
 *
 * @param scope The scope.
 * @returns A {@linkcode SessionStore} or an {@linkcode EphemeralSession}.
 * @throws {SessionError} As {@linkcode SessionStore.create} and
 *   {@linkcode SessionStore.open} for owner scopes.
 *
 * @example
 * ```ts
 * import { openSession, type SessionScope } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const scope: SessionScope = { kind: "ephemeral", stage: "compactor", session: "s" };
 * assert.equal((await openSession(scope)).persists, false);
 * ```
 */
export function openSession(scope: SessionScope): Promise<SessionHandle>;
export async function openSession(scope: SessionScope): Promise<SessionHandle> {
  if (scope?.kind === "ephemeral") {
    return new EphemeralSession(scope.stage, scope.session);
  }
  if (scope?.kind !== "owner") {
    throw new TypeError(
      "Cannot open a session: the scope kind must be owner or ephemeral",
    );
  }
  const place = await placeSession(scope.root, scope.store);
  let present: boolean;
  try {
    present = await place.slot.journal.exists();
  } finally {
    await place.owned?.close();
  }
  const key = {
    ...(scope.keyFile === undefined ? {} : { keyFile: scope.keyFile }),
    ...(scope.store === undefined ? {} : { store: scope.store }),
  };
  if (present) return await SessionStore.open(scope.root, key);
  return await SessionStore.create(scope.root, {
    workspace: scope.workspace,
    run: scope.run,
    ...key,
    ...(scope.session === undefined ? {} : { session: scope.session }),
  });
}
