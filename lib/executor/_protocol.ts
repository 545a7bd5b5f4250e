/**
 * The message protocol between {@linkcode WorkspaceExecutor} and its worker.
 * Every request carries an `id`; the worker answers each with the same id.
 *
 * @module
 */

/** What the worker needs to know, sent once after it boots. */
export interface InitMessage {
  readonly op: "init";
  readonly id: number;
  /** Real path of the workspace. */
  readonly workspace: string;
  /** The test command (program resolved), or null. */
  readonly test: {
    readonly program: string;
    readonly args: readonly string[];
    readonly timeoutMs: number;
    readonly env: Readonly<Record<string, string>>;
    /** How long to wait for output pipes after the process ended. */
    readonly drainMs: number;
  } | null;
  /** Largest file inspect reads. */
  readonly maxFileBytes: number;
  /** Bytes of combined output kept. */
  readonly tailBytes: number;
}

/** Read files. */
export interface InspectMessage {
  readonly op: "inspect";
  readonly id: number;
  readonly paths: readonly string[];
}

/** Write files atomically. */
export interface EditMessage {
  readonly op: "edit";
  readonly id: number;
  readonly files: readonly {
    readonly path: string;
    readonly contents: string;
  }[];
}

/** Run the configured test command. */
export interface RunTestsMessage {
  readonly op: "runTests";
  readonly id: number;
}

/** A request from the executor to its worker. */
export type Request =
  | InitMessage
  | InspectMessage
  | EditMessage
  | RunTestsMessage;

/** What the worker found out about its own permissions on init. */
export interface InitReply {
  /** Permission name (and path) → state, e.g. `"net": "prompt"`. */
  readonly permissions: Readonly<Record<string, string>>;
}

/** One inspected file. */
export interface InspectEntry {
  path: string;
  text?: string;
  error?: string;
  missing?: true;
}

/** The raw result of a test run. */
export interface RunTestsReply {
  readonly exit_code: number;
  readonly signal: string | null;
  readonly timed_out: boolean;
  /** The last bytes of combined stdout and stderr (at most `tailBytes`). */
  readonly tail: Uint8Array;
  /** All output bytes seen. */
  readonly output_bytes: number;
}

/** An error as it crosses the worker boundary. */
export interface WireError {
  readonly name: string;
  readonly message: string;
}

/** The worker's answer to one request. */
export type Reply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: WireError };
