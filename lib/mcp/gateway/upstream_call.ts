/**
 * One call of an upstream tool through the gateway: the host's `_meta`,
 * cancellation and progress passed on, the answer checked to be an MCP
 * `CallToolResult`, a large answer offloaded into the store under the
 * seeds' persistence rule (the self-reading check first, then the servers
 * file's opt-in), and the call counted in the `--report` figures.
 *
 * @module
 */
import type { ResultStore } from "../../store/result_store.ts";
import { jsonOutline } from "../../reference/outline.ts";
import { toolSettings } from "./gateway_config.ts";
import type { GatewayNote } from "./gateway_note.ts";
import { shapeOf } from "./large_text.ts";
import { type MediaTemplate, offloadResult } from "./offload.ts";
import type { Sdk } from "./sdk.ts";
import type { ToolFigureBook } from "./tool_figures.ts";
import type { ToolRoute } from "./tool_listing.ts";
import { jsonBytes, type McpResult, toolError } from "./tool_result.ts";
import { UpstreamFailure } from "./upstream.ts";
import { offloadAttributes } from "../../telemetry/mcp.ts";
import { isLoomError } from "../../errors.ts";

/** The host side of a call: cancellation and progress. */
export interface CallContext {
  /** Aborted when the host cancels. */
  readonly signal?: AbortSignal;
  /** Sends a progress notification with the host's token (when it asked). */
  readonly progress?: (progress: Record<string, unknown>) => void;
  /** The host's `_meta` of the request (passed on, progress token aside). */
  readonly meta?: Record<string, unknown>;
}

/** What {@linkcode callUpstream} needs of the gateway. */
export interface UpstreamCallOptions {
  /** The MCP SDK (its `CallToolResultSchema`). */
  readonly sdk: Sdk;
  /** The one store. */
  readonly store: ResultStore;
  /** `--offload-bytes`. */
  readonly offloadBytes: number;
  /** `--max-result-bytes`. */
  readonly maxResultBytes: number;
  /** Diagnostics to standard error. */
  readonly log: (line: string) => void;
  /** The `--report` figures. */
  readonly figures: ToolFigureBook;
  /** Where the media templates of stored image, audio or blob parts go. */
  readonly media: Map<string, MediaTemplate>;
  /**
   * Where persisted results can be read back (the session folder or the
   * store's redacted location), for telemetry's references.
   */
  readonly location?: string;
}

/**
 * Calls an upstream tool and answers what the host gets: the upstream's
 * result, descriptors of its offloaded parts, or a tool error naming the
 * server.
 *
 * @param route The upstream and its tool.
 * @param args The arguments (untrusted, passed on as they are).
 * @param context Cancellation, progress and `_meta` of the host.
 * @param options The store, the limits and the figures.
 * @returns The MCP result.
 */
export async function callUpstream(
  route: ToolRoute,
  args: Record<string, unknown>,
  context: CallContext,
  options: UpstreamCallOptions,
): Promise<McpResult> {
  const { upstream, tool } = route;
  const o = options;
  const figures = o.figures.figure(`${upstream.name}/${tool.name}`);
  figures.calls += 1;
  /** A failure as the host's tool error, logged and counted. */
  const failed = (error: { code: string; message: string }): McpResult => {
    o.log(`${upstream.name}/${tool.name}: ${error.code}`);
    const result = toolError(error.code, error.message);
    figures.bytes_to_host += jsonBytes(result);
    return result;
  };
  const meta = { ...(context.meta ?? {}) };
  delete meta.progressToken;
  let answer;
  try {
    answer = await upstream.request(
      "tools/call",
      {
        name: tool.name,
        arguments: args,
        ...(Object.keys(meta).length === 0 ? {} : { _meta: meta }),
      },
      {
        ...(context.signal === undefined ? {} : { signal: context.signal }),
        ...(context.progress === undefined
          ? {}
          : { onprogress: context.progress }),
      },
    );
  } catch (error) {
    if (!(error instanceof UpstreamFailure)) throw error;
    return failed(error);
  }
  const checked = o.sdk.types.CallToolResultSchema.safeParse(
    shapeOf(answer.result),
  );
  if (!checked.success) {
    const result = toolError(
      "upstream_malformed",
      `Server ${upstream.name} answered ${tool.name} with a result that is not an MCP CallToolResult: ${
        String(checked.error.issues?.[0]?.message ?? checked.error).slice(
          0,
          300,
        )
      }`,
    );
    o.log(`${upstream.name}/${tool.name}: upstream_malformed`);
    figures.bytes_to_host += jsonBytes(result);
    return result;
  }
  const classification = toolSettings(upstream.entry, tool.name);
  // The seeds' rule: the self-reading check comes before any opt-in.
  const persist = !classification.selfReading && classification.persist;
  let offloaded;
  try {
    offloaded = await offloadResult(answer.result, {
      server: upstream.name,
      tool: tool.name,
      store: o.store,
      offloadBytes: o.offloadBytes,
      maxResultBytes: o.maxResultBytes,
      ...(answer.partialTotalBytes === undefined
        ? {}
        : { partialTotalBytes: answer.partialTotalBytes }),
      outline: jsonOutline,
      note: (part, media): GatewayNote => ({
        call: {
          server: upstream.name,
          tool: tool.name,
          part,
          arguments: args,
          ...(media === undefined ? {} : { media }),
        },
        persist,
      }),
    });
  } catch (error) {
    // The store could not keep the answer (unreachable, its journal no
    // longer verifies): a typed tool error naming it, never a hang.
    if (!isLoomError(error)) throw error;
    return failed(error);
  }
  figures.bytes_received += offloaded.upstreamBytes;
  if (!offloaded.offloaded) {
    figures.bytes_to_host += offloaded.upstreamBytes;
    return offloaded.result;
  }
  figures.offloaded += 1;
  const sent = jsonBytes(offloaded.result);
  figures.bytes_to_host += sent;
  offloadAttributes({
    stored: offloaded.stored.map((part) => {
      const kept = o.store.get(part.id);
      return {
        result: part.id,
        sha256: kept?.sha256 ?? String(part.descriptor.sha256),
        bytes: kept?.bytes.length ?? 0,
        media_type: String(part.descriptor.media_type ?? "text/plain"),
        ...(persist && o.location !== undefined
          ? { location: o.location }
          : {}),
      };
    }),
    bytesUpstream: offloaded.upstreamBytes,
    bytesToHost: sent,
  });
  o.log(
    `${upstream.name}/${tool.name}: ${offloaded.upstreamBytes} bytes upstream → ${sent} bytes to the host (${
      offloaded.stored.map((s) => s.id).join(", ") || "not stored"
    })`,
  );
  for (const part of offloaded.stored) {
    if (part.media !== undefined) o.media.set(part.id, part.media);
  }
  return offloaded.result;
}
