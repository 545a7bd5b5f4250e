/**
 * The gateway apart from the protocol: the upstream servers of a
 * `--servers` file behind one {@linkcode ResultStore}. This file connects
 * the upstreams, keeps their listings fresh when they say they changed, and
 * dispatches each call to the room that answers it:
 *
 * - `tool_listing.ts`: upstream tools, their `<server>__<tool>` names,
 *   routes and `tools/list` entries;
 * - `upstream_call.ts`: a call routed to an upstream, offloaded into the
 *   store under the persistence rule;
 * - `retrieval_answers.ts` (with `refetch.ts`): `read_result`,
 *   `find_in_result`, `list_results` over the same store;
 * - `resources_and_prompts.ts`: resources, templates and prompts;
 * - `tool_catalog.ts`: in `search` mode (`--catalog`), `search_tools` and
 *   `call_tool` in place of the upstream tools;
 * - `run_code.ts`: with `--code`, code that calls the upstream tools in a
 *   confined sandbox;
 * - `tool_figures.ts`: the per-tool figures of `--report`.
 *
 * The MCP server in `gateway_server.ts` puts it on a transport; nothing
 * here knows which one.
 *
 * @module
 */
import type { ResultStore } from "../../store/result_store.ts";
import { RETRIEVAL_TOOLS } from "../../reference/retrieval_tools.ts";
import type { GatewayConfig } from "./gateway_config.ts";
import type { GatewayPersistence } from "./gateway_note.ts";
import type { MediaTemplate } from "./offload.ts";
import { refetch } from "./refetch.ts";
import { ResourcesAndPrompts } from "./resources_and_prompts.ts";
import { RETRIEVAL_META, RetrievalAnswers } from "./retrieval_answers.ts";
import { RUN_CODE, RunCode } from "./run_code.ts";
import type { CodeRunner } from "../../code/code_runner.ts";
import type { Sdk } from "./sdk.ts";
import { ToolFigureBook, type ToolFigures } from "./tool_figures.ts";
import {
  CALL_TOOL,
  type CatalogMode,
  catalogTools,
  chooseCatalog,
  SEARCH_TOOLS,
  ToolCatalog,
} from "./tool_catalog.ts";
import {
  type ListedTool,
  ToolListing,
  type ToolRoute,
} from "./tool_listing.ts";
import { jsonBytes, type McpResult, toolError } from "./tool_result.ts";
import { type CallContext, callUpstream } from "./upstream_call.ts";
import {
  type ClientCapabilities,
  Upstream,
  type UpstreamRelay,
  type UpstreamTool,
} from "./upstream.ts";

/** Loom's own root tools (`--root`): `inspect_files`, `write_file`. */
export interface OwnTools {
  /** Their definitions. */
  readonly definitions: readonly ListedTool[];
  /** Runs one. */
  call(name: string, args: unknown): Promise<McpResult>;
}

/**
 * One of Loom's own tools the gateway lists in every catalogue mode, after
 * the retrieval and root tools (the place of `run_code` with `--code`). In
 * `search` mode its definition must not depend on what the upstreams list:
 * the host's listing stays byte-identical whatever they do.
 */
export interface GatewayTool {
  /** Its `tools/list` entry. */
  readonly definition: ListedTool;
  /** Runs it. */
  call(args: Record<string, unknown>, context: CallContext): Promise<McpResult>;
}

/** The catalogue a gateway serves, for `--list`. */
export interface CatalogChoice {
  /** `--catalog` as given. */
  readonly requested: CatalogMode;
  /** What it serves: every upstream tool, or the search tools. */
  readonly mode: "full" | "search";
  /** The serialized size of the upstream tools' definitions. */
  readonly upstreamBytes: number;
  /** The serialized size of the `tools/list` the host gets. */
  readonly listingBytes: number;
}

/** Options of {@linkcode Gateway}. */
export interface GatewayOptions {
  /** The MCP SDK (`loadSdk()`). */
  readonly sdk: Sdk;
  /** The checked `--servers` file. */
  readonly config: GatewayConfig;
  /** The one store. */
  readonly store: ResultStore;
  /** `--offload-bytes`. */
  readonly offloadBytes: number;
  /** `--max-result-bytes`. */
  readonly maxResultBytes: number;
  /** `--call-timeout` in milliseconds. */
  readonly callTimeoutMs: number;
  /** `--start-timeout` in milliseconds (default 120 s): a server's start. */
  readonly startTimeoutMs?: number;
  /** The environment stdio upstreams start with. */
  readonly env: Readonly<Record<string, string>>;
  /** Diagnostics to standard error. */
  readonly log: (line: string) => void;
  /** Loom's own root tools, with `--root`. */
  readonly own?: OwnTools;
  /** `--code`: offer `run_code`, running code with this runner. */
  readonly code?: CodeRunner;
  /** Loom's own tools listed in every mode (e.g. `run_code`). */
  readonly loomTools?: readonly GatewayTool[];
  /**
   * `--catalog`: `full` lists every upstream tool, `search` lists
   * `search_tools` and `call_tool` instead, `auto` (the default) is `full`
   * while the upstream tools' definitions fit in 16 KiB, decided once, when
   * the upstreams are first listed.
   */
  readonly catalog?: CatalogMode;
  /**
   * `--session` or `--store`: the session behind the store's backing (the
   * store then shares results with other instances; it is refreshed before
   * each call).
   */
  readonly persistence?: GatewayPersistence;
  /**
   * Media templates of restored results and of other instances' (the
   * session's map, consulted as it grows).
   */
  readonly media?: ReadonlyMap<string, MediaTemplate>;
  /**
   * Where persisted results can be read back (the session folder, or its
   * redacted place in a store), named by telemetry's references.
   */
  readonly location?: string;
}

/**
 * The gateway's state and calls.
 *
 * @example
 * ```ts
 * import { Gateway } from "./gateway.ts";
 * import { loadSdk } from "./sdk.ts";
 * import { ResultStore } from "../../store/result_store.ts";
 * import assert from "node:assert/strict";
 * const gateway = new Gateway({
 *   sdk: await loadSdk(),
 *   config: { file: "x.json", servers: [], skipped: [] },
 *   store: new ResultStore(), offloadBytes: 8192, maxResultBytes: 1 << 20,
 *   callTimeoutMs: 1000, env: {}, log: () => {},
 * });
 * await gateway.start({}, { log: () => {}, listChanged: () => {} });
 * assert.deepEqual(gateway.tools().map((t) => t.name), ["read_result", "find_in_result", "list_results"]);
 * const answer = await gateway.call("nope__x", {});
 * assert.equal(answer.isError, true);
 * await gateway.close();
 * ```
 */
export class Gateway {
  readonly #options: GatewayOptions;
  readonly #media = new Map<string, MediaTemplate>();
  readonly #figures = new ToolFigureBook();
  readonly #listing: ToolListing;
  readonly #resources: ResourcesAndPrompts;
  readonly #retrieval: RetrievalAnswers;
  readonly #runCode: RunCode | undefined;
  /** Counts the listings, for what is derived from them (run_code's description). */
  #listings = 0;
  readonly #catalog: ToolCatalog;
  #mode: "full" | "search" = "full";
  #upstreamBytes = 0;
  /** The last `tools/list` a host was given, serialized. */
  #sent: string | undefined;
  #upstreams: Upstream[] = [];
  #started: Promise<void> | undefined;
  readonly #refreshing = new Map<string, Promise<void>>();
  readonly #stale = new Set<string>();
  /** Tools whose unusable schema was logged. */
  readonly #unchecked = new WeakSet<object>();

  /**
   * Prepares the gateway; {@linkcode Gateway.start} connects the upstreams.
   *
   * @param options The configuration, the store and the limits.
   */
  constructor(options: GatewayOptions) {
    this.#options = options;
    this.#listing = new ToolListing(options.log);
    this.#catalog = new ToolCatalog(
      () => this.#listing.entries,
      options.config.servers.map((s) => s.name),
    );
    this.#resources = new ResourcesAndPrompts({
      upstreams: () => this.#upstreams,
      store: options.store,
      offloadBytes: options.offloadBytes,
      maxResultBytes: options.maxResultBytes,
      log: options.log,
      media: this.#media,
    });
    this.#retrieval = new RetrievalAnswers({
      store: options.store,
      figures: this.#figures,
      media: (id) => this.media(id),
      refetch: (id) =>
        refetch(id, {
          store: options.store,
          ...(options.persistence === undefined
            ? {}
            : { persistence: options.persistence }),
          maxResultBytes: options.maxResultBytes,
          routeOf: async (server, tool) => {
            await this.#started;
            return this.#listing.routeOf(server, tool);
          },
          media: this.#media,
        }),
    });
    this.#runCode = options.code === undefined ? undefined : new RunCode({
      runner: options.code,
      sdk: options.sdk,
      store: options.store,
      offloadBytes: options.offloadBytes,
      maxResultBytes: options.maxResultBytes,
      figures: this.#figures,
      // The catalogue search_tools names too: every tool not disabled.
      catalogue: () => this.#listing.entries.map((e) => e.route),
      version: () => this.#listings,
      describe: () => this.#mode === "search" ? "search" : "declarations",
      ...(options.location === undefined ? {} : { location: options.location }),
    });
  }

  /** What listing found worth saying: refused schemas, dropped names, failed servers. */
  get notes(): readonly string[] {
    return this.#listing.notes;
  }

  /** The upstream tools by server, as listed (for `--list`). */
  get upstreamTools(): ReadonlyMap<string, readonly UpstreamTool[]> {
    return this.#listing.upstreamTools;
  }

  /** The gateway name of each upstream tool, by server and tool. */
  routes(): { name: string; server: string; tool: string }[] {
    return this.#listing.routes();
  }

  /** The catalogue served (known once {@linkcode Gateway.start} has settled). */
  get catalog(): CatalogChoice {
    return {
      requested: this.#options.catalog ?? "auto",
      mode: this.#mode,
      upstreamBytes: this.#upstreamBytes,
      listingBytes: jsonBytes(this.#tools()),
    };
  }

  /**
   * Connects every upstream with the host's capabilities and lists their
   * tools. A server that cannot be reached is logged and contributes no
   * tools; the others are unaffected. Calling it again waits for the first.
   *
   * @param capabilities The host's client capabilities.
   * @param relay Where upstream requests and notifications go.
   */
  start(
    capabilities: ClientCapabilities,
    relay: UpstreamRelay,
  ): Promise<void> {
    this.#started ??= this.#start(capabilities, relay);
    return this.#started;
  }

  async #start(
    capabilities: ClientCapabilities,
    relay: UpstreamRelay,
  ): Promise<void> {
    const o = this.#options;
    // The host hears of a tool change only when the listing it was given
    // moved: never in search mode, unless an alwaysLoad tool changed.
    const relist = (server: string) => {
      this.#refresh(server).then(
        () => {
          const sent = this.#sent;
          if (sent !== undefined && JSON.stringify(this.#tools()) !== sent) {
            this.#sent = undefined;
            relay.listChanged("tools");
          }
        },
        (error) => o.log(`server ${server}: ${String(error)}`),
      );
    };
    this.#upstreams = o.config.servers.map((entry) =>
      new Upstream(entry, {
        sdk: o.sdk,
        capabilities,
        relay: {
          ...relay,
          listChanged: (what) =>
            what === "tools"
              ? relist(entry.name)
              : this.#refresh(entry.name).then(
                () => relay.listChanged(what),
                (error) => o.log(`server ${entry.name}: ${String(error)}`),
              ),
        },
        // The JSON-RPC envelope and escapes around a result at the limit.
        maxMessageBytes: o.maxResultBytes + 1024 * 1024,
        // Taken out as they stream in: always offloaded, so never relayed.
        largeStringBytes: Math.max(64 * 1024, o.offloadBytes + 1),
        callTimeoutMs: o.callTimeoutMs,
        ...(o.startTimeoutMs === undefined
          ? {}
          : { startTimeoutMs: o.startTimeoutMs }),
        env: o.env,
        log: o.log,
        // A restarted server may list other tools: list it again.
        onReconnect: () => relist(entry.name),
      })
    );
    await Promise.all(this.#upstreams.map((u) => this.#list(u)));
    this.#listing.name(this.#upstreams);
    this.#listings++;
    this.#upstreamBytes = jsonBytes(this.#listing.listed);
    this.#mode = chooseCatalog(o.catalog ?? "auto", this.#upstreamBytes);
  }

  /** Lists one upstream's tools, then (when it answered) its resources and prompts. */
  async #list(upstream: Upstream): Promise<void> {
    if (await this.#listing.list(upstream)) {
      await this.#resources.list(upstream);
    }
  }

  async #refresh(server: string): Promise<void> {
    const upstream = this.#upstreams.find((u) => u.name === server);
    if (upstream === undefined) return;
    // A flood of list_changed notifications costs one listing at a time.
    const running = this.#refreshing.get(server);
    if (running !== undefined) {
      this.#stale.add(server);
      return await running;
    }
    const refresh = (async () => {
      do {
        this.#stale.delete(server);
        await this.#list(upstream);
        this.#listing.name(this.#upstreams);
        this.#listings++;
      } while (this.#stale.has(server));
    })().finally(() => this.#refreshing.delete(server));
    this.#refreshing.set(server, refresh);
    await refresh;
  }

  /**
   * The upstreams' resources, each under its own URI and a name
   * `<server>__<name>`.
   *
   * @returns The `resources/list` entries.
   */
  resources(): Record<string, unknown>[] {
    return this.#resources.resources();
  }

  /**
   * The upstreams' resource templates, each under its own URI template and a
   * name `<server>__<name>`. A read of a URI expanded from one goes to the
   * first server (in the file's order) with a template it fits.
   *
   * @returns The `resources/templates/list` entries.
   */
  resourceTemplates(): Record<string, unknown>[] {
    return this.#resources.resourceTemplates();
  }

  /**
   * The upstreams' prompts, named `<server>__<prompt>`.
   *
   * @returns The `prompts/list` entries.
   */
  prompts(): Record<string, unknown>[] {
    return this.#resources.prompts();
  }

  /**
   * Reads a resource from the upstream that listed it; an answer over the
   * threshold is stored and answered with descriptors, as a tool result is.
   *
   * @param uri The resource URI (untrusted).
   * @returns The `resources/read` result.
   * @throws {UpstreamFailure} When the resource is unknown or the upstream fails.
   */
  async readResource(uri: string): Promise<Record<string, unknown>> {
    await this.#started;
    return await this.#resources.readResource(uri);
  }

  /**
   * Gets a prompt from the upstream that offers it.
   *
   * @param name The gateway's name of the prompt (untrusted).
   * @param args Its arguments.
   * @returns The `prompts/get` result, as the upstream sent it.
   * @throws {UpstreamFailure} When the prompt is unknown or the upstream fails.
   */
  async getPrompt(
    name: string,
    args: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown>> {
    await this.#started;
    return await this.#resources.getPrompt(name, args);
  }

  /**
   * The tools the host sees: the retrieval tools, Loom's root tools (with
   * `--root`), Loom's other tools (`run_code` with `--code`), then in `full`
   * mode the upstream tools (their `outputSchema` left out: any answer may be
   * offloaded), in `search` mode `search_tools`, `call_tool` and the
   * `alwaysLoad` tools.
   *
   * @returns The `tools/list` entries.
   */
  tools(): ListedTool[] {
    const tools = this.#tools();
    // What the host holds now: a list_changed is due when it moves.
    this.#sent = JSON.stringify(tools);
    return tools;
  }

  #tools(): ListedTool[] {
    const retrieval = RETRIEVAL_TOOLS.map((tool) => ({
      ...tool,
      _meta: { ...RETRIEVAL_META },
    })) as ListedTool[];
    const o = this.#options;
    const constant = [
      ...retrieval,
      ...(o.own?.definitions ?? []),
      ...(o.loomTools ?? []).map((t) => t.definition),
      ...(this.#runCode === undefined ? [] : [this.#runCode.definition]),
    ];
    if (this.#mode === "full") return [...constant, ...this.#listing.listed];
    return [
      ...constant,
      ...catalogTools(o.config.servers.map((s) => s.name)).map((tool) => ({
        ...tool,
        _meta: { ...RETRIEVAL_META },
      })),
      ...this.#listing.entries.filter((e) => e.alwaysLoad).map((e) => e.listed),
    ];
  }

  /**
   * Runs one `tools/call`.
   *
   * @param name The tool name the host used (untrusted).
   * @param args Its arguments (untrusted).
   * @param context Cancellation, progress and `_meta` of the host.
   * @returns The MCP result: the upstream's, descriptors, or a tool error.
   */
  async call(
    name: string,
    args: Record<string, unknown>,
    context: CallContext = {},
  ): Promise<McpResult> {
    const own = this.#options.own;
    if (own?.definitions.some((d) => d.name === name)) {
      // Loom's own tools take in what other instances stored themselves.
      return await own.call(name, args);
    }
    // The retrieval tools take in what other instances stored themselves;
    // an upstream call needs nothing of theirs (its ids come from the
    // session's journal as it is stored).
    const retrieved = await this.#retrieval.answer(name, args);
    if (retrieved !== undefined) return retrieved;
    const loom = this.#options.loomTools?.find((t) =>
      t.definition.name === name
    );
    if (loom !== undefined) return await loom.call(args, context);
    await this.#started;
    if (name === RUN_CODE && this.#runCode !== undefined) {
      return await this.#runCode.call(args, context);
    }
    if (this.#mode === "search") {
      if (name === SEARCH_TOOLS) return this.#search(args);
      if (name === CALL_TOOL) return await this.#callCatalogued(args, context);
    }
    // In search mode a catalogued name called directly works too.
    const route = this.#listing.route(name);
    if (route === undefined) {
      return toolError(
        "unknown_tool",
        `${
          JSON.stringify(String(name).slice(0, 64))
        } is not a tool of this gateway; ${
          this.#mode === "search"
            ? "search_tools finds its tools by words or by name"
            : "tools/list shows its tools"
        }`,
      );
    }
    return await this.#callUpstream(route, args, context);
  }

  #callUpstream(
    route: ToolRoute,
    args: Record<string, unknown>,
    context: CallContext,
  ): Promise<McpResult> {
    const o = this.#options;
    return callUpstream(route, args, context, {
      sdk: o.sdk,
      store: o.store,
      offloadBytes: o.offloadBytes,
      maxResultBytes: o.maxResultBytes,
      log: o.log,
      figures: this.#figures,
      media: this.#media,
      ...(o.location === undefined ? {} : { location: o.location }),
    });
  }

  #search(args: Record<string, unknown>): McpResult {
    // A server that could not be listed is tried again (in the background,
    // after its backoff): this search answers from what the gateway holds.
    for (const server of this.#listing.unlisted) {
      this.#refresh(server).catch(() => {});
    }
    return this.#figures.answered(SEARCH_TOOLS, this.#catalog.search(args));
  }

  async #callCatalogued(
    args: Record<string, unknown>,
    context: CallContext,
  ): Promise<McpResult> {
    const resolved = this.#catalog.resolve(args);
    if ("refused" in resolved) {
      return this.#figures.answered(CALL_TOOL, resolved.refused);
    }
    if (
      resolved.unchecked !== undefined && !this.#unchecked.has(resolved.entry)
    ) {
      this.#unchecked.add(resolved.entry);
      this.#options.log(
        `${resolved.entry.name}: arguments passed unchecked: its inputSchema cannot be compiled (${resolved.unchecked})`,
      );
    }
    return await this.#callUpstream(
      resolved.entry.route,
      resolved.arguments,
      context,
    );
  }

  /** The media template of a stored image, audio or blob result. */
  media(id: string): MediaTemplate | undefined {
    return this.#media.get(id) ?? this.#options.media?.get(id);
  }

  /**
   * The per-tool totals for `--report`: upstream tools as `server/tool`,
   * retrieval tools by name.
   *
   * @returns The figures by tool.
   */
  report(): Record<string, ToolFigures> {
    return this.#figures.report();
  }

  /** Tells every upstream that the host's roots changed. */
  async rootsChanged(): Promise<void> {
    await Promise.all(this.#upstreams.map((u) => u.rootsChanged()));
  }

  /** Closes every upstream. */
  async close(): Promise<void> {
    await this.#started?.catch(() => {});
    await Promise.all(this.#upstreams.map((u) => u.close()));
  }
}
