/**
 * What a session handle takes and gives: the run written into a journal's
 * header, the options of creating and opening a session, what one save
 * did, and a loaded session ready to continue.
 *
 * @module
 */
import type { StopReason } from "../briefing/context_report.ts";
import type { ContextPolicy } from "../briefing/briefing.ts";
import type { StoredResult } from "../store/result_store.ts";
import type { SliceCounters, UnavailableResult } from "../slice/run_state.ts";
import type { SliceTest } from "../slice/request.ts";
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

/** Options of `SessionStore.create`. */
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
  /** The session key file (default `sessionKeyPath`). */
  readonly keyFile?: string;
  /** How the slice runs. */
  readonly run: SessionRun;
}

/** Options of `SessionStore.open`. */
export interface OpenSessionOptions {
  /** The session key file (default `sessionKeyPath`). */
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
