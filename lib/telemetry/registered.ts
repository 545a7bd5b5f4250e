/**
 * Whether anything can record: an OpenTelemetry API global is registered
 * (Deno's own OpenTelemetry registers one at start-up when `OTEL_DENO=true`;
 * a library user's SDK registers one when it starts). Without one every
 * span is a no-op, so a caller may skip loading its telemetry at all. This
 * module imports nothing, so asking costs no module load.
 *
 * @module
 */

/** The key `@opentelemetry/api` 1.x keeps its registered globals under. */
const API_GLOBAL = Symbol.for("opentelemetry.js.api.1");

/**
 * Whether an OpenTelemetry API global is registered now.
 *
 * @returns `true` when spans may record.
 *
 * @example
 * ```ts
 * import { telemetryRegistered } from "./registered.ts";
 * import assert from "node:assert/strict";
 * // No OTEL_DENO and no SDK in a doc test: nothing can record.
 * assert.equal(telemetryRegistered(), Deno.env.get("OTEL_DENO") === "true");
 * ```
 */
export function telemetryRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[API_GLOBAL] !== undefined;
}
