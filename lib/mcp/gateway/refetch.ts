/**
 * Bringing back the body of a result a session kept as a descriptor only
 * (its tool was not persistable under the seeds' rule): the gateway calls
 * the tool again with the recorded arguments, only when the tool is
 * annotated read-only and idempotent, and takes the answer in only when it
 * has the recorded digest.
 *
 * @module
 */
import { ResultStore } from "../../store/result_store.ts";
import type { GatewayPersistence } from "./gateway_note.ts";
import { type MediaTemplate, offloadResult } from "./offload.ts";
import type { ToolRoute } from "./tool_listing.ts";
import { messageOf } from "../../errors.ts";

/** Why a result's body could not be brought back. */
export interface RefetchRefusal {
  /** Always `false`, as a retrieval answer's. */
  readonly ok: false;
  /** `result_not_persisted` or `digest_mismatch`. */
  readonly code: string;
  /** What happened and what to do. */
  readonly message: string;
}

/** What {@linkcode refetch} needs of the gateway. */
export interface RefetchOptions {
  /** The one store, where a body brought back is restored. */
  readonly store: ResultStore;
  /** The session's recorded calls. */
  readonly persistence?: GatewayPersistence;
  /** `--max-result-bytes`. */
  readonly maxResultBytes: number;
  /** The route of an upstream tool, once the upstreams are listed. */
  readonly routeOf: (
    server: string,
    tool: string,
  ) => Promise<ToolRoute | undefined>;
  /** Where the media template of a body brought back goes. */
  readonly media: Map<string, MediaTemplate>;
}

/**
 * Restores the body of result `id` when the store lacks it and the session
 * recorded its call, by calling the tool again.
 *
 * @param id The result id a reference names (untrusted).
 * @param options The store, the session and the routes.
 * @returns `undefined` when the store holds the body (or never did), else why not.
 */
export async function refetch(
  id: string,
  options: RefetchOptions,
): Promise<RefetchRefusal | undefined> {
  const o = options;
  if (id === "" || o.store.get(id) !== undefined) return undefined;
  const call = o.persistence?.missing?.(id);
  if (call === undefined) return undefined;
  const route = await o.routeOf(call.server, call.tool);
  const hints = route?.tool.annotations as
    | Record<string, unknown>
    | undefined;
  const what = `${id} (${call.server}/${call.tool})`;
  if (
    route === undefined || hints?.readOnlyHint !== true ||
    hints?.idempotentHint !== true
  ) {
    return {
      ok: false,
      code: "result_not_persisted",
      message:
        `${what} was kept as a descriptor only, and its tool is not annotated read-only and idempotent, so the gateway does not call it again; call the tool again yourself`,
    };
  }
  let answer;
  try {
    answer = await route.upstream.request("tools/call", {
      name: call.tool,
      arguments: call.arguments,
    });
  } catch (error) {
    return {
      ok: false,
      code: "result_not_persisted",
      message:
        `${what} was kept as a descriptor only and calling ${call.tool} again failed: ${
          messageOf(error)
        }`,
    };
  }
  const scratch = new ResultStore({
    maxResultBytes: o.maxResultBytes,
    maxTotalBytes: Number.MAX_SAFE_INTEGER,
  });
  const again = await offloadResult(answer.result, {
    server: call.server,
    tool: call.tool,
    store: scratch,
    offloadBytes: 0,
    maxResultBytes: o.maxResultBytes,
    outline: () => undefined,
  });
  const part = again.stored.find((s) =>
    String(s.descriptor.part ?? "content[0]") === call.part
  );
  const fetched = part === undefined ? undefined : scratch.get(part.id);
  if (fetched === undefined || fetched.sha256 !== call.sha256) {
    return {
      ok: false,
      code: "digest_mismatch",
      message:
        `${what} was called again to bring back its body, but the answer differs from the one the descriptor's sha256 names; the gateway does not swap it in`,
    };
  }
  o.store.restore({ ...fetched, id });
  if (part?.media !== undefined) o.media.set(id, part.media);
  return undefined;
}
