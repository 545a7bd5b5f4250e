/**
 * Sessions and tool-result persistence, for **embedders that save and resume
 * slices**: the session store and its read-only ephemeral handle, the
 * storage back-ends a session can live in (the `store` option: a folder,
 * SQLite or PostgreSQL), listing,
 * summaries and garbage collection, the hooks that connect a store to
 * `runSlice`, and the persistence policy (per-tool thresholds, config files,
 * flags).
 *
 * @example Decide whether a tool result is persisted
 * ```ts
 * import { persistenceThreshold, shouldPersist } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * assert.equal(persistenceThreshold("repository.inspect"), Infinity);
 * assert.equal(shouldPersist("tests.run", 30_001, { owner: true }), true);
 * ```
 * @module
 */
export { SessionError } from "./lib/persist/session_error.ts";
export { StorageError } from "./lib/storage/storage_error.ts";
export { EphemeralSession } from "./lib/persist/ephemeral_session.ts";
export { SessionStore } from "./lib/persist/session_store.ts";
export {
  type CreateSessionOptions,
  type LoadedSession,
  type OpenSessionOptions,
  type SessionRun,
  type SessionSaveInfo,
} from "./lib/persist/session_types.ts";
export { verifySession } from "./lib/persist/session_verify.ts";
export {
  type EphemeralScope,
  openSession,
  type OwnerScope,
  type SessionHandle,
  type SessionScope,
} from "./lib/persist/session_scope.ts";
export {
  collectGarbage,
  type GarbageReport,
} from "./lib/persist/session_gc.ts";
export {
  listSessions,
  type SessionListing,
  type SessionListOptions,
  type SessionResultSummary,
  type SessionSummary,
  summarizeSession,
} from "./lib/persist/session_summary.ts";
export {
  sliceSessionHooks,
  type SliceSessionOptions,
} from "./lib/persist/slice_session.ts";
export {
  type SliceCounters,
  type UnavailableResult,
} from "./lib/slice/run_state.ts";
export {
  type PersistenceOverrides,
  persistenceThreshold,
  shouldPersist,
  type ToolDeclaration,
  UnknownToolError,
} from "./lib/persist/tool_policy.ts";
export {
  loadPersistenceConfig,
  parsePersistenceConfig,
  type PersistenceConfig,
  PersistenceConfigError,
} from "./lib/persist/persistence_config.ts";
