/**
 * The passthrough compactor of the upstream library (`StubCompactor`): it
 * compacts nothing and returns the compiled context.
 *
 * @module
 */
import type { Compactor, Context } from "./context.ts";

/**
 * A compactor that does not compact: {@linkcode StubCompactor.compact}
 * returns `context.render({ clearVolatile: false })`, the compiled text,
 * and leaves every section (step included) as it was. A placeholder for a
 * model-backed compactor, as upstream ships it.
 *
 * @example
 * ```ts
 * import { Context, StubCompactor } from "@loom/loom";
 * import assert from "node:assert/strict";
 * const ctx = new Context("agent");
 * ctx.foundation.add("You are a helpful assistant.");
 * ctx.step.add("Current command output");
 * const text = ctx.compact(new StubCompactor());
 * assert.equal(text, ctx.render({ clearVolatile: false }));
 * assert.equal(ctx.step.entries.length, 1);
 * ```
 */
export class StubCompactor implements Compactor<string> {
  /**
   * Compiles the context without clearing its volatile step section.
   *
   * @param context The context to "compact".
   * @returns The compiled text, unchanged.
   */
  compact(context: Context): string {
    return context.render({ clearVolatile: false });
  }
}
