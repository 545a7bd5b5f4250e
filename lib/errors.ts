/**
 * The one error contract of Loom. Every error Loom throws on purpose carries
 * the brand `Symbol.for("loom.error")`, a stable machine `code` from the one
 * registry below, and a sentence-case message without a trailing period. The
 * registry names each error class's codes once ({@linkcode LoomErrorCode})
 * and assigns each code its category (bad input, stopped, internal), which is
 * all the CLI needs to pick an exit code. Errors extend the closest built-in
 * (`TypeError`, `RangeError`, `SyntaxError`, `Error`) through its branded
 * {@linkcode LoomError} base, so a class is declared in one line, and all are
 * built the same way: `new XError(code, message, { cause?, ...details })`.
 *
 * @module
 */

/** The brand, shared by every copy of the package (`Symbol.for`). */
const BRAND: unique symbol = Symbol.for("loom.error");

/**
 * What kind of failure a code names: `bad_input` (the caller's input or
 * usage is wrong and nothing was changed), `stopped` (a run ended early by
 * rule), `internal` (Loom, a provider or the machine failed).
 */
export type ErrorCategory = "bad_input" | "stopped" | "internal";

/**
 * The machine codes of the Loom error class `Owner` (a class name, or a union
 * of them); without an argument, every code a Loom error can carry. This is
 * the registry: each class's codes are named here, once, and the classes
 * take their `code` type from it (`LoomError.SyntaxError<"PointerError">`).
 *
 * @example
 * ```ts
 * import type { LoomErrorCode } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const code: LoomErrorCode<"PointerError"> = "pointer_not_found";
 * const any: LoomErrorCode = code;
 * // @ts-expect-error: digest_mismatch is not a PointerError code
 * const other: LoomErrorCode<"PointerError"> = "digest_mismatch";
 * assert.deepEqual([any, other], ["pointer_not_found", "digest_mismatch"]);
 * ```
 */
export type LoomErrorCode<Owner extends string = string> = {
  // command line
  UsageError: "usage";
  InputError: "recording_invalid" | "test_program_not_found";
  // context
  CompileOptionsError:
    | "too_many_breakpoints"
    | "unknown_section"
    | "invalid_ttl"
    | "cache_ttl_order";
  IncludeCycleError: "include_cycle";
  InvalidEntryError: "invalid_entry";
  UnknownEntryError: "unknown_entry";
  IdPoolExhaustedError: "ids_exhausted";
  ContextFileError: "unreadable_context_file" | "invalid_context_file";
  // store
  InvalidUtf8Error: "invalid_utf8";
  ResultRestoreError:
    | "digest_mismatch"
    | "invalid_result_id"
    | "duplicate_result"
    | "too_large"
    | "store_full";
  // reference: the wire-format failures, and the errors behind some of them
  ReferenceFailureError:
    | "unknown_result"
    | "digest_mismatch"
    | "invalid_reference"
    | "invalid_range"
    | "not_char_boundary"
    | "invalid_pointer"
    | "pointer_not_found"
    | "invalid_json"
    | "ambiguous_json"
    | "not_a_string"
    | "answer_too_large"
    | "budget_exhausted"
    | "request_too_large"
    | "not_available"
    | "invalid_arguments"
    | "invalid_pattern"
    | "result_evicted";
  PointerError: "invalid_pointer" | "pointer_not_found";
  JsonScanError: "invalid_json" | "ambiguous_json";
  LookupBudgetError: "budget_exhausted";
  // besides every ReferenceFailureError code
  EditExpansionError: "invalid_contents" | "too_many_segments" | "too_large";
  // briefing
  ArchiveCapacityError: "capacity";
  RequestCeilingError: "request_too_large";
  ContextReportError: "report_invalid";
  // view
  RequestLogError: "request_log_invalid";
  ViewInputError: "view_input_invalid";
  // providers
  ProviderError:
    | "bad_spec"
    | "bad_option"
    | "missing_api_key"
    | "recording_invalid"
    | "recording_mismatch"
    | "recording_exhausted"
    | "recording_unwritable"
    | "request_log_unwritable"
    | "provider_http"
    | "provider_connection"
    | "provider_timeout"
    | "provider_aborted"
    | "provider_protocol"
    | "provider_contract";
  // executor
  ConfinementUnavailableError: "confinement_unavailable";
  ExecutorError:
    | "workspace_unavailable"
    | "executor_closed"
    | "edit_failed"
    | "rollback_failed"
    | "hard_link"
    | "symlink_escape"
    | "not_a_file"
    | "no_test_command"
    | "tests_failed_to_start"
    | "worker_failed";
  // slice
  SliceRequestError: "invalid_request";
  SliceStoppedError: "slice_stopped";
  // persist
  UnknownToolError: "unknown_tool";
  PersistenceConfigError: "invalid_config";
  SessionError:
    | "session_inside_workspace"
    | "session_missing"
    | "session_exists"
    | "session_invalid"
    | "session_outdated"
    | "session_tampered"
    | "session_locked"
    | "session_key_invalid"
    | "session_closed"
    | "result_missing"
    | "result_corrupted";
  // storage
  StorageError:
    | "storage_url_invalid"
    | "storage_unreachable"
    | "storage_unavailable"
    | "storage_schema_newer"
    | "storage_read_only"
    | "storage_name_invalid"
    | "journal_conflict"
    | "lease_held"
    | "lease_lost"
    | "store_full";
  // mcp
  McpToolError:
    | "invalid_arguments"
    | "unknown_tool"
    | "invalid_path"
    | "outside_root"
    | "symlink_escape"
    | "git_write"
    | "not_a_file"
    | "not_regular_file";
  GatewayConfigError: "gateway_config_invalid";
  // code
  CodeError:
    | "code_timeout"
    | "code_memory"
    | "code_calls"
    | "code_output"
    | "code_error";
  // cost
  PriceTableError: "price_file_invalid" | "unknown_model";
} extends infer Codes
  ? { [E in keyof Codes]: E extends Owner ? Codes[E] : never }[keyof Codes]
  : never;

// Each code's category. A provider failure after
// the start is internal (exit 3); a model spec, key or recording that cannot
// be used is bad input, found before any work (exit 2).
const CATEGORY: Readonly<Record<LoomErrorCode, ErrorCategory>> = {
  usage: "bad_input",
  too_many_breakpoints: "bad_input",
  unknown_section: "bad_input",
  invalid_ttl: "bad_input",
  include_cycle: "bad_input",
  invalid_entry: "bad_input",
  unknown_entry: "bad_input",
  ids_exhausted: "internal",
  unreadable_context_file: "bad_input",
  invalid_context_file: "bad_input",
  invalid_utf8: "bad_input",
  invalid_result_id: "bad_input",
  duplicate_result: "bad_input",
  store_full: "bad_input",
  unknown_result: "bad_input",
  digest_mismatch: "bad_input",
  invalid_reference: "bad_input",
  invalid_range: "bad_input",
  not_char_boundary: "bad_input",
  invalid_pointer: "bad_input",
  pointer_not_found: "bad_input",
  invalid_json: "bad_input",
  ambiguous_json: "bad_input",
  not_a_string: "bad_input",
  answer_too_large: "bad_input",
  budget_exhausted: "stopped",
  not_available: "bad_input",
  invalid_pattern: "bad_input",
  result_evicted: "bad_input",
  invalid_contents: "bad_input",
  too_many_segments: "bad_input",
  too_large: "bad_input",
  capacity: "stopped",
  report_invalid: "bad_input",
  request_log_invalid: "bad_input",
  view_input_invalid: "bad_input",
  request_too_large: "stopped",
  cache_ttl_order: "bad_input",
  bad_spec: "bad_input",
  bad_option: "bad_input",
  missing_api_key: "bad_input",
  recording_invalid: "bad_input",
  recording_mismatch: "internal",
  recording_exhausted: "internal",
  recording_unwritable: "internal",
  request_log_unwritable: "internal",
  provider_http: "internal",
  provider_connection: "internal",
  provider_timeout: "internal",
  provider_aborted: "stopped",
  provider_protocol: "internal",
  provider_contract: "internal",
  confinement_unavailable: "internal",
  workspace_unavailable: "internal",
  executor_closed: "internal",
  edit_failed: "internal",
  rollback_failed: "internal",
  hard_link: "bad_input",
  symlink_escape: "bad_input",
  not_a_file: "bad_input",
  no_test_command: "internal",
  tests_failed_to_start: "internal",
  worker_failed: "internal",
  test_program_not_found: "bad_input",
  invalid_request: "bad_input",
  slice_stopped: "stopped",
  unknown_tool: "bad_input",
  invalid_config: "bad_input",
  session_inside_workspace: "bad_input",
  session_missing: "bad_input",
  session_exists: "bad_input",
  session_invalid: "bad_input",
  session_outdated: "bad_input",
  session_tampered: "bad_input",
  session_locked: "bad_input",
  session_key_invalid: "bad_input",
  session_closed: "internal",
  result_missing: "bad_input",
  result_corrupted: "bad_input",
  storage_url_invalid: "bad_input",
  storage_unreachable: "internal",
  storage_unavailable: "internal",
  storage_schema_newer: "bad_input",
  storage_read_only: "internal",
  storage_name_invalid: "bad_input",
  journal_conflict: "internal",
  lease_held: "bad_input",
  lease_lost: "internal",
  invalid_arguments: "bad_input",
  invalid_path: "bad_input",
  outside_root: "bad_input",
  git_write: "bad_input",
  not_regular_file: "bad_input",
  gateway_config_invalid: "bad_input",
  price_file_invalid: "bad_input",
  unknown_model: "bad_input",
  code_timeout: "stopped",
  code_memory: "stopped",
  code_calls: "stopped",
  code_output: "stopped",
  code_error: "bad_input",
};

/** An error Loom threw on purpose: branded, coded, categorized. */
export interface LoomError extends Error {
  /** Stable, snake_case machine code, e.g. `digest_mismatch`. */
  readonly code: LoomErrorCode;
}

/** The options every Loom error constructor takes after code and message. */
export interface LoomErrorOptions {
  /** The underlying error, if any. */
  readonly cause?: unknown;
}

/**
 * Tells whether a thrown value is one of Loom's errors, by its brand (not by
 * the shape: Deno's own `NotFound`, whose `code` is `ENOENT`, is not one).
 *
 * @param value Anything caught.
 * @returns `true` when `value` carries the `Symbol.for("loom.error")` brand.
 *
 * @example
 * ```ts
 * import { isLoomError } from "@loom/loom";
 * import { PointerError } from "@loom/loom/reference";
 * import assert from "node:assert/strict";
 * assert.equal(isLoomError(new PointerError("invalid_pointer", "Bad pointer")), true);
 * const notFound = Object.assign(new Deno.errors.NotFound("gone"), { code: "ENOENT" });
 * assert.equal(isLoomError(notFound), false);
 * ```
 */
export function isLoomError(value: unknown): value is LoomError {
  return value instanceof Error &&
    (value as unknown as Record<symbol, unknown>)[BRAND] === true;
}

/**
 * The category the registry assigns a code.
 *
 * @param code A Loom error code.
 * @returns `bad_input`, `stopped` or `internal`.
 *
 * @example
 * ```ts
 * import { errorCategory } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.equal(errorCategory("digest_mismatch"), "bad_input");
 * assert.equal(errorCategory("provider_http"), "internal");
 * ```
 */
export function errorCategory(code: LoomErrorCode): ErrorCategory {
  return CATEGORY[code];
}

/**
 * The message of a thrown value: an error's message, anything else as text.
 *
 * @param error Anything caught.
 * @returns The text to put into a message.
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `run` and returns its value; when it throws, throws what `map` makes
 * of the error instead: the one call whose failure a Loom error explains.
 *
 * @param run The call that may fail.
 * @param map Makes the error to throw from the one caught.
 * @returns What `run` returned.
 *
 * @example
 * ```ts
 * import { mapError } from "./errors.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => mapError(() => JSON.parse("{"), () => new SyntaxError("Bad config")),
 *   /Bad config/,
 * );
 * assert.deepEqual(mapError(() => JSON.parse("[]"), () => new Error()), []);
 * ```
 */
export function mapError<T>(run: () => T, map: (error: unknown) => Error): T {
  try {
    return run();
  } catch (error) {
    throw map(error);
  }
}

/**
 * The branded bases of every Loom error class, one per built-in it may
 * extend. `Owner` is the class's name in the {@linkcode LoomErrorCode}
 * registry, which gives its `code` type; `Details` are the extra fields the
 * constructor's options carry and the error keeps. The base sets the brand,
 * the `code`, the `name` (the class's own) and the `cause`.
 *
 * @example Declare an error class
 * ```ts
 * import { isLoomError, LoomError } from "@loom/loom";
 * import assert from "node:assert/strict";
 * class PointerError extends LoomError.SyntaxError<"PointerError"> {}
 * class JsonScanError
 *   extends LoomError.SyntaxError<"JsonScanError", { readonly offset: number }> {}
 * const error = new JsonScanError("invalid_json", "Bad JSON", { offset: 3 });
 * assert.equal(error.offset, 3);
 * assert.equal(error.name, "JsonScanError");
 * assert.ok(error instanceof SyntaxError && isLoomError(error));
 * assert.equal(new PointerError("invalid_pointer", "Bad pointer").code, "invalid_pointer");
 * ```
 */
export const LoomError: {
  readonly [B in "Error" | "TypeError" | "RangeError" | "SyntaxError"]: new <
    Owner extends string,
    Details extends object = Record<never, never>,
  >(
    code: LoomErrorCode<Owner>,
    message: string,
    ...options: Record<never, never> extends Details
      ? [options?: LoomErrorOptions & Details]
      : [options: LoomErrorOptions & Details]
  ) =>
    & InstanceType<(typeof globalThis)[B]>
    & { readonly code: LoomErrorCode<Owner> }
    & Readonly<Details>;
} = Object.freeze({
  Error: branded(Error),
  TypeError: branded(TypeError),
  RangeError: branded(RangeError),
  SyntaxError: branded(SyntaxError),
}) as never;

/** The branded subclass of one built-in that Loom error classes extend. */
function branded(Builtin: ErrorConstructor): unknown {
  class Branded extends Builtin {
    readonly code: LoomErrorCode;
    constructor(
      code: LoomErrorCode,
      message: string,
      options: LoomErrorOptions = {},
    ) {
      const { cause, ...details } = options;
      super(message, cause === undefined ? undefined : { cause });
      Object.assign(this, details);
      this.name = new.target.name;
      this.code = code;
    }
  }
  Object.defineProperty(Branded.prototype, BRAND, { value: true });
  Object.defineProperty(Branded, "name", { value: `Loom${Builtin.name}` });
  return Branded;
}
