/**
 * What the MCP server's four tools do, apart from the protocol: each call
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
import { LookupSession } from "../reference/lookup_session.ts";
import { expandEditContents } from "../reference/edit_contents.ts";
import { isLoomError } from "../errors.ts";
import { rootPath } from "./_root_paths.ts";
import { parseToolArguments } from "./_arguments.ts";

/** A tool's answer: structured JSON and its text, or a failure. */
export type ToolAnswer =
  | {
    /** Succeeded. */
    readonly ok: true;
    /** The `structuredContent` (wire-format JSON). */
    readonly structured: Record<string, unknown>;
  }
  | {
    /** Failed: an MCP tool error. */
    readonly ok: false;
    /** The failure code, e.g. `digest_mismatch`. */
    readonly code: string;
    /** What failed and why, naming root-relative paths only. */
    readonly message: string;
  };

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
 * The four tools over one root, one result store and one confined executor.
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
      // A store shared with other servers: take in what they stored first.
      await this.#store.refresh();
      switch (parsed.tool) {
        case "inspect_files":
          return await this.#inspect(parsed.paths);
        case "read_result":
          return await this.#lookup({ $read_result: parsed.reference });
        case "list_results":
          return await this.#lookup({ $list_results: parsed.offset });
        case "write_file":
          return await this.#write(parsed.path, parsed.contents);
      }
    } catch (error) {
      return failure(error);
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

  async #lookup(request: unknown): Promise<ToolAnswer> {
    // One lookup per call: a fresh session gives each call the wire
    // format's per-answer budget (8 KiB) and its failure answers.
    const session = new LookupSession({
      results: this.#store,
      stage: "arguments",
    });
    const answer = await session.answer(request);
    if ("lookup_failed" in answer) {
      const text = answer.lookup_failed;
      const at = text.indexOf(": ");
      return {
        ok: false,
        code: text.slice(0, at),
        message: text.slice(at + 2),
      };
    }
    return { ok: true, structured: { ...answer } };
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
