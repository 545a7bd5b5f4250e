/**
 * `--record-requests PATH`: wraps a provider and appends every request it
 * is asked to send to a `loom-requests/1` file, one JSON line per request
 * in the order of the context report's lines, so a viewer can show the
 * request as sent — its bytes equal to the report's `request_bytes` — and
 * fetch one without reading the others (`loom view`, docs/view.md).
 *
 * Unlike a recording (`--record`), which keeps only the model's replies,
 * this file holds prompt text: the intent, the instructions, and whatever
 * the run showed the model of the workspace. It is asked for on purpose.
 *
 * The format: a header line `{"format":"loom-requests/1"}`, then per
 * request `{"line":N,"phase":"selection","request":<turn request>}` where
 * `N` counts the report's lines from 1 and the request is its
 * deterministic serialization (`serializeTurnRequest`) written as is, so
 * the request's bytes are the line's bytes between `"request":` and the
 * closing brace.
 *
 * @module
 */
import { messageOf } from "../errors.ts";
import { serializeTurnRequest } from "../briefing/turn_request.ts";
import type { ModelCall, ModelProvider, ModelReply } from "./model_provider.ts";
import { WrappingProvider } from "./_wrapping_provider.ts";
import { ProviderError } from "./provider_error.ts";

/** The header line's format tag. */
export const REQUEST_LOG_FORMAT = "loom-requests/1";

/** Options of {@linkcode RequestLogProvider}. */
export interface RequestLogOptions {
  /**
   * Report lines an earlier run of the same slice already holds (a resumed
   * session): numbering continues after them, and an existing file is
   * appended to.
   */
  readonly startAtLine?: number;
}

const encoder = new TextEncoder();

/**
 * A provider that logs the requests of another one.
 *
 * @example
 * ```ts
 * import { RecordedProvider } from "./recorded_provider.ts";
 * import { RequestLogProvider } from "./request_log.ts";
 * import assert from "node:assert/strict";
 * const inner = RecordedProvider.parse(JSON.stringify({
 *   format: "loom-recording/1",
 *   calls: [{ phase: "selection", tool: "select_action", arguments: { action: "tests.run" } }],
 * }), { source: "inline" });
 * const path = await Deno.makeTempFile({ suffix: ".jsonl" });
 * const provider = new RequestLogProvider(inner, path);
 * await provider.call({
 *   phase: "selection", tool: "select_action",
 *   request: {
 *     system: [], messages: [],
 *     tool: { name: "loom_step", description: "d", input_schema: { type: "object" } },
 *     tool_choice: { type: "tool", name: "loom_step" },
 *   },
 * });
 * const lines = (await Deno.readTextFile(path)).trim().split("\n");
 * assert.equal(JSON.parse(lines[1]!).line, 1);
 * await Deno.remove(path);
 * ```
 */
export class RequestLogProvider extends WrappingProvider {
  #line: number;
  readonly #append: boolean;
  #started = false;

  /**
   * Wraps a provider; the file is created (or, when resuming, appended to)
   * on the first request.
   *
   * @param inner The provider whose requests to log.
   * @param path The log file.
   * @param options Where numbering starts.
   */
  constructor(
    inner: ModelProvider,
    path: string,
    options: RequestLogOptions = {},
  ) {
    super(inner, path);
    this.#line = options.startAtLine ?? 0;
    this.#append = this.#line > 0;
  }

  /**
   * Calls the wrapped provider, then logs the request — also when the call
   * failed, as the report counts it — unless the provider refused it
   * before sending (`provider_contract`: no report line either).
   *
   * @param call The model call.
   * @returns The wrapped provider's reply.
   * @throws {ProviderError} The wrapped provider's failures, and
   *   `request_log_unwritable` when the file cannot be written.
   */
  override async call(call: ModelCall): Promise<ModelReply> {
    try {
      const reply = await this.inner.call(call);
      await this.#log(call);
      return reply;
    } catch (error) {
      if (
        !(error instanceof ProviderError && error.code === "provider_contract")
      ) {
        await this.#log(call);
      }
      throw error;
    }
  }

  async #log(call: ModelCall): Promise<void> {
    this.#line += 1;
    const text = `{"line":${this.#line},"phase":${
      JSON.stringify(call.phase)
    },"request":${serializeTurnRequest(call.request)}}\n`;
    try {
      if (!this.#started) {
        this.#started = true;
        const exists = this.#append &&
          await Deno.stat(this.path).then(() => true, () => false);
        if (!exists) {
          await Deno.writeTextFile(
            this.path,
            `${JSON.stringify({ format: REQUEST_LOG_FORMAT })}\n`,
          );
        }
      }
      // Opened, appended and closed per request: nothing stays open when
      // a run ends however it ends, and a crash loses at most the last line.
      await Deno.writeFile(this.path, encoder.encode(text), { append: true });
    } catch (error) {
      throw new ProviderError(
        "request_log_unwritable",
        `Cannot write the request log ${this.path}: ${messageOf(error)}`,
        { cause: error },
      );
    }
  }
}
