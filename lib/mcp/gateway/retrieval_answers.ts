/**
 * The gateway's answers to the retrieval tools (`read_result`,
 * `find_in_result`, `list_results`) over its one store: a list first takes
 * in what other instances stored; a read or a search first loads the
 * result it names when the store has only its catalogue entry (another
 * instance stored it, or its bytes left memory); a reference to a result a
 * session kept as a descriptor only is brought back (see `refetch.ts`); a
 * whole read of a stored image, audio or blob result is answered as the
 * media block it came as, with `structuredContent` saying so (every answer
 * of a tool with an `outputSchema` carries valid `structuredContent`); and
 * each answer is counted in the `--report` figures.
 *
 * @module
 */
import type { ResultStore } from "../../store/result_store.ts";
import { Retrieval, type RetrievalAnswer } from "../../reference/retrieval.ts";
import { takeInFor } from "../../reference/referenced_results.ts";
import { isLoomError } from "../../errors.ts";
import { base64Bytes, mediaBlock, type MediaTemplate } from "./offload.ts";
import type { RefetchRefusal } from "./refetch.ts";
import type { ToolFigureBook } from "./tool_figures.ts";
import { jsonBytes, type McpResult, toolError } from "./tool_result.ts";

/** `_meta` of the retrieval tools: Claude Code keeps answers this long inline. */
export const RETRIEVAL_META: Readonly<Record<string, unknown>> = {
  "anthropic/maxResultSizeChars": 200_000,
};

/** What {@linkcode RetrievalAnswers} needs of the gateway. */
export interface RetrievalAnswersOptions {
  /** The one store. */
  readonly store: ResultStore;
  /** The `--report` figures. */
  readonly figures: ToolFigureBook;
  /** The media template of a stored image, audio or blob result. */
  readonly media: (id: string) => MediaTemplate | undefined;
  /** Brings back the body of a result kept as a descriptor only. */
  readonly refetch: (id: string) => Promise<RefetchRefusal | undefined>;
}

type Answer =
  | RetrievalAnswer
  | {
    readonly ok: true;
    readonly block: Record<string, unknown>;
    readonly structured: Record<string, unknown>;
  };

/**
 * The retrieval tools over the gateway's store.
 *
 * @example
 * ```ts
 * import { RetrievalAnswers } from "./retrieval_answers.ts";
 * import { ToolFigureBook } from "./tool_figures.ts";
 * import { ResultStore } from "../../store/result_store.ts";
 * import assert from "node:assert/strict";
 * const answers = new RetrievalAnswers({
 *   store: new ResultStore(), figures: new ToolFigureBook(),
 *   media: () => undefined, refetch: () => Promise.resolve(undefined),
 * });
 * const listed = await answers.answer("list_results", {});
 * assert.notEqual(listed?.isError, true);
 * ```
 */
export class RetrievalAnswers {
  readonly #options: RetrievalAnswersOptions;
  readonly #retrieval: Retrieval;

  /**
   * Answers over a store.
   *
   * @param options The store, the figures, the media templates and the re-fetch.
   */
  constructor(options: RetrievalAnswersOptions) {
    this.#options = options;
    this.#retrieval = new Retrieval(options.store);
  }

  /**
   * Answers one retrieval tool call.
   *
   * @param name The tool name the host used (untrusted).
   * @param args Its arguments (untrusted).
   * @returns The MCP result, or `undefined` when `name` is no retrieval tool.
   */
  async answer(
    name: string,
    args: Record<string, unknown>,
  ): Promise<McpResult | undefined> {
    if (
      name !== "read_result" && name !== "find_in_result" &&
      name !== "list_results"
    ) return undefined;
    const failed = await this.#takeIn(name, args);
    if (failed !== undefined) return this.#retrieved(name, failed);
    switch (name) {
      case "read_result":
        return this.#retrieved(name, await this.#read(args));
      case "find_in_result":
        return this.#retrieved(name, await this.#find(args));
      case "list_results":
        return this.#retrieved(name, this.#retrieval.list(args));
    }
  }

  /**
   * What a shared store must do before answering: a list takes in what
   * other instances stored; a read or a search loads the result it names.
   * A store that cannot be reached, or a body that does not verify, is the
   * answer.
   */
  async #takeIn(
    name: string,
    args: Record<string, unknown>,
  ): Promise<RetrievalAnswer | undefined> {
    try {
      await takeInFor(this.#options.store, name, args);
    } catch (error) {
      if (!isLoomError(error)) throw error;
      return { ok: false, code: error.code, message: error.message };
    }
    return undefined;
  }

  async #read(args: Record<string, unknown>): Promise<Answer> {
    const reference = args?.reference as Record<string, unknown> | undefined;
    const id = typeof reference?.result === "string" ? reference.result : "";
    const refused = await this.#options.refetch(id);
    if (refused !== undefined) return refused;
    const template = this.#options.media(id);
    const select = reference?.select as Record<string, unknown> | undefined;
    const stored = this.#options.store.get(id);
    if (
      template !== undefined && stored !== undefined &&
      select?.kind === "whole" && Object.keys(args).length === 1
    ) {
      if (reference?.sha256 !== stored.sha256) {
        return {
          ok: false as const,
          code: "digest_mismatch",
          message:
            `The reference's sha256 does not match ${id}: it was not read`,
        };
      }
      const data = new TextDecoder().decode(stored.bytes);
      const block = mediaBlock(template, data);
      const type = String(block.type);
      const mime = template.field === "data"
        ? block.mimeType
        : (block.resource as Record<string, unknown> | undefined)?.mimeType;
      const structured = {
        media: {
          type: type === "image" || type === "audio" ? type : "resource",
          ...(typeof mime === "string" ? { mime_type: mime } : {}),
          bytes: base64Bytes(data),
        },
      };
      return { ok: true as const, block, structured };
    }
    return this.#retrieval.read(args);
  }

  async #find(args: Record<string, unknown>): Promise<Answer> {
    const reference = args?.reference as Record<string, unknown> | undefined;
    if (typeof reference?.result === "string") {
      const refused = await this.#options.refetch(reference.result);
      if (refused !== undefined) return refused;
    }
    return this.#retrieval.find(args);
  }

  #retrieved(name: string, answer: Answer): McpResult {
    const figures = this.#options.figures.figure(name);
    figures.calls += 1;
    let result: McpResult;
    if (!answer.ok) {
      result = toolError(answer.code, answer.message);
    } else if ("block" in answer) {
      result = {
        content: [answer.block],
        structuredContent: answer.structured,
      };
    } else {
      result = {
        content: [{ type: "text", text: JSON.stringify(answer.structured) }],
        structuredContent: answer.structured,
      };
    }
    figures.bytes_to_host += jsonBytes(result);
    return result;
  }
}
