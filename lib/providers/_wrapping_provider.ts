/**
 * A provider that wraps another and writes what passes through it to a
 * file (`--record`, `--record-requests`): it answers with the wrapped
 * provider's spec and body parts, and does its own writing in `call`.
 *
 * @module
 */
import type { RequestPart } from "../briefing/context_report.ts";
import type { TurnRequest } from "../briefing/turn_request.ts";
import type { ModelCall, ModelProvider, ModelReply } from "./model_provider.ts";

/** The base of the providers that write a file beside another's calls. */
export abstract class WrappingProvider implements ModelProvider {
  /** The wrapped provider's spec. */
  readonly spec: string;
  /** The file written. */
  readonly path: string;
  /** The wrapped provider. */
  protected readonly inner: ModelProvider;
  /** The wrapped provider's body parts, when it has any. */
  requestParts?: (request: TurnRequest) => readonly RequestPart[];

  /**
   * Wraps a provider.
   *
   * @param inner The provider whose calls pass through.
   * @param path The file written.
   */
  constructor(inner: ModelProvider, path: string) {
    this.inner = inner;
    this.spec = inner.spec;
    this.path = path;
    if (inner.requestParts !== undefined) {
      const parts = inner.requestParts.bind(inner);
      this.requestParts = (request: TurnRequest) => parts(request);
    }
  }

  /** Calls the wrapped provider and writes what the file keeps. */
  abstract call(call: ModelCall): Promise<ModelReply>;
}
