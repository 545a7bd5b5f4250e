/**
 * The gateway's per-tool figures for `--report`: calls, offloaded calls and
 * the bytes received from upstreams and sent to the host.
 *
 * @module
 */
import { jsonBytes } from "./tool_result.ts";

/** Per-tool figures for `--report`. */
export interface ToolFigures {
  /** Calls. */
  calls: number;
  /** Calls answered with descriptors. */
  offloaded: number;
  /** Serialized bytes received from the upstream. */
  bytes_received: number;
  /** Serialized bytes sent to the host. */
  bytes_to_host: number;
}

/**
 * The figures of every tool called so far, by key (`server/tool` for an
 * upstream tool, the name for the retrieval tools).
 *
 * @example
 * ```ts
 * import { ToolFigureBook } from "./tool_figures.ts";
 * import assert from "node:assert/strict";
 * const book = new ToolFigureBook();
 * book.figure("fs/read").calls += 1;
 * assert.equal(book.report()["fs/read"]?.calls, 1);
 * ```
 */
export class ToolFigureBook {
  readonly #figures = new Map<string, ToolFigures>();

  /**
   * The live figures of one tool, created at zero.
   *
   * @param key The tool's key.
   * @returns Its figures, to add to.
   */
  figure(key: string): ToolFigures {
    let figures = this.#figures.get(key);
    if (figures === undefined) {
      figures = { calls: 0, offloaded: 0, bytes_received: 0, bytes_to_host: 0 };
      this.#figures.set(key, figures);
    }
    return figures;
  }

  /**
   * Counts one call of a tool the gateway answers itself (a retrieval
   * tool, `run_code`, a refused call) and the bytes of its answer.
   *
   * @param key The tool's key.
   * @param answer The answer sent to the host.
   * @returns The answer.
   */
  answered<T>(key: string, answer: T): T {
    const figures = this.figure(key);
    figures.calls += 1;
    figures.bytes_to_host += jsonBytes(answer);
    return answer;
  }

  /**
   * A copy of the totals.
   *
   * @returns The figures by tool.
   */
  report(): Record<string, ToolFigures> {
    return Object.fromEntries(
      [...this.#figures].map(([k, v]) => [k, { ...v }]),
    );
  }
}
