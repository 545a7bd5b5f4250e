/**
 * `run_code` in the gateway (`loom mcp --servers FILE --code`): the model's
 * code runs in `lib/code`'s confined sandbox, where every upstream tool the
 * servers file allows (`"code": false` takes one out) is
 * `tools.<server>.<tool>(args)`. Calls from code go straight to the
 * upstream and their answers straight to the code — never offloaded, never
 * shown to the host — up to `--max-result-bytes`. The run's answer, its
 * logs and what the code stores with `loom.store` go through the gateway's
 * one offload path, so they are described, read and persisted like any
 * tool result: persisted under `--session` only when every tool the run
 * called is persistable and none is self-reading, and never when the run
 * read a stored result (its taint is not known here).
 *
 * @module
 */
import type { ResultStore } from "../../store/result_store.ts";
import { utf8Length } from "../../store/utf8.ts";
import { jsonOutline } from "../../reference/outline.ts";
import { Retrieval } from "../../reference/retrieval.ts";
import { takeInFor } from "../../reference/referenced_results.ts";
import { type CodeName, codeNames } from "../../code/code_names.ts";
import { declareTools } from "../../code/declarations.ts";
import {
  CODE_INPUT_SCHEMA,
  codeArguments,
  codeDescription,
  DECLARATIONS_MAX_BYTES,
  type DescribedTools,
} from "../../code/code_description.ts";
import {
  type AnswerStore,
  codeAnswer,
  codeFailure,
} from "../../code/code_answer.ts";
import { CodeError } from "../../code/code_error.ts";
import type { CodeRunner } from "../../code/code_runner.ts";
import { toolSettings } from "./gateway_config.ts";
import type { GatewayNote } from "./gateway_note.ts";
import { shapeOf, withStrings } from "./large_text.ts";
import { offloadResult } from "./offload.ts";
import type { Sdk } from "./sdk.ts";
import type { ToolFigureBook } from "./tool_figures.ts";
import type { ListedTool } from "./tool_listing.ts";
import { jsonBytes, type McpResult, toolError } from "./tool_result.ts";
import { offloadAttributes } from "../../telemetry/mcp.ts";
import type { CallContext } from "./upstream_call.ts";
import {
  type Upstream,
  UpstreamFailure,
  type UpstreamTool,
} from "./upstream.ts";

/** The tool's name. */
export const RUN_CODE = "run_code";

/** One upstream tool code may know of. */
export interface CodeCatalogEntry {
  /** Its server. */
  readonly upstream: Upstream;
  /** The tool, as the server lists it. */
  readonly tool: UpstreamTool;
}

/** What {@linkcode RunCode} needs of the gateway. */
export interface RunCodeOptions {
  /** The sandbox (`--code-memory`, `--code-timeout`, `--code-max-calls`). */
  readonly runner: CodeRunner;
  /** The MCP SDK (its `CallToolResultSchema`). */
  readonly sdk: Sdk;
  /** The one store. */
  readonly store: ResultStore;
  /** `--offload-bytes`. */
  readonly offloadBytes: number;
  /** `--max-result-bytes`. */
  readonly maxResultBytes: number;
  /** The `--report` figures. */
  readonly figures: ToolFigureBook;
  /** Every upstream tool, servers in the file's order. */
  readonly catalogue: () => readonly CodeCatalogEntry[];
  /** Changes whenever the catalogue does (the description is cached by it). */
  readonly version: () => number;
  /**
   * How the description shows the tools: `declarations` (up to 6 KiB,
   * else names), or `search` (a constant text sending the model to
   * `search_tools` with `detail: "typescript"`).
   */
  readonly describe?: () => "declarations" | "search";
  /**
   * Where persisted results can be read back (the session folder or the
   * store's redacted location), for telemetry's references.
   */
  readonly location?: string;
}

/** What the descriptor of a stored part names as its origin. */
const ORIGIN = { server: "loom", tool: RUN_CODE } as const;

/**
 * The gateway's `run_code` tool.
 *
 * @example
 * ```ts
 * import { RunCode, RUN_CODE } from "./run_code.ts";
 * import { CodeRunner } from "../../code/code_runner.ts";
 * import { ToolFigureBook } from "./tool_figures.ts";
 * import { ResultStore } from "../../store/result_store.ts";
 * import { loadSdk } from "./sdk.ts";
 * import assert from "node:assert/strict";
 * await using runner = await CodeRunner.start({ unconfined: true });
 * const runCode = new RunCode({
 *   runner, sdk: await loadSdk(), store: new ResultStore(), offloadBytes: 8192,
 *   maxResultBytes: 1 << 20, figures: new ToolFigureBook(), catalogue: () => [], version: () => 0,
 * });
 * assert.equal(runCode.definition.name, RUN_CODE);
 * const answer = await runCode.call({ code: "return 6 * 7" }, {});
 * assert.equal((answer.structuredContent as { result: number }).result, 42);
 * ```
 */
export class RunCode {
  readonly #o: RunCodeOptions;
  #cached: { key: string; definition: ListedTool } | undefined;

  /**
   * The tool over a runner and the gateway's upstreams.
   *
   * @param options The runner, the store, the catalogue.
   */
  constructor(options: RunCodeOptions) {
    this.#o = options;
  }

  /** Its `tools/list` entry: the same bytes while the upstream tools stay the same. */
  get definition(): ListedTool {
    const how = this.#o.describe?.() ?? "declarations";
    const key = `${how}:${how === "search" ? "" : this.#o.version()}`;
    if (this.#cached?.key !== key) {
      this.#cached = {
        key,
        definition: {
          name: RUN_CODE,
          title: "Run code over the tools",
          description: codeDescription({
            results: "mcp",
            limits: this.#o.runner.limits,
            offloadBytes: this.#o.offloadBytes,
            tools: how === "search"
              ? {
                elsewhere:
                  'every tool search_tools finds (its server and tool fields, named by that rule); search_tools with detail: "typescript" answers their declarations',
              }
              : this.#describedTools(),
            unconfined: !this.#o.runner.confined,
          }),
          inputSchema: structuredClone(CODE_INPUT_SCHEMA) as Record<
            string,
            unknown
          >,
          annotations: { openWorldHint: true },
        },
      };
    }
    return this.#cached.definition;
  }

  #describedTools(): DescribedTools {
    const { callable } = this.#named();
    const declarations = declareTools(callable.map(({ name, entry }) => ({
      ...name,
      description: entry.tool.description,
      inputSchema: entry.tool.inputSchema,
      outputSchema: entry.tool.outputSchema,
    })));
    return declarations.bytes <= DECLARATIONS_MAX_BYTES
      ? { declarations: declarations.text }
      : {
        names: callable.map((c) => c.name),
        types:
          "each takes the arguments of the inputSchema of the gateway's tool <server>__<tool>",
      };
  }

  /** Every tool named over the whole catalogue, and the ones code may call. */
  #named(): {
    readonly all: readonly { name: CodeName; entry: CodeCatalogEntry }[];
    readonly callable: readonly { name: CodeName; entry: CodeCatalogEntry }[];
  } {
    const entries = this.#o.catalogue();
    const names = codeNames(
      entries.map((e) => ({ server: e.upstream.name, tool: e.tool.name })),
    );
    const all = entries.map((entry, i) => ({ name: names[i]!, entry }));
    return {
      all,
      callable: all.filter(({ entry }) =>
        toolSettings(entry.upstream.entry, entry.tool.name).code
      ),
    };
  }

  /**
   * Runs `run_code {code, timeout_ms?}`.
   *
   * @param args The arguments (untrusted).
   * @param context The host's cancellation.
   * @returns `{result | result_stored, logs, calls, ms}` as structured
   *   content, or a tool error with its code and the logs so far.
   */
  async call(
    args: Record<string, unknown>,
    context: CallContext,
  ): Promise<McpResult> {
    return this.#o.figures.answered(RUN_CODE, await this.#run(args, context));
  }

  async #run(
    args: Record<string, unknown>,
    context: CallContext,
  ): Promise<McpResult> {
    let input: { code: string; timeout_ms?: number };
    try {
      input = codeArguments(args);
    } catch (error) {
      return toolError(
        "invalid_arguments",
        (error as Error).message.replace(/^invalid_arguments: /, ""),
      );
    }
    const meta = {
      "loom/code": {
        confinement: this.#o.runner.confined ? "bubblewrap" : "deno-flags-only",
      },
    };
    const { all, callable } = this.#named();
    // The seeds' rule follows the data: what the run stores may be persisted
    // only while every tool it read from is persistable.
    const taint = { persist: true };
    const store = this.#answerStore(taint, input);
    try {
      const outcome = await this.#o.runner.run(input.code, {
        tools: callable.map((c) => c.name),
        ...(input.timeout_ms === undefined
          ? {}
          : { timeoutMs: input.timeout_ms }),
        ...(context.signal === undefined ? {} : { signal: context.signal }),
        bridge: {
          callTool: (server, tool, callArgs, signal) => {
            const found = all.find((c) =>
              c.entry.upstream.name === server && c.entry.tool.name === tool
            );
            if (found === undefined) {
              return Promise.reject(failure(
                "unknown_tool",
                `There is no tool ${
                  JSON.stringify(tool.slice(0, 80))
                } on server ${JSON.stringify(server.slice(0, 80))}`,
              ));
            }
            const { upstream } = found.entry;
            const c = toolSettings(upstream.entry, tool);
            if (!c.code) {
              return Promise.reject(failure(
                "code_disabled",
                `${server}/${tool} is not callable from code: the servers file says "code": false`,
              ));
            }
            if (c.selfReading || !c.persist) taint.persist = false;
            return this.#callUpstream(found.entry, callArgs, signal);
          },
          read: async (reference) => {
            taint.persist = false;
            // A result another instance stored: its body comes from the store.
            await takeInFor(this.#o.store, "read_result", { reference });
            const read = new Retrieval(this.#o.store).value(reference);
            if (read.ok) return read.value;
            throw failure(read.code, read.message);
          },
          store: (text, options) =>
            store.store(text, options.json, options.mediaType),
        },
      });
      const answer = await codeAnswer(outcome, store);
      const answered = {
        content: [{ type: "text", text: JSON.stringify(answer) }],
        structuredContent: answer,
        _meta: meta,
      };
      this.#tellStored(answer, answered, {
        produced: utf8Length(outcome.resultJson) + outcome.logBytes,
        persist: taint.persist,
      });
      return answered;
    } catch (error) {
      if (!(error instanceof CodeError)) {
        if (context.signal?.aborted === true) throw error;
        return { ...toolError("code_error", String(error)), _meta: meta };
      }
      const failed = await codeFailure(error, store);
      const answered = {
        content: [{ type: "text", text: failed.text }],
        structuredContent: failed.details,
        isError: true,
        _meta: meta,
      };
      this.#tellStored(failed.details, answered, {
        produced: error.logs.reduce((sum, log) => sum + utf8Length(log), 0),
        persist: taint.persist,
      });
      return answered;
    }
  }

  /**
   * Puts the stored parts of an answer (a value or logs too large to send)
   * on the host's span, as every offloaded answer's are: their ids,
   * digests and sizes, and in `reference` mode their references.
   */
  #tellStored(
    answer: {
      readonly result_stored?: unknown;
      readonly logs_stored?: unknown;
    },
    answered: McpResult,
    figures: { readonly produced: number; readonly persist: boolean },
  ): void {
    const stored = [answer.result_stored, answer.logs_stored].flatMap(
      (part) => {
        const d = part as Record<string, unknown> | undefined;
        if (typeof d?.result !== "string") return [];
        const kept = this.#o.store.get(d.result);
        return [{
          result: d.result,
          sha256: kept?.sha256 ?? String(d.sha256),
          bytes: kept?.bytes.length ?? 0,
          media_type: String(d.media_type ?? "text/plain"),
          ...(figures.persist && this.#o.location !== undefined
            ? { location: this.#o.location }
            : {}),
        }];
      },
    );
    if (stored.length === 0) return;
    offloadAttributes({
      stored,
      bytesUpstream: figures.produced,
      bytesToHost: jsonBytes(answered),
    });
  }

  /** Stores through the gateway's offload path, with the run's persistence. */
  #answerStore(
    taint: { persist: boolean },
    input: { code: string; timeout_ms?: number },
  ): AnswerStore {
    const o = this.#o;
    return {
      offloadBytes: o.offloadBytes,
      store: async (text, _json, mediaType) => {
        if (
          mediaType !== undefined &&
          !/^[\w.+-]{1,64}\/[\w.+-]{1,64}$/.test(mediaType)
        ) {
          throw failure(
            "invalid_arguments",
            `loom.store(): ${
              JSON.stringify(mediaType.slice(0, 80))
            } is not a media type such as text/csv`,
          );
        }
        const offloaded = await offloadResult(
          { content: [{ type: "text", text }] },
          {
            ...ORIGIN,
            store: o.store,
            offloadBytes: 0,
            maxResultBytes: o.maxResultBytes,
            outline: jsonOutline,
            note: (part): GatewayNote => ({
              call: { ...ORIGIN, part, arguments: { ...input } },
              persist: taint.persist,
            }),
          },
        );
        const block = (offloaded.result.content as { text: string }[])[0]!;
        const descriptor = JSON.parse(block.text) as Record<string, unknown>;
        return mediaType === undefined
          ? descriptor
          : { ...descriptor, media_type: mediaType };
      },
    };
  }

  /** One call from code: straight to the upstream, the answer as received. */
  async #callUpstream(
    entry: CodeCatalogEntry,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const { upstream, tool } = entry;
    const figures = this.#o.figures.figure(`${upstream.name}/${tool.name}`);
    figures.calls += 1;
    let answer;
    try {
      answer = await upstream.request(
        "tools/call",
        { name: tool.name, arguments: args },
        { signal },
      );
    } catch (error) {
      if (error instanceof UpstreamFailure) {
        throw failure(error.code, error.message);
      }
      throw error;
    }
    if (answer.partialTotalBytes !== undefined) {
      throw failure(
        "result_too_large",
        `${upstream.name}/${tool.name} answered ${answer.partialTotalBytes} bytes, more than the ${this.#o.maxResultBytes} (--max-result-bytes) a result may have`,
      );
    }
    const checked = this.#o.sdk.types.CallToolResultSchema.safeParse(
      shapeOf(answer.result),
    );
    if (!checked.success) {
      throw failure(
        "upstream_malformed",
        `Server ${upstream.name} answered ${tool.name} with a result that is not an MCP CallToolResult`,
      );
    }
    const result = withStrings(answer.result);
    figures.bytes_received += jsonBytes(result);
    return result;
  }
}

function failure(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
