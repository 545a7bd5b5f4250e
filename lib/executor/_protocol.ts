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
  /** Largest file inspect reads. */
  readonly maxFileBytes: number;
  /** Largest file the survey hashes by contents (larger: size and inode). */
  readonly digestFileBytes: number;
  /** How many helper workers a large survey is shared with. */
  readonly surveyHelpers: number;
  /** Entries from which a survey is shared with helpers. */
  readonly surveySharedFrom: number;
}

/** Read files. */
export interface InspectMessage {
  readonly op: "inspect";
  readonly id: number;
  readonly paths: readonly string[];
}

/** Write files atomically; contents travel as UTF-8 bytes. */
export interface EditMessage {
  readonly op: "edit";
  readonly id: number;
  readonly files: readonly {
    readonly path: string;
    readonly contents: Uint8Array;
  }[];
}

/** Walk the workspace: digest of the tree, escaping symlinks, hard links. */
export interface SurveyMessage {
  readonly op: "survey";
  readonly id: number;
}

/**
 * Makes a worker a survey helper: sent by whoever started it (the executor,
 * or the relay inside bubblewrap), with the port on which the worker it
 * helps will ask it.
 */
export interface AttachMessage {
  readonly op: "attach";
  readonly id: number;
  readonly port: MessagePort;
}

/**
 * The helpers a worker asked for (with a `spawn` reply): one port to each,
 * by index, sent by whoever started the worker; none when it could start
 * none.
 */
export interface HelpersMessage {
  readonly op: "helpers";
  readonly id: number;
  readonly ports: readonly MessagePort[];
}

/** A helper failed (an uncaught error): the worker stops asking it. */
export interface HelperFailedMessage {
  readonly op: "helper_failed";
  readonly id: number;
  /** The helper's index among the ports sent. */
  readonly index: number;
}

/**
 * A helper's configuration, on its port, from the worker it helps; the
 * helper answers with its permission states.
 */
export interface HelperMessage {
  readonly op: "helper";
  readonly id: number;
  /** Real path of the workspace. */
  readonly workspace: string;
  /** Largest file the survey hashes by contents. */
  readonly digestFileBytes: number;
}

/**
 * A share of a survey, from the worker to a helper: a contiguous run of the
 * tree's entries in digest order, each either a finished digest line or a
 * path to `lstat` (and hash when its stat changed).
 */
export interface DescribeMessage {
  readonly op: "describe";
  readonly id: number;
  /** One character per entry: `l` a finished line, `e` a path to describe. */
  readonly kinds: string;
  /** The entries' lines or workspace-relative paths, joined by NUL. */
  readonly values: string;
  /** When the survey began (ms since the epoch): the racy rule's reference. */
  readonly before: number;
}

/** A described share of a survey. */
export interface DescribeReply {
  /** The share's digest lines, joined by newlines. */
  readonly text: string;
  /** How many lines `text` holds. */
  readonly count: number;
  /** Symlinks in the share whose target lies outside the workspace. */
  readonly escapes: readonly string[];
  /** Files with more than one link: `dev:ino`, link count, path. */
  readonly links: readonly (readonly [string, number, string])[];
  /** Files whose contents were read. */
  readonly hashed: number;
}

/** A request from the executor to its worker. */
export type Request =
  | InitMessage
  | InspectMessage
  | EditMessage
  | SurveyMessage;

/** What the worker found out about its own permissions on init. */
export interface InitReply {
  /** Permission name (and path) → state, e.g. `"net": "prompt"`. */
  readonly permissions: Readonly<Record<string, string>>;
}

/**
 * One inspected file, sent as its own `part` reply as soon as it is read:
 * the text travels as its UTF-8 bytes (checked to be valid UTF-8 without
 * NUL bytes), so no message ever holds more than one file.
 */
export interface InspectEntry {
  path: string;
  bytes?: Uint8Array;
  /** Stable code of the failure, e.g. `too_large`. */
  code?: string;
  /** Why the file has no text; names workspace-relative paths only. */
  error?: string;
  missing?: true;
}

/** What a survey of the workspace found. */
export interface SurveyReply {
  /** SHA-256 (hex) over every path, type, mode bit and contents, `.git` aside. */
  readonly digest: string;
  /** Symlinks whose target lies outside the workspace. */
  readonly escapes: readonly string[];
  /** Files that share their inode with a file outside the workspace. */
  readonly externalLinks: readonly string[];
  /** Files whose contents were read for this digest (the others were cached). */
  readonly hashed: number;
  /** Helper workers that described a share of this survey. */
  readonly helpers: number;
}

/** An error as it crosses the worker boundary. */
export interface WireError {
  readonly name: string;
  readonly message: string;
}

/**
 * The worker's answer to one request: any number of `part`s (one per
 * inspected file) or `alive` beats (a long survey still working), then one
 * final answer. A survey may also ask whoever started the worker for
 * `spawn` helpers (answered with a {@linkcode HelpersMessage}); that
 * message never reaches the executor's requests.
 */
export type Reply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly id: number; readonly part: unknown }
  | { readonly id: number; readonly alive: true }
  | { readonly id: number; readonly spawn: number };
