/**
 * The typed errors of the section compiler. Each extends the closest
 * built-in through its branded base and takes its codes from the registry
 * of `lib/errors.ts`.
 *
 * @module
 */
import { LoomError } from "../errors.ts";

/**
 * Compile options or cache markers that a provider would reject: more than 4
 * breakpoints, an unknown section name, a cache TTL other than 5 minutes or
 * 1 hour, or a 1h marker after a 5m one. Thrown before anything is compiled
 * or sent, so nothing changes (step is kept). Its codes:
 * - `too_many_breakpoints`: More than 4 cache breakpoints were asked for in one request.
 * - `unknown_section`: A section name is not one of the six sections.
 * - `invalid_ttl`: `cacheTtl` is not `"5m"`, `"1h"`, `300` or `3600`.
 * - `cache_ttl_order`: A turn request puts a `1h` cache marker after a `5m` one.
 *
 * @example
 * ```ts
 * import { CompileOptionsError, Context } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const ctx = new Context("agent");
 * assert.throws(
 *   () => ctx.toAnthropic({ cacheTtl: "2h" as "1h" }),
 *   (e) => e instanceof CompileOptionsError && e.code === "invalid_ttl",
 * );
 * ```
 */
export class CompileOptionsError
  extends LoomError.RangeError<"CompileOptionsError"> {}

/**
 * Including a context would make the include graph cyclic (a context that
 * includes itself, directly or through its visitors).
 *
 * @example
 * ```ts
 * import { Context, IncludeCycleError } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const ctx = new Context("agent");
 * assert.throws(() => ctx.include(ctx), IncludeCycleError);
 * ```
 */
export class IncludeCycleError extends LoomError.Error<"IncludeCycleError"> {}

/**
 * An entry was constructed with values no provider accepts (an unknown role,
 * an image media type outside JPEG/PNG/GIF/WebP, data that is not base64, an
 * image with the assistant role).
 *
 * @example
 * ```ts
 * import { InvalidEntryError, StringEntry } from "@loom/loom";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => new StringEntry("x", { role: "tool" as "user" }),
 *   InvalidEntryError,
 * );
 * ```
 */
export class InvalidEntryError
  extends LoomError.TypeError<"InvalidEntryError"> {}

/**
 * Every id of an {@linkcode IdPool} is in use.
 *
 * @example
 * ```ts
 * import { IdPool, IdPoolExhaustedError } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const pool = new IdPool({ length: 1, maxLength: 1, seed: 1 });
 * for (let i = 0; i < 31; i++) pool.next();
 * assert.throws(() => pool.next(), IdPoolExhaustedError);
 * ```
 */
export class IdPoolExhaustedError
  extends LoomError.RangeError<"IdPoolExhaustedError"> {}

/**
 * A context was asked to remember or redact an entry (or id) that none of
 * its own sections holds.
 *
 * @example
 * ```ts
 * import { Context, UnknownEntryError } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const ctx = new Context("agent");
 * assert.throws(() => ctx.redact("zzz"), UnknownEntryError);
 * assert.throws(() => ctx.remember("zzz"), (e) => e instanceof UnknownEntryError && e.code === "unknown_entry");
 * ```
 */
export class UnknownEntryError
  extends LoomError.RangeError<"UnknownEntryError"> {}
