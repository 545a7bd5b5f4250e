/**
 * Replays a `loom-recording/1` file call by call, checking each call's phase
 * and tool against what the loop asks for (wire-formats.md "Recording").
 *
 * @module
 */

import {
  describeIssue,
  type RecordedCall,
  recordingSchema,
} from "./_schema.ts";
import type {
  ModelCall,
  ModelProvider,
  ModelReply,
  ModelUsage,
} from "./model_provider.ts";
import { mapError, messageOf } from "../errors.ts";
import { ProviderError } from "./provider_error.ts";
import { MAX_REPLY_DEPTH, nestsDeeperThan } from "./reply_depth.ts";

/** Options of {@linkcode RecordedProvider.load} and {@linkcode RecordedProvider.parse}. */
export interface RecordedProviderOptions {
  /**
   * Index of the first call to replay (0 by default): a resumed session
   * passes the number of calls its earlier runs used.
   */
  readonly startAtCall?: number;
}

/**
 * A model provider that replays recorded calls in order. Create it with
 * `createProvider("recorded:PATH")`, {@linkcode RecordedProvider.load} or
 * {@linkcode RecordedProvider.parse}.
 *
 * @example
 * ```ts
 * import { RecordedProvider } from "@loom/loom/slice";
 * import assert from "node:assert/strict";
 * const provider = RecordedProvider.parse(
 *   JSON.stringify({
 *     format: "loom-recording/1",
 *     calls: [{ phase: "selection", tool: "select_action", arguments: { action: "tests.run" } }],
 *   }),
 *   { source: "inline" },
 * );
 * const request = {
 *   system: [{ type: "text" as const, text: "Pick" }],
 *   messages: [],
 *   tool: { name: "select_action", description: "d", input_schema: { type: "object" } },
 *   tool_choice: { type: "tool" as const, name: "select_action" },
 * };
 * const reply = await provider.call({ phase: "selection", tool: "select_action", request });
 * assert.deepEqual(reply.arguments, { action: "tests.run" });
 * assert.equal(reply.usage.input_tokens, null);
 * assert.equal(provider.callsUsed, 1);
 * ```
 */
export class RecordedProvider implements ModelProvider {
  /** `recorded:` followed by the recording's path (or source name). */
  readonly spec: string;
  /** Where the recording came from: its path, or the name given to `parse`. */
  readonly source: string;
  readonly #calls: readonly RecordedCall[];
  #next: number;

  private constructor(
    source: string,
    calls: readonly RecordedCall[],
    startAtCall: number,
  ) {
    this.source = source;
    this.spec = `recorded:${source}`;
    this.#calls = calls;
    this.#next = startAtCall;
  }

  /**
   * Reads and validates a recording file (synchronously, so a bad file fails
   * before any work starts).
   *
   * @param path Path of the `loom-recording/1` JSON file.
   * @param options Where to start replaying.
   * @returns A provider positioned at `startAtCall`.
   * @throws {ProviderError} `recording_invalid` when the file is unreadable,
   * not JSON or breaks the closed schema (the message names the file and the
   * offending key); `bad_option` for a `startAtCall` that is not an integer
   * between 0 and the number of calls.
   *
   * @example
   * ```ts
   * import { RecordedProvider } from "@loom/loom/slice";
   * import assert from "node:assert/strict";
   * const path = await Deno.makeTempFile({ suffix: ".json" });
   * await Deno.writeTextFile(path, '{"format": "loom-recording/1", "calls": []}');
   * const provider = RecordedProvider.load(path);
   * assert.equal(provider.callsTotal, 0);
   * await Deno.remove(path);
   * ```
   */
  static load(
    path: string,
    options: RecordedProviderOptions = {},
  ): RecordedProvider {
    const text = mapError(
      () => Deno.readTextFileSync(path),
      (error) => invalidRecording(`Cannot read recording ${path}`, error),
    );
    return RecordedProvider.parse(text, { ...options, source: path });
  }

  /**
   * Validates recording JSON text.
   *
   * @param text The `loom-recording/1` JSON document.
   * @param options `source` names the recording in messages and the spec;
   * `startAtCall` as in {@linkcode RecordedProvider.load}.
   * @returns A provider positioned at `startAtCall`.
   * @throws {ProviderError} `recording_invalid` or `bad_option`, as for `load`.
   *
   * @example
   * ```ts
   * import { ProviderError, RecordedProvider } from "@loom/loom/slice";
   * import assert from "node:assert/strict";
   * assert.throws(
   *   () => RecordedProvider.parse('{"format": "loom-recording/1", "calls": [], "extra": 1}', { source: "x.json" }),
   *   (e: unknown) => e instanceof ProviderError && e.code === "recording_invalid" && /x\.json.*extra/.test(e.message),
   * );
   * ```
   */
  static parse(
    text: string,
    options: RecordedProviderOptions & { readonly source: string },
  ): RecordedProvider {
    const { source } = options;
    const json: unknown = mapError(
      () => JSON.parse(text),
      (error) =>
        invalidRecording(`Recording ${source} is not valid JSON`, error),
    );
    const parsed = recordingSchema.safeParse(json);
    if (!parsed.success) {
      throw new ProviderError(
        "recording_invalid",
        `Recording ${source} is not a loom-recording/1 file: ${
          describeIssue(parsed.error, json)
        }`,
      );
    }
    const calls = parsed.data.calls;
    const start = options.startAtCall ?? 0;
    if (!Number.isSafeInteger(start) || start < 0 || start > calls.length) {
      throw new ProviderError(
        "bad_option",
        `Cannot resume recording ${source} at call ${start}: it holds ${calls.length} calls`,
      );
    }
    return new RecordedProvider(source, calls, start);
  }

  /** Index of the next call to replay: calls consumed, counting `startAtCall`. */
  get callsUsed(): number {
    return this.#next;
  }

  /** Number of calls the recording holds. */
  get callsTotal(): number {
    return this.#calls.length;
  }

  /**
   * Replays the next recorded call after checking its phase and tool.
   *
   * @param call What the loop asks for.
   * @returns The recorded arguments and usage (missing counters are null).
   * @throws {ProviderError} `recording_mismatch` naming the call index, the
   * expected and the recorded phase/tool (the call is not consumed);
   * `recording_exhausted` when no call is left.
   */
  call(call: ModelCall): Promise<ModelReply> {
    const index = this.#next;
    const recorded = this.#calls[index];
    if (recorded === undefined) {
      return Promise.reject(
        new ProviderError(
          "recording_exhausted",
          `Recording ${this.source} is exhausted: the loop asked for call ${index} (${call.phase}/${call.tool}) but it holds ${this.#calls.length} calls`,
        ),
      );
    }
    if (recorded.phase !== call.phase || recorded.tool !== call.tool) {
      return Promise.reject(
        new ProviderError(
          "recording_mismatch",
          `Recording ${this.source} does not match at call ${index}: expected ${call.phase}/${call.tool}, recorded ${recorded.phase}/${recorded.tool}`,
        ),
      );
    }
    this.#next = index + 1;
    if (nestsDeeperThan(recorded.arguments, MAX_REPLY_DEPTH)) {
      return Promise.reject(
        new ProviderError(
          "provider_protocol",
          `The recorded ${call.tool} call's arguments nest deeper than ${MAX_REPLY_DEPTH} levels; send flat arguments as the tool's schema describes`,
          { problem: "too_deep" },
        ),
      );
    }
    const usage: ModelUsage = {
      input_tokens: recorded.usage?.input_tokens ?? null,
      output_tokens: recorded.usage?.output_tokens ?? null,
      cache_read_tokens: recorded.usage?.cache_read_tokens ?? null,
      cache_write_tokens: recorded.usage?.cache_write_tokens ?? null,
    };
    return Promise.resolve({
      arguments: structuredClone(recorded.arguments),
      usage,
      final_usage: true,
    });
  }
}

/** A `recording_invalid` error: what failed, and the reason `cause` gives. */
function invalidRecording(what: string, cause: unknown): ProviderError {
  return new ProviderError(
    "recording_invalid",
    `${what}: ${messageOf(cause)}`,
    { cause },
  );
}
