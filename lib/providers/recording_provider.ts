/**
 * `--record PATH`: wraps a live provider and writes its replies as a
 * `loom-recording/1` file after every call, so the run can be replayed
 * offline (`recorded:PATH`, `loom cost`) under other policies and settings
 * without paying again. The file holds the phase, the stage's tool label,
 * the tool call's arguments and the usage counters of each call — never an
 * API key, a request body or prompt text.
 *
 * @module
 */
import { messageOf } from "../errors.ts";
import type {
  ModelCall,
  ModelProvider,
  ModelReply,
  ModelUsage,
} from "./model_provider.ts";
import { WrappingProvider } from "./_wrapping_provider.ts";
import { ProviderError } from "./provider_error.ts";

interface RecordedLine {
  phase: ModelCall["phase"];
  tool: ModelCall["tool"];
  arguments: unknown;
  usage?: Partial<Record<keyof ModelUsage, number>>;
}

/**
 * A provider that records the replies of another one.
 *
 * @example
 * ```ts
 * import { RecordedProvider } from "./recorded_provider.ts";
 * import { RecordingProvider } from "./recording_provider.ts";
 * import assert from "node:assert/strict";
 * const inner = RecordedProvider.parse(JSON.stringify({
 *   format: "loom-recording/1",
 *   calls: [{ phase: "selection", tool: "select_action", arguments: { action: "tests.run" } }],
 * }), { source: "inline" });
 * const path = await Deno.makeTempFile({ suffix: ".json" });
 * const provider = new RecordingProvider(inner, path);
 * await provider.call({
 *   phase: "selection", tool: "select_action",
 *   request: {
 *     system: [], messages: [],
 *     tool: { name: "loom_step", description: "d", input_schema: { type: "object" } },
 *     tool_choice: { type: "tool", name: "loom_step" },
 *   },
 * });
 * const file = JSON.parse(await Deno.readTextFile(path));
 * assert.deepEqual(file.calls[0].arguments, { action: "tests.run" });
 * await Deno.remove(path);
 * ```
 */
export class RecordingProvider extends WrappingProvider {
  readonly #calls: RecordedLine[] = [];

  /**
   * Wraps a provider; nothing is written before the first reply.
   *
   * @param inner The provider whose replies to record.
   * @param path The recording file (replaced after every call).
   */
  constructor(inner: ModelProvider, path: string) {
    super(inner, path);
  }

  /**
   * Calls the wrapped provider and records its reply.
   *
   * @param call The model call.
   * @returns The wrapped provider's reply.
   * @throws {ProviderError} The wrapped provider's failures, and
   *   `recording_unwritable` when the file cannot be written.
   */
  override async call(call: ModelCall): Promise<ModelReply> {
    const reply = await this.inner.call(call);
    const usage: Partial<Record<keyof ModelUsage, number>> = {};
    for (const [key, value] of Object.entries(reply.usage)) {
      if (typeof value === "number") {
        usage[key as keyof ModelUsage] = value;
      }
    }
    this.#calls.push({
      phase: call.phase,
      tool: call.tool,
      arguments: reply.arguments,
      ...(Object.keys(usage).length === 0 ? {} : { usage }),
    });
    const text = `${
      JSON.stringify(
        { format: "loom-recording/1", calls: this.#calls },
        null,
        1,
      )
    }\n`;
    const temp = `${this.path}.${crypto.randomUUID()}.tmp`;
    try {
      await Deno.writeTextFile(temp, text);
      await Deno.rename(temp, this.path);
    } catch (error) {
      await Deno.remove(temp).catch(() => {});
      throw new ProviderError(
        "recording_unwritable",
        `Cannot write recording ${this.path}: ${messageOf(error)}`,
        { cause: error },
      );
    }
    return reply;
  }
}
