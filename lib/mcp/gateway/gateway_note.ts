/**
 * What the gateway and its persistence (`--session`, `--store`) tell each
 * other about a stored result: the note the gateway hands the store with
 * each result (the call behind it and the seeds' persistence rule's
 * decision), and the recorded call the persistence gives back for a result
 * it kept as a descriptor only, so the gateway can call it again.
 *
 * @module
 */
import type { MediaTemplate } from "./offload.ts";

/**
 * The persistence of gateway results (`--session`, `--store`): it is the
 * backing of the gateway's store, so each result is recorded as it is
 * stored, with the {@linkcode GatewayNote} the gateway gave it.
 */
export interface GatewayPersistence {
  /** The recorded call of a result kept as a descriptor only, to call it again. */
  missing(id: string): RecordedCall | undefined;
}

/** The call that produced a stored result, enough to call it again. */
export interface RecordedCall {
  /** The server's entry name. */
  readonly server: string;
  /** The upstream tool. */
  readonly tool: string;
  /** The arguments. */
  readonly arguments: Record<string, unknown>;
  /** The part of the answer the result holds, e.g. `content[0]`. */
  readonly part: string;
  /** The result's digest. */
  readonly sha256: string;
  /** The block of an image, audio or blob result. */
  readonly media?: MediaTemplate;
}

/**
 * What the gateway hands its store with each result it stores (the store's
 * `note`, passed to its backing, the session): the call behind the result
 * and the seeds' persistence rule's decision — whether its body may be
 * written (`persist`), or only its descriptor and this call. (A type, not
 * an interface: the store takes notes as plain records.)
 */
export type GatewayNote = {
  /** The call (without arguments for a resource read). */
  readonly call: {
    readonly server: string;
    readonly tool: string;
    readonly part: string;
    readonly arguments?: Record<string, unknown>;
    readonly media?: MediaTemplate;
  };
  /** Whether the body may be persisted. */
  readonly persist: boolean;
};
