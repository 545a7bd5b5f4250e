/**
 * What the page asks the server for, answered from the runs it was given:
 * the runs' rows, one run's detail, one request as sent (read from the
 * request log by itself, its bytes checked against the report), one reply
 * of the recording, and reads and searches of a stored result through the
 * retrieval code of `read_result` and `find_in_result`, digest-checked.
 * Nothing here writes: sessions are open read-only.
 *
 * @module
 */
import { messageOf } from "../errors.ts";
import { Retrieval, type RetrievalAnswer } from "../reference/retrieval.ts";
import type { StoredResult } from "../store/result_store.ts";
import type { ViewSource } from "./inputs.ts";
import {
  requestLines,
  type RunDetail,
  runDetail,
  type RunSummary,
  runSummary,
} from "./view_data.ts";

/** An answer of the API: a JSON body and its status. */
export interface ApiAnswer {
  /** HTTP status. */
  readonly status: number;
  /** The JSON body; failures are `{error}`. */
  readonly body: unknown;
}

const encoder = new TextEncoder();

function failure(status: number, error: string): ApiAnswer {
  return { status, body: { error } };
}

/**
 * The API over a set of runs.
 *
 * @example
 * ```ts
 * import { ViewApi } from "./view_api.ts";
 * import assert from "node:assert/strict";
 * const api = new ViewApi([]);
 * assert.deepEqual(api.runs(), { status: 200, body: [] });
 * assert.equal(api.detail("r9").status, 404);
 * ```
 */
export class ViewApi {
  readonly #runs: ReadonlyMap<string, ViewSource>;
  readonly #notes = new Map<string, string[]>();
  readonly #details = new Map<string, RunDetail>();

  /**
   * Serves these runs.
   *
   * @param runs The runs, in order.
   */
  constructor(runs: readonly ViewSource[]) {
    this.#runs = new Map(runs.map((r) => [r.id, r]));
  }

  /** The runs' rows. */
  runs(): ApiAnswer {
    const rows: RunSummary[] = [...this.#runs.values()].map(runSummary);
    return { status: 200, body: rows };
  }

  /**
   * One run's detail, built once. It reads no request body: a request log
   * is read when one of its requests is asked for, and each is checked
   * against the report then.
   *
   * @param id The run's id.
   * @returns The detail, or 404.
   */
  detail(id: string): ApiAnswer {
    const run = this.#runs.get(id);
    if (run === undefined) return failure(404, `No run ${id.slice(0, 32)}`);
    let detail = this.#details.get(id);
    if (detail === undefined) {
      const notes = this.#check(run);
      detail = runDetail(run, notes);
      this.#details.set(id, detail);
    }
    return { status: 200, body: detail };
  }

  /**
   * One request as sent, from the run's request log, only when its bytes
   * are the report's `request_bytes` for that request.
   *
   * @param id The run's id.
   * @param index The request's index, from 0.
   * @returns `{line, phase, request}` (the request's JSON text), or why not.
   */
  async request(id: string, index: number): Promise<ApiAnswer> {
    const run = this.#runs.get(id);
    if (run === undefined) return failure(404, `No run ${id.slice(0, 32)}`);
    if (run.requests === undefined) {
      return failure(404, "This run has no request log");
    }
    const lines = requestLines(run);
    const line = lines[index];
    if (line === undefined) return failure(404, `No request ${index + 1}`);
    try {
      const logged = await run.requests.get(index + 1);
      if (logged === undefined) {
        return failure(404, `The request log holds no request ${index + 1}`);
      }
      const bytes = encoder.encode(logged.request).byteLength;
      if (bytes !== line.request_bytes || logged.phase !== line.phase) {
        return failure(
          409,
          `Request ${
            index + 1
          } of the log (${logged.phase}, ${bytes} bytes) is not the report's (${line.phase}, ${line.request_bytes} bytes): the log belongs to another run`,
        );
      }
      return { status: 200, body: logged };
    } catch (error) {
      return failure(500, messageOf(error));
    }
  }

  /**
   * The model's reply to one request, from the run's recording.
   *
   * @param id The run's id.
   * @param index The request's index, from 0.
   * @returns `{reply}`, or why not.
   */
  reply(id: string, index: number): ApiAnswer {
    const run = this.#runs.get(id);
    if (run === undefined) return failure(404, `No run ${id.slice(0, 32)}`);
    const reply = run.replies?.[index];
    if (reply === undefined) {
      return failure(404, `The recording holds no reply ${index + 1}`);
    }
    return { status: 200, body: { reply: reply.arguments } };
  }

  /**
   * A read of a stored result, as `read_result` answers it.
   *
   * @param id The run's id.
   * @param result `result-<n>`.
   * @param query `kind` (whole, bytes, lines, json_pointer), `start`,
   *   `end`, `pointer`, `rendering`, and `sha256`, the digest the page
   *   shows, which the read checks.
   * @returns The retrieval answer (`{structured}`), or why not.
   */
  async read(
    id: string,
    result: string,
    query: URLSearchParams,
  ): Promise<ApiAnswer> {
    const select = selectionOf(query);
    if (typeof select === "string") return failure(400, select);
    return await this.#retrieve(
      id,
      result,
      (retrieval, stored) =>
        retrieval.read({
          reference: {
            result: stored.id,
            sha256: query.get("sha256") ?? "",
            select,
            ...(query.get("rendering") === "json" ? { rendering: "json" } : {}),
          },
        }),
    );
  }

  /**
   * A search of a stored result, as `find_in_result` answers it.
   *
   * @param id The run's id.
   * @param result `result-<n>`.
   * @param query `pattern`, `regex` (`true`), `sha256`.
   * @returns The retrieval answer, or why not.
   */
  async find(
    id: string,
    result: string,
    query: URLSearchParams,
  ): Promise<ApiAnswer> {
    return await this.#retrieve(
      id,
      result,
      (retrieval, stored) =>
        retrieval.find({
          reference: {
            result: stored.id,
            sha256: query.get("sha256") ?? "",
            select: { kind: "whole" },
          },
          pattern: query.get("pattern") ?? "",
          ...(query.get("regex") === "true" ? { regex: true } : {}),
        }),
    );
  }

  async #retrieve(
    id: string,
    result: string,
    ask: (retrieval: Retrieval, stored: StoredResult) => RetrievalAnswer,
  ): Promise<ApiAnswer> {
    const run = this.#runs.get(id);
    if (run === undefined) return failure(404, `No run ${id.slice(0, 32)}`);
    if (run.session === undefined) {
      return failure(404, "This run keeps no results");
    }
    const body = await run.session.body(result);
    if (!body.ok) return failure(404, body.reason);
    const stored = body.result;
    const retrieval = new Retrieval({
      get: (wanted) => wanted === stored.id ? stored : undefined,
      list: () => ({ results: [], next_offset: null }),
    });
    const answer = ask(retrieval, stored);
    return answer.ok
      ? { status: 200, body: { structured: answer.structured } }
      : failure(422, `${answer.code}: ${answer.message}`);
  }

  /** What does not fit between a run's inputs (without reading bodies). */
  #check(run: ViewSource): string[] {
    const notes = this.#notes.get(run.id) ?? [];
    const lines = requestLines(run);
    if (run.replies !== undefined && run.replies.length < lines.length - 1) {
      notes.push(
        `The recording holds ${run.replies.length} replies for ${lines.length} requests: it may belong to another run`,
      );
    }
    if (lines.length > 0 && lines.some((l) => l.bytes_by_part === undefined)) {
      notes.push(
        "A version 1 context report: requests show their total bytes, not their parts",
      );
    }
    this.#notes.set(run.id, notes);
    return notes;
  }
}

/** The selection of a read from its query, or what is wrong with it. */
function selectionOf(query: URLSearchParams): Record<string, unknown> | string {
  const kind = query.get("kind") ?? "whole";
  const int = (name: string) => {
    const text = query.get(name) ?? "";
    return /^(0|[1-9][0-9]{0,15})$/.test(text) ? Number(text) : undefined;
  };
  if (kind === "whole") return { kind };
  if (kind === "json_pointer") {
    return { kind, pointer: query.get("pointer") ?? "" };
  }
  if (kind === "bytes" || kind === "lines") {
    const start = int("start");
    const end = int("end");
    if (start === undefined || end === undefined) {
      return `A ${kind} read needs start and end as whole numbers`;
    }
    return { kind, start, end };
  }
  return `Unknown selection ${
    kind.slice(0, 32)
  }: whole, bytes, lines or json_pointer`;
}
