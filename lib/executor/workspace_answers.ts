/**
 * What the `WorkspaceExecutor` is started with and what it
 * answers: its options, an inspected file's text, an edited file's digest,
 * a test run's outcome and a survey of the workspace.
 *
 * @module
 */
import type { InspectEntry } from "./_protocol.ts";
import type { TestConfinement } from "./_test_plan.ts";
import type { ProtectedPaths } from "./protected_paths.ts";

/** How `WorkspaceExecutor.start` sets up the executor. */
export interface WorkspaceExecutorOptions {
  /** The workspace directory; effects stay inside its real path. */
  workspace: string;
  /**
   * The test command, program first. A program with a `/` resolves against
   * the workspace; a bare name is looked up on `PATH`.
   */
  testCommand?: readonly string[];
  /** Kill the test process after this many milliseconds (default 120,000). */
  testTimeoutMs?: number;
  /**
   * The only variables the confined test sees beside `PATH`, `HOME` and
   * `TMPDIR` (which point inside the sandbox): what the user passed with
   * `--test-env NAME`, with their values.
   */
  testEnv?: Readonly<Record<string, string>>;
  /** Give the test the network (`--test-network`; default off). */
  testNetwork?: boolean;
  /**
   * Run the test unconfined, with the user's privileges
   * (`--unconfined-tests`); the report says so loudly. Default `false`.
   */
  unconfinedTests?: boolean;
  /**
   * The bubblewrap program (default `bwrap` on `PATH`); `null` acts as if
   * there were none.
   */
  sandbox?: string | null;
  /** Files the test sees read-only (bound or denied) in every run. */
  protect?: ProtectedPaths;
  /** Largest file `inspect` reads (default 16 MiB). */
  maxFileBytes?: number;
  /**
   * How many helper workers a large survey is shared with (default: one
   * per spare core, at most three; `0` surveys in the worker alone).
   */
  surveyHelpers?: number;
  /** Entries from which a survey is shared with helpers (default 4,096). */
  surveySharedFrom?: number;
}

/** One file `inspect` was asked for: its text, or why there is none. */
export interface InspectedFileText {
  /** The path as asked. */
  path: string;
  /** The file's UTF-8 text. */
  text?: string;
  /**
   * Why there is no text: `not_found`, `too_large`, `binary_file`,
   * `invalid_utf8`, `not_a_file` (a directory), `not_regular_file` (a FIFO,
   * socket or device node, never opened), `hard_link`, `symlink_escape`,
   * `outside_workspace`, `permission_denied` or `io_error`.
   */
  code?: string;
  /** The reason, naming workspace-relative paths only. */
  error?: string;
  /** Present when the file does not exist. */
  missing?: true;
}

/** One file an edit wrote. */
export interface EditedFileDigest {
  /** The path as asked. */
  path: string;
  /** Size of the new contents in UTF-8 bytes. */
  utf8_bytes: number;
  /** SHA-256 of the new contents, lowercase hex. */
  sha256: string;
}

/** The outcome of a test run. */
export interface TestRunOutcome {
  /** The process's exit code (128 + signal number when it was killed). */
  exit_code: number;
  /** Whether the run hit the timeout and was killed. */
  timed_out: boolean;
  /**
   * The last 8 KiB (at most 8,192 UTF-8 bytes) of stdout and stderr
   * combined in arrival order, starting on a character boundary.
   */
  output_tail: string;
  /** All output bytes the process wrote. */
  output_bytes: number;
  /** What guarded the run, and what did not (no host paths). */
  confinement: string;
  /** The mechanism: `bubblewrap`, `deno` or `unconfined`. */
  confined_by: TestConfinement;
  /**
   * Digest of the workspace tree just before the test started: a fresh
   * survey, or the executor's last one when nothing it ran or wrote can
   * have changed the tree since (the survey after its previous test run, or
   * one made after its last edit). Anything else that changed the tree
   * meanwhile shows as `tree_before !== tree_after`, so the run validates
   * nothing either way.
   */
  tree_before: string;
  /** Digest of the workspace tree just after the test ended. */
  tree_after: string;
}

/** What `WorkspaceExecutor.survey` found in the workspace. */
export interface WorkspaceSurvey {
  /** SHA-256 (hex) over every path, type, executable bit and contents (`.git` aside). */
  digest: string;
  /** Symlinks whose target lies outside the workspace (relative paths). */
  escapes: string[];
  /** Files sharing their inode with a file outside the workspace. */
  externalLinks: string[];
  /**
   * Files whose contents this survey read and hashed; the others had the
   * same path, size, mtime, ctime, inode, device and mode as when they were
   * last hashed, with times safely older than that (git's racy rule).
   */
  hashedFiles: number;
  /**
   * Helper workers that described a share of this survey (a large tree is
   * shared with one per spare core); the worker described the rest.
   */
  helpers: number;
}

/**
 * Bytes of combined test output `WorkspaceExecutor.runTests`
 * keeps: 8 KiB, the upstream runner's tail.
 *
 * @example
 * ```ts
 * import { TEST_OUTPUT_TAIL_BYTES } from "./workspace_answers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(TEST_OUTPUT_TAIL_BYTES, 8 * 1024);
 * ```
 */
export const TEST_OUTPUT_TAIL_BYTES: number = 8192;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function quoted(path: string): string {
  return JSON.stringify(path.length > 200 ? path.slice(0, 200) + "…" : path);
}

/** A file's text from its bytes, or why it is not text. */
export function inspectedText(entry: InspectEntry): InspectedFileText {
  const { path, bytes } = entry;
  if (bytes === undefined) {
    const file: InspectedFileText = { path };
    if (entry.code !== undefined) file.code = entry.code;
    if (entry.error !== undefined) file.error = entry.error;
    if (entry.missing === true) file.missing = true;
    return file;
  }
  if (bytes.includes(0)) {
    return {
      path,
      code: "binary_file",
      error: `${quoted(path)} holds NUL bytes: it is not text`,
    };
  }
  try {
    return { path, text: utf8.decode(bytes) };
  } catch {
    return {
      path,
      code: "invalid_utf8",
      error: `${quoted(path)} is not valid UTF-8 text`,
    };
  }
}
