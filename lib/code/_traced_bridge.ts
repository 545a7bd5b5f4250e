/**
 * A run's bridge inside its span: every call, read and store of the code
 * runs with the run's span active (so the face's own spans of a call — the
 * gateway's upstream `CLIENT` span, `codeTool`'s `execute_tool` — are its
 * children), and the code's stores and reads are the span's events. Only
 * used while the span records: otherwise the face's bridge is used as it is.
 *
 * @module
 */
import type { CodeRunSpan } from "../telemetry/code.ts";
import type { CodeBridge } from "./_bridge.ts";

/**
 * The face's bridge, traced by the run's span.
 *
 * @param bridge The face's bridge.
 * @param span The run's span.
 * @returns The same bridge, each request inside the span.
 */
export function tracedBridge(
  bridge: CodeBridge,
  span: CodeRunSpan,
): CodeBridge {
  return {
    callTool: (server, tool, args, signal) =>
      span.within(() => bridge.callTool(server, tool, args, signal)),
    read: async (reference, signal) => {
      try {
        const value = await span.within(() => bridge.read(reference, signal));
        const { result, sha256 } = (reference ?? {}) as Record<string, unknown>;
        if (typeof result === "string" && typeof sha256 === "string") {
          span.read({ result, sha256 });
        }
        return value;
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        span.read({ error: typeof code === "string" ? code : "_OTHER" });
        throw error;
      }
    },
    store: async (text, options) => {
      const descriptor = await span.within(() => bridge.store(text, options));
      const { result, sha256, utf8_bytes } = descriptor;
      if (typeof result === "string" && typeof sha256 === "string") {
        span.stored({
          result,
          sha256,
          bytes: typeof utf8_bytes === "number" ? utf8_bytes : 0,
        });
      }
      return descriptor;
    },
  };
}
