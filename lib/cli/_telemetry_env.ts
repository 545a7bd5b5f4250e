/**
 * The commands that emit telemetry (`run`, `mcp`) refuse an unknown
 * `LOOM_OTEL_CONTENT` before they start: a typo must not quietly record
 * less (or more) than the user asked for.
 *
 * @module
 */
import { CONTENT_VARIABLE, parseContentMode } from "../telemetry/content.ts";
import { type CliIo, ExitCode } from "./_io.ts";

/**
 * Writes why `LOOM_OTEL_CONTENT` is unusable, if it is.
 *
 * @param command The command's name, for the message.
 * @param io Where the message goes.
 * @returns `ExitCode.usage` when refused, else `undefined`.
 */
export function refuseUnknownContentMode(
  command: string,
  io: CliIo,
): number | undefined {
  let value: string | undefined;
  try {
    value = Deno.env.get(CONTENT_VARIABLE);
  } catch {
    return undefined; // No env access granted: the library reads none either.
  }
  if (value === undefined || value === "") return undefined;
  try {
    parseContentMode(value);
    return undefined;
  } catch (error) {
    io.err(`loom ${command}: ${(error as Error).message}\n`);
    return ExitCode.usage;
  }
}
