/**
 * The handle of an ephemeral stage — a compactor, a summariser, a forked
 * helper run. It may carry the session id for tracing, but it does not own
 * the session's storage root, so it has no way to write there: no root, no
 * write methods, frozen.
 *
 * @module
 */

/**
 * The session handle of a stage that never persists.
 *
 * @example
 * ```ts
 * import { EphemeralSession } from "@loom/loom/session";
 * import assert from "node:assert/strict";
 * const compactor = new EphemeralSession("compactor", "run-1");
 * assert.equal(compactor.persists, false);
 * assert.ok(Object.isFrozen(compactor));
 * ```
 */
export class EphemeralSession {
  /** Always `ephemeral`. */
  readonly kind: "ephemeral" = "ephemeral";
  /** Always `false`: nothing is ever written through this handle. */
  readonly persists: false = false;
  /** The session id shared for tracing, if any. */
  readonly session: string | undefined;
  /** What the stage is, e.g. `compactor`, `summariser`, `helper`. */
  readonly stage: string;

  /**
   * Opens a handle for an ephemeral stage.
   *
   * @param stage What the stage is.
   * @param session The session id it shares for tracing, if any.
   * @throws {TypeError} When the stage is not a non-empty string.
   *
   * @example
   * ```ts
   * import { EphemeralSession } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const helper = new EphemeralSession("summariser", "run-42");
   * assert.equal(helper.persists, false);
   * assert.equal("save" in helper, false);
   * ```
   */
  constructor(stage: string, session?: string) {
    if (typeof stage !== "string" || stage === "") {
      throw new TypeError(
        "Cannot open an ephemeral session: the stage must be a non-empty string",
      );
    }
    this.stage = stage;
    this.session = session;
    Object.freeze(this);
  }

  /**
   * A further ephemeral stage with the same session id.
   *
   * @param stage What the new stage is.
   * @returns Another handle that never persists.
   *
   * @example
   * ```ts
   * import { EphemeralSession } from "@loom/loom/session";
   * import assert from "node:assert/strict";
   * const nested = new EphemeralSession("helper", "s").fork("compactor");
   * assert.equal(nested.session, "s");
   * assert.equal(nested.persists, false);
   * ```
   */
  fork(stage: string): EphemeralSession {
    return new EphemeralSession(stage, this.session);
  }
}
