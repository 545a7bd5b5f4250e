/**
 * What the MCP server's five tools do, apart from the protocol: each call
 * takes the host's untrusted arguments and answers a {@linkcode ToolAnswer}
 * in the wire formats `loom run` uses (descriptors, references, lookup
 * answers and failure codes). Files are read and written only through the
 * confined {@linkcode WorkspaceExecutor}; results live in one
 * {@linkcode ResultStore} for the server's lifetime.
 *
 * @module
 */
import { resolve } from "node:path";
import { WorkspaceExecutor } from "../executor/workspace_executor.ts";
import {
  type ResultDescriptor,
  ResultStore,
  type ResultStoreOptions,
  type StoredResult,
} from "../store/result_store.ts";
import { Retrieval, type RetrievalAnswer } from "../reference/retrieval.ts";
import { expandEditContents } from "../reference/edit_contents.ts";
import { isLoomError } from "../errors.ts";
import { rootPath } from "./_root_paths.ts";
import { parseToolArguments } from "./_arguments.ts";
import { takeInFor } from "../reference/referenced_results.ts";
import type { RetrievalToolName } from "../reference/retrieval_tools.ts";

/** A tool's answer: structured JSON and its text, or a failure. */
export type ToolAnswer = RetrievalAnswer;

/** Options of {@linkcode McpTools.start}. */
export interface McpToolsOptions {
  /** The root folder; the tools read and write only inside it. */
  readonly root: string;
  /** The result store's limits (defaults 16 MiB, 64 MiB, 1,024 results). */
  readonly limits?: ResultStoreOptions;
  /** A store to use (restored from a session); default a new one. */
  readonly store?: ResultStore;
  /** The bubblewrap program, or `null` for none (default `bwrap`). */
  readonly sandbox?: string | null;
  /** Called after each result is stored (to persist it). */
  readonly onStored?: (result: StoredResult) => Promise<void>;
}

/**
 * The five tools over one root, one result store and one confined executor.
 *
 * @example
 * ```ts
 * import { McpTools } from "./mcp_tools.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${root}/a.json`, '{"a":[1,"two"]}');
 * const tools = await McpTools.start({ root, sandbox: null });
 * try {
 *   const inspected = await tools.call("inspect_files", { paths: ["a.json"] });
 *   assert.ok(inspected.ok);
 *   const [file] = inspected.structured.files as { reference: Record<string, unknown> }[];
 *   const read = await tools.call("read_result", {
 *     reference: { ...file!.reference, select: { kind: "json_pointer", pointer: "/a/1" } },
 *   });
 *   assert.deepEqual(read, { ok: true, structured: { selected_text: "two" } });
 *   const outside = await tools.call("inspect_files", { paths: ["../x"] });
 *   assert.equal(outside.ok ? "" : outside.code, "outside_root");
 * } finally {
 *   tools.close();
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export class McpTools {
  readonly #executor: WorkspaceExecutor;
  readonly #aliases: readonly string[];
  readonly #store: ResultStore;
  readonly #retrieval: Retrieval;
  readonly #maxFileBytes: number;
  readonly #onStored: (result: StoredResult) => Promise<void>;

  private constructor(
    executor: WorkspaceExecutor,
    store: ResultStore,
    maxFileBytes: number,
    onStored: (result: StoredResult) => Promise<void>,
    given: string,
  ) {
    this.#executor = executor;
    this.#aliases = given === executor.workspace ? [] : [given];
    this.#store = store;
    this.#retrieval = new Retrieval(store);
    this.#maxFileBytes = maxFileBytes;
    this.#onStored = onStored;
  }

  /**
   * Starts the confined executor over the root.
   *
   * @param options The root, the store's limits, the sandbox.
   * @returns The tools; call {@linkcode McpTools.close}.
   * @throws {ConfinementUnavailableError} When the executor cannot be
   *   confined (e.g. Deno runs without `--unstable-worker-options`).
   * @throws {ExecutorError} `workspace_unavailable` when the root is not a
   *   directory.
   */
  static async start(options: McpToolsOptions): Promise<McpTools> {
    const store = options.store ?? new ResultStore(options.limits ?? {});
    const maxFileBytes = options.limits?.maxResultBytes ??
      16 * 1024 * 1024;
    const executor = await WorkspaceExecutor.start({
      workspace: options.root,
      maxFileBytes,
      ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
    });
    return new McpTools(
      executor,
      store,
      maxFileBytes,
      options.onStored ?? (() => Promise.resolve()),
      resolve(options.root),
    );
  }

  /** The root's real path. */
  get root(): string {
    return this.#executor.workspace;
  }

  /** Whether the executor runs inside bubblewrap. */
  get sandboxed(): boolean {
    return this.#executor.sandboxed;
  }

  /**
   * Runs one tool call.
   *
   * @param name The tool's name (untrusted).
   * @param args The tool's arguments (untrusted JSON).
   * @returns The answer; a refusal or failure is `{ok: false, code, message}`.
   */
  async call(name: string, args: unknown): Promise<ToolAnswer> {
    try {
      const parsed = parseToolArguments(name, args);
      // A store shared with other servers: take in what the call needs.
      await takeInFor(this.#store, parsed.tool, args);
      switch (parsed.tool) {
        case "inspect_files":
          return await this.#inspect(parsed.paths);
        case "write_file":
          return await this.#write(parsed.path, parsed.contents);
        default:
          return this.#retrieve(parsed.tool, parsed.args);
      }
    } catch (error) {
      return failure(error);
    }
  }

  #retrieve(tool: RetrievalToolName, args: unknown): ToolAnswer {
    switch (tool) {
      case "read_result":
        return this.#retrieval.read(args);
      case "find_in_result":
        return this.#retrieval.find(args);
      case "list_results":
        return this.#retrieval.list(args);
    }
  }

  async #inspect(paths: readonly string[]): Promise<ToolAnswer> {
    const relative: string[] = [];
    for (const path of paths) {
      relative.push(rootPath(this.root, path, "read", this.#aliases));
    }
    const entries = await this.#executor.inspect(relative);
    const failed = entries.find((entry) => entry.text === undefined);
    if (failed !== undefined) {
      const code = failed.code ?? "io_error";
      const hint = code === "too_large"
        ? ` (the server's --max-result-bytes is ${this.#maxFileBytes})`
        : "";
      return {
        ok: false,
        code,
        message: `${failed.error ?? "Cannot read the file"}${hint}`,
      };
    }
    const files: ResultDescriptor[] = [];
    for (const entry of entries) {
      files.push(await this.#put(entry.text!, `inspect_files ${entry.path}`));
    }
    return { ok: true, structured: { files } };
  }

  async #write(
    path: string,
    contents: readonly unknown[],
  ): Promise<ToolAnswer> {
    const relative = rootPath(this.root, path, "write", this.#aliases);
    const segments = contents.map((item) =>
      typeof item === "string" ? { literal: item } : { ref: item }
    );
    const text = await expandEditContents({ segments }, {
      results: this.#store,
      maxBytes: this.#maxFileBytes,
    });
    await this.#executor.edit([{ path: relative, contents: text }]);
    return {
      ok: true,
      structured: { ...await this.#put(text, `write_file ${relative}`) },
    };
  }

  async #put(text: string, origin: string): Promise<ResultDescriptor> {
    const descriptor = await this.#store.put(text, {
      origin,
      capture: "complete",
    });
    const stored = descriptor.result === undefined
      ? undefined
      : this.#store.get(descriptor.result);
    if (stored !== undefined) await this.#onStored(stored);
    return descriptor;
  }

  /** Stops the executor. Closing twice is harmless. */
  close(): void {
    this.#executor.close();
  }
}

/** A Loom error as a tool failure; anything else is a bug and propagates. */
function failure(error: unknown): ToolAnswer {
  if (!isLoomError(error)) throw error;
  return { ok: false, code: error.code, message: error.message };
}
