/**
 * A model provider that plays replies given inline, for tests of code that
 * runs a slice: no recording file, no network, no key.
 *
 * @module
 */
import type { StepPhase } from "../reference/lookup_session.ts";
import type {
  ModelCall,
  ModelProvider,
  ModelReply,
  ModelToolName,
} from "../providers/model_provider.ts";
import { ProviderError } from "../providers/provider_error.ts";

const NULL_USAGE = Object.freeze({
  input_tokens: null,
  output_tokens: null,
  cache_read_tokens: null,
  cache_write_tokens: null,
});

/**
 * Answers each model call with the next reply of a script: the tool
 * arguments themselves, or a function of the call that returns them (to
 * read what a lookup answered, say). Usage is reported as unknown (`null`)
 * and final. A call past the end of the script, or of another phase than
 * the reply expects, fails as a recording would (`recording_exhausted`,
 * `recording_mismatch`).
 *
 * @example A slice that completes at once
 * ```ts
 * import { ScriptedProvider, tempWorkspace } from "@loom/loom/testing";
 * import { runSlice } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * await using workspace = await tempWorkspace({ "README.md": "hello\n" });
 * const provider = new ScriptedProvider([
 *   { phase: "selection", arguments: { action: "slice.complete" } },
 *   { phase: "arguments", arguments: { summary: "Nothing to do" } },
 * ]);
 * const outcome = await runSlice({ intent: "Check", workspace: workspace.path, maxSteps: 2, provider });
 * assert.equal(outcome.stop, "completed");
 * assert.equal(provider.remaining, 0);
 * ```
 */
export class ScriptedProvider implements ModelProvider {
  /** Always `scripted:inline`. */
  readonly spec: string = "scripted:inline";
  /** What was answered so far, in order, as a recording stores it. */
  readonly recorded: {
    readonly phase: StepPhase;
    readonly tool: ModelToolName;
    readonly arguments: unknown;
  }[] = [];
  readonly #script: readonly {
    readonly phase?: StepPhase;
    readonly arguments: unknown;
  }[];

  /**
   * Creates the provider.
   *
   * @param script One reply per model call: the phase it answers (checked
   *   when given) and the tool arguments, or a function of the call that
   *   returns them.
   */
  constructor(
    script: readonly {
      readonly phase?: StepPhase;
      readonly arguments: unknown;
    }[],
  ) {
    this.#script = script;
  }

  /** Replies not used yet. */
  get remaining(): number {
    return this.#script.length - this.recorded.length;
  }

  /**
   * Answers a call with the next reply.
   *
   * @param call The model call.
   * @returns The reply: the scripted arguments, unknown usage.
   * @throws {ProviderError} `recording_exhausted` past the end of the
   *   script, `recording_mismatch` when the phase differs.
   */
  call(call: ModelCall): Promise<ModelReply> {
    const index = this.recorded.length;
    const next = this.#script[index];
    if (next === undefined) {
      return Promise.reject(
        new ProviderError(
          "recording_exhausted",
          `Cannot answer call ${
            index + 1
          }: the script holds ${this.#script.length} replies`,
        ),
      );
    }
    if (next.phase !== undefined && next.phase !== call.phase) {
      return Promise.reject(
        new ProviderError(
          "recording_mismatch",
          `Cannot answer call ${
            index + 1
          }: the script has a ${next.phase} reply, the loop asked for ${call.phase}`,
        ),
      );
    }
    const args = typeof next.arguments === "function"
      ? (next.arguments as (call: ModelCall) => unknown)(call)
      : next.arguments;
    this.recorded.push({ phase: call.phase, tool: call.tool, arguments: args });
    return Promise.resolve({
      arguments: structuredClone(args),
      usage: NULL_USAGE,
      final_usage: true,
    });
  }
}
