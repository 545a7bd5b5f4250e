/**
 * The gateway apart from the protocol: the upstream servers of a
 * `--servers` file behind one {@linkcode ResultStore}. It names upstream
 * tools `<server>__<tool>`, routes calls to them, offloads large answers
 * into the store, answers the retrieval tools (`read_result`,
 * `find_in_result`, `list_results`) over the same store, and keeps the
 * per-tool figures of `--report`. The MCP server in `gateway_server.ts`
 * puts it on a transport; nothing here knows which one.
 *
 * @module
 */
import { ResultStore } from "../../store/result_store.ts";
import {
  checkAnthropicRequest,
  checkOpenAIRequest,
} from "../../providers/request_rules.ts";
import { jsonOutline } from "../../reference/outline.ts";
import { Retrieval } from "../../reference/retrieval.ts";
import { RETRIEVAL_TOOLS } from "../../reference/retrieval_tools.ts";
import { type GatewayConfig, toolClassification } from "./gateway_config.ts";
import { namespacedName, nameTools } from "./tool_names.ts";
import { mediaBlock, type MediaTemplate, offloadResult } from "./offload.ts";
import { shapeOf } from "./large_text.ts";
import { templateLiterals, uriMatches } from "./uri_template.ts";
import {
  type ClientCapabilities,
  Upstream,
  UpstreamFailure,
  type UpstreamRelay,
  type UpstreamTool,
} from "./upstream.ts";
import type { Sdk } from "./sdk.ts";

/** A `tools/call` result as MCP sends it (an open object). */
export type McpResult = Record<string, unknown>;

/** What `tools/list` shows for one tool (an open object). */
export type ListedTool = Record<string, unknown> & { name: string };

/** Loom's own root tools (`--root`): `inspect_files`, `write_file`. */
export interface OwnTools {
  /** Their definitions. */
  readonly definitions: readonly ListedTool[];
  /** Runs one. */
  call(name: string, args: unknown): Promise<McpResult>;
}

/**
 * The persistence of gateway results (`--session`, `--store`): it is the
 * backing of the gateway's store, so each result is recorded as it is
 * stored, with the {@linkcode GatewayNote} the gateway gave it.
 */
export interface GatewayPersistence {
  /** The recorded call of a result kept as a descriptor only, to call it again. */
  missing(id: string): RecordedCall | undefined;
}

/** The call that produced a stored result, enough to call it again. */
export interface RecordedCall {
  /** The server's entry name. */
  readonly server: string;
  /** The upstream tool. */
  readonly tool: string;
  /** The arguments. */
  readonly arguments: Record<string, unknown>;
  /** The part of the answer the result holds, e.g. `content[0]`. */
  readonly part: string;
  /** The result's digest. */
  readonly sha256: string;
  /** The block of an image, audio or blob result. */
  readonly media?: MediaTemplate;
}

/**
 * What the gateway hands its store with each result it stores (the store's
 * `note`, passed to its backing, the session): the call behind the result
 * and the seeds' persistence rule's decision — whether its body may be
 * written (`persist`), or only its descriptor and this call. (A type, not
 * an interface: the store takes notes as plain records.)
 */
export type GatewayNote = {
  /** The call (without arguments for a resource read). */
  readonly call: {
    readonly server: string;
    readonly tool: string;
    readonly part: string;
    readonly arguments?: Record<string, unknown>;
    readonly media?: MediaTemplate;
  };
  /** Whether the body may be persisted. */
  readonly persist: boolean;
};

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
  /** The environment stdio upstreams start with. */
  readonly env: Readonly<Record<string, string>>;
  /** Diagnostics to standard error. */
  readonly log: (line: string) => void;
  /** Loom's own root tools, with `--root`. */
  readonly own?: OwnTools;
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
}

/** The host side of a call: cancellation and progress. */
export interface CallContext {
  /** Aborted when the host cancels. */
  readonly signal?: AbortSignal;
  /** Sends a progress notification with the host's token (when it asked). */
  readonly progress?: (progress: Record<string, unknown>) => void;
  /** The host's `_meta` of the request (passed on, progress token aside). */
  readonly meta?: Record<string, unknown>;
}

/** `_meta` of the retrieval tools: Claude Code keeps answers this long inline. */
export const RETRIEVAL_META: Readonly<Record<string, unknown>> = {
  "anthropic/maxResultSizeChars": 200_000,
};

/** Most tools offered from one server (a hostile one may list millions). */
const MAX_TOOLS_PER_SERVER = 1000;

interface PromptRoute {
  readonly upstream: Upstream;
  readonly prompt: Record<string, unknown>;
}

interface Route {
  readonly upstream: Upstream;
  readonly tool: UpstreamTool;
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
  readonly #retrieval: Retrieval;
  readonly #media = new Map<string, MediaTemplate>();
  #upstreams: Upstream[] = [];
  #routes = new Map<string, Route>();
  #listed: ListedTool[] = [];
  #toolsByServer = new Map<string, UpstreamTool[]>();
  #notes: string[] = [];
  readonly #resources = new Map<
    string,
    { upstream: Upstream; resource: Record<string, unknown> }
  >();
  readonly #promptsByServer = new Map<string, Record<string, unknown>[]>();
  /** Resource templates by server, each with its literal parts. */
  readonly #templatesByServer = new Map<
    string,
    { template: Record<string, unknown>; literals: string[] }[]
  >();
  #prompts = new Map<string, PromptRoute>();
  readonly #figures = new Map<string, ToolFigures>();
  #started: Promise<void> | undefined;

  /**
   * Prepares the gateway; {@linkcode Gateway.start} connects the upstreams.
   *
   * @param options The configuration, the store and the limits.
   */
  constructor(options: GatewayOptions) {
    this.#options = options;
    this.#retrieval = new Retrieval(options.store);
  }

  /** What listing found worth saying: refused schemas, dropped names, failed servers. */
  get notes(): readonly string[] {
    return this.#notes;
  }

  /** The upstream tools by server, as listed (for `--list`). */
  get upstreamTools(): ReadonlyMap<string, readonly UpstreamTool[]> {
    return this.#toolsByServer;
  }

  /** The gateway name of each upstream tool, by server and tool. */
  routes(): { name: string; server: string; tool: string }[] {
    return [...this.#routes].map(([name, r]) => ({
      name,
      server: r.upstream.name,
      tool: r.tool.name,
    }));
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
    this.#upstreams = o.config.servers.map((entry) =>
      new Upstream(entry, {
        sdk: o.sdk,
        capabilities,
        relay: {
          ...relay,
          listChanged: (what) => {
            this.#refresh(entry.name).then(
              () => relay.listChanged(what),
              (error) => o.log(`server ${entry.name}: ${String(error)}`),
            );
          },
        },
        // The JSON-RPC envelope and escapes around a result at the limit.
        maxMessageBytes: o.maxResultBytes + 1024 * 1024,
        // Taken out as they stream in: always offloaded, so never relayed.
        largeStringBytes: Math.max(64 * 1024, o.offloadBytes + 1),
        callTimeoutMs: o.callTimeoutMs,
        env: o.env,
        log: o.log,
      })
    );
    await Promise.all(this.#upstreams.map((u) => this.#list(u)));
    this.#rename();
  }

  async #list(upstream: Upstream): Promise<void> {
    try {
      const tools = await upstream.listTools();
      if (tools.length > MAX_TOOLS_PER_SERVER) {
        this.#options.log(
          `server ${upstream.name}: lists ${tools.length} tools; the first ${MAX_TOOLS_PER_SERVER} are offered`,
        );
      }
      this.#toolsByServer.set(
        upstream.name,
        tools.slice(0, MAX_TOOLS_PER_SERVER),
      );
      await this.#listCatalog(upstream);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.#notes.push(`server ${upstream.name}: ${message}`);
      this.#options.log(`server ${upstream.name}: no tools listed: ${message}`);
      this.#toolsByServer.set(upstream.name, []);
    }
  }

  async #listCatalog(upstream: Upstream): Promise<void> {
    try {
      const [resources, templates, prompts] = await Promise.all([
        upstream.listAll("resources/list", "resources", "resources"),
        upstream.listAll(
          "resources/templates/list",
          "resourceTemplates",
          "resources",
        ),
        upstream.listAll("prompts/list", "prompts", "prompts"),
      ]);
      this.#templatesByServer.set(
        upstream.name,
        templates.flatMap((template) => {
          const literals = templateLiterals(template.uriTemplate as string);
          return literals === undefined ? [] : [{ template, literals }];
        }),
      );
      for (const [uri, route] of this.#resources) {
        if (route.upstream === upstream) this.#resources.delete(uri);
      }
      for (const resource of resources) {
        const uri = resource.uri;
        if (typeof uri !== "string" || uri.length > 4096) continue;
        const taken = this.#resources.get(uri);
        if (taken !== undefined && taken.upstream !== upstream) {
          this.#options.log(
            `${upstream.name}: resource ${
              JSON.stringify(uri.slice(0, 120))
            } left out: server ${taken.upstream.name} lists the same URI`,
          );
          continue;
        }
        this.#resources.set(uri, { upstream, resource });
      }
      this.#promptsByServer.set(
        upstream.name,
        prompts.filter((p) => typeof p.name === "string"),
      );
      const pairs = [...this.#promptsByServer].flatMap(([server, list]) =>
        list.map((p) => ({ server, tool: p.name as string }))
      );
      const routes = new Map<string, PromptRoute>();
      for (const n of nameTools(pairs).named) {
        const owner = this.#upstreams.find((u) => u.name === n.server)!;
        const prompt = this.#promptsByServer.get(n.server)!.find((p) =>
          p.name === n.tool
        )!;
        routes.set(n.name, { upstream: owner, prompt });
      }
      this.#prompts = routes;
    } catch (error) {
      this.#options.log(
        `server ${upstream.name}: resources and prompts not listed: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
    }
  }

  /**
   * The upstreams' resources, each under its own URI and a name
   * `<server>__<name>`.
   *
   * @returns The `resources/list` entries.
   */
  resources(): Record<string, unknown>[] {
    return [...this.#resources].map(([uri, { upstream, resource }]) => ({
      ...small(resource),
      uri,
      name: namespacedName(
        upstream.name,
        typeof resource.name === "string" ? resource.name : uri,
      ),
    }));
  }

  /**
   * The upstreams' resource templates, each under its own URI template and a
   * name `<server>__<name>`. A read of a URI expanded from one goes to the
   * first server (in the file's order) with a template it fits.
   *
   * @returns The `resources/templates/list` entries.
   */
  resourceTemplates(): Record<string, unknown>[] {
    return this.#upstreams.flatMap((upstream) =>
      (this.#templatesByServer.get(upstream.name) ?? []).map((
        { template },
      ) => ({
        ...small(template),
        uriTemplate: template.uriTemplate,
        name: namespacedName(
          upstream.name,
          typeof template.name === "string"
            ? template.name
            : String(template.uriTemplate),
        ),
      }))
    );
  }

  /**
   * The upstreams' prompts, named `<server>__<prompt>`.
   *
   * @returns The `prompts/list` entries.
   */
  prompts(): Record<string, unknown>[] {
    return [...this.#prompts].map(([name, { prompt }]) => ({
      ...small(prompt),
      name,
    }));
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
    const route = this.#resources.get(uri) ?? this.#templateRoute(uri);
    if (route === undefined) {
      throw new UpstreamFailure(
        "unknown_resource",
        `No server of this gateway lists the resource ${
          JSON.stringify(String(uri).slice(0, 200))
        }`,
      );
    }
    const { result } = await route.upstream.request("resources/read", { uri });
    const contents = Array.isArray(result.contents) ? result.contents : [];
    const asTool = {
      content: contents.map((c: Record<string, unknown>) =>
        typeof c?.text === "string"
          ? { type: "text", text: c.text }
          : { type: "resource", resource: c }
      ),
    };
    const o = this.#options;
    const tool = `resources/read ${uri.slice(0, 200)}`;
    // A resource is no tool a configuration opts in: its bodies are not
    // persisted.
    const offloaded = await offloadResult(asTool, {
      server: route.upstream.name,
      tool,
      store: o.store,
      offloadBytes: o.offloadBytes,
      maxResultBytes: o.maxResultBytes,
      outline: jsonOutline,
      note: (part, media) => ({
        call: {
          server: route.upstream.name,
          tool,
          part,
          ...(media === undefined ? {} : { media }),
        },
        persist: false,
      }),
    });
    if (!offloaded.offloaded) return result;
    for (const part of offloaded.stored) {
      if (part.media !== undefined) this.#media.set(part.id, part.media);
    }
    const [first] = offloaded.result.content as { text: string }[];
    o.log(
      `${route.upstream.name}: resources/read ${
        uri.slice(0, 120)
      }: ${offloaded.upstreamBytes} bytes upstream → ${
        first!.text.length
      } bytes to the host`,
    );
    return {
      contents: [{
        uri,
        mimeType: "application/vnd.loom.descriptor+json",
        text: first!.text,
      }],
    };
  }

  /** The first upstream with a resource template the URI fits. */
  #templateRoute(uri: string): { upstream: Upstream } | undefined {
    if (typeof uri !== "string" || uri.length > 4096) return undefined;
    const upstream = this.#upstreams.find((u) =>
      (this.#templatesByServer.get(u.name) ?? []).some(({ literals }) =>
        uriMatches(literals, uri)
      )
    );
    return upstream === undefined ? undefined : { upstream };
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
    const route = this.#prompts.get(name);
    if (route === undefined) {
      throw new UpstreamFailure(
        "unknown_prompt",
        `${
          JSON.stringify(String(name).slice(0, 64))
        } is not a prompt of this gateway`,
      );
    }
    const { result } = await route.upstream.request("prompts/get", {
      name: route.prompt.name,
      ...(args === undefined ? {} : { arguments: args }),
    });
    return result;
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
        this.#rename();
      } while (this.#stale.has(server));
    })().finally(() => this.#refreshing.delete(server));
    this.#refreshing.set(server, refresh);
    await refresh;
  }

  readonly #refreshing = new Map<string, Promise<void>>();
  readonly #stale = new Set<string>();

  #rename(): void {
    const pairs: { server: string; tool: string; upstream: Upstream }[] = [];
    const byPair = new Map<string, UpstreamTool>();
    for (const upstream of this.#upstreams) {
      for (const tool of this.#toolsByServer.get(upstream.name) ?? []) {
        pairs.push({ server: upstream.name, tool: tool.name, upstream });
        byPair.set(`${upstream.name}\u0000${tool.name}`, tool);
      }
    }
    const { named, dropped } = nameTools(pairs);
    const notes = this.#notes.filter((n) => n.startsWith("server "));
    for (const d of dropped) {
      notes.push(
        `${d.server}: tool ${
          JSON.stringify(d.tool.slice(0, 80))
        } left out: its name collides with another`,
      );
    }
    const routes = new Map<string, Route>();
    const listed: ListedTool[] = [];
    for (const n of named) {
      const tool = byPair.get(`${n.server}\u0000${n.tool}`)!;
      const upstream = this.#upstreams.find((u) => u.name === n.server)!;
      const shown = listedTool(n.name, tool);
      if (shown === undefined) {
        notes.push(
          `${n.server}: tool ${
            JSON.stringify(n.tool.slice(0, 80))
          } left out: its inputSchema is not a JSON Schema object of type "object"`,
        );
        continue;
      }
      for (const why of schemaRefusals(n.name, shown.inputSchema)) {
        notes.push(`${n.name}: listed as it is, but ${why}`);
      }
      routes.set(n.name, { upstream, tool });
      listed.push(shown);
    }
    for (const note of notes) {
      if (!this.#notes.includes(note)) this.#options.log(note);
    }
    this.#notes = notes;
    this.#routes = routes;
    this.#listed = listed;
  }

  /**
   * The tools the host sees: the retrieval tools, Loom's root tools (with
   * `--root`) and the upstream tools (their `outputSchema` left out: any
   * answer may be offloaded).
   *
   * @returns The `tools/list` entries.
   */
  tools(): ListedTool[] {
    const retrieval = RETRIEVAL_TOOLS.map((tool) => ({
      ...tool,
      _meta: { ...RETRIEVAL_META },
    })) as ListedTool[];
    return [
      ...retrieval,
      ...(this.#options.own?.definitions ?? []),
      ...this.#listed,
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
    try {
      // A store shared with other instances: take in what they stored.
      await this.#options.store.refresh();
    } catch (error) {
      return toolError(
        (error as { code?: string }).code ?? "storage_unavailable",
        error instanceof Error ? error.message : String(error),
      );
    }
    switch (name) {
      case "read_result":
        return this.#retrieved(name, await this.#read(args));
      case "find_in_result":
        return this.#retrieved(name, await this.#find(args));
      case "list_results":
        return this.#retrieved(name, this.#retrieval.list(args));
    }
    await this.#started;
    const route = this.#routes.get(name);
    if (route === undefined) {
      return toolError(
        "unknown_tool",
        `${
          JSON.stringify(String(name).slice(0, 64))
        } is not a tool of this gateway; tools/list shows its tools`,
      );
    }
    return await this.#upstreamCall(route, args, context);
  }

  async #upstreamCall(
    route: Route,
    args: Record<string, unknown>,
    context: CallContext,
  ): Promise<McpResult> {
    const { upstream, tool } = route;
    const figures = this.#figure(`${upstream.name}/${tool.name}`);
    figures.calls += 1;
    const meta = { ...(context.meta ?? {}) };
    delete meta.progressToken;
    let answer;
    try {
      answer = await upstream.request(
        "tools/call",
        {
          name: tool.name,
          arguments: args,
          ...(Object.keys(meta).length === 0 ? {} : { _meta: meta }),
        },
        {
          ...(context.signal === undefined ? {} : { signal: context.signal }),
          ...(context.progress === undefined
            ? {}
            : { onprogress: context.progress }),
        },
      );
    } catch (error) {
      if (!(error instanceof UpstreamFailure)) throw error;
      this.#options.log(`${upstream.name}/${tool.name}: ${error.code}`);
      const result = toolError(error.code, error.message);
      figures.bytes_to_host += jsonBytes(result);
      return result;
    }
    const o = this.#options;
    const checked = o.sdk.types.CallToolResultSchema.safeParse(
      shapeOf(answer.result),
    );
    if (!checked.success) {
      const result = toolError(
        "upstream_malformed",
        `Server ${upstream.name} answered ${tool.name} with a result that is not an MCP CallToolResult: ${
          String(checked.error.issues?.[0]?.message ?? checked.error).slice(
            0,
            300,
          )
        }`,
      );
      o.log(`${upstream.name}/${tool.name}: upstream_malformed`);
      figures.bytes_to_host += jsonBytes(result);
      return result;
    }
    const classification = toolClassification(upstream.entry, tool.name);
    // The seeds' rule: the self-reading check comes before any opt-in.
    const persist = !classification.selfReading && classification.persist;
    const offloaded = await offloadResult(answer.result, {
      server: upstream.name,
      tool: tool.name,
      store: o.store,
      offloadBytes: o.offloadBytes,
      maxResultBytes: o.maxResultBytes,
      ...(answer.partialTotalBytes === undefined
        ? {}
        : { partialTotalBytes: answer.partialTotalBytes }),
      outline: jsonOutline,
      note: (part, media): GatewayNote => ({
        call: {
          server: upstream.name,
          tool: tool.name,
          part,
          arguments: args,
          ...(media === undefined ? {} : { media }),
        },
        persist,
      }),
    });
    figures.bytes_received += offloaded.upstreamBytes;
    if (!offloaded.offloaded) {
      figures.bytes_to_host += offloaded.upstreamBytes;
      return offloaded.result;
    }
    figures.offloaded += 1;
    const sent = jsonBytes(offloaded.result);
    figures.bytes_to_host += sent;
    o.log(
      `${upstream.name}/${tool.name}: ${offloaded.upstreamBytes} bytes upstream → ${sent} bytes to the host (${
        offloaded.stored.map((s) => s.id).join(", ") || "not stored"
      })`,
    );
    for (const part of offloaded.stored) {
      if (part.media !== undefined) this.#media.set(part.id, part.media);
    }
    return offloaded.result;
  }

  /** The media template of a stored image, audio or blob result. */
  media(id: string): MediaTemplate | undefined {
    return this.#media.get(id) ?? this.#options.media?.get(id);
  }

  async #read(args: Record<string, unknown>) {
    const reference = args?.reference as Record<string, unknown> | undefined;
    const id = typeof reference?.result === "string" ? reference.result : "";
    const refused = await this.#refetch(id);
    if (refused !== undefined) return refused;
    const template = this.media(id);
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
      const block = mediaBlock(
        template,
        new TextDecoder().decode(stored.bytes),
      );
      return { ok: true as const, block };
    }
    return this.#retrieval.read(args);
  }

  async #find(args: Record<string, unknown>) {
    const reference = args?.reference as Record<string, unknown> | undefined;
    if (typeof reference?.result === "string") {
      const refused = await this.#refetch(reference.result);
      if (refused !== undefined) return refused;
    }
    return this.#retrieval.find(args);
  }

  /**
   * Brings back the body of a result a session kept as a descriptor only:
   * by calling its tool again, only when the tool is annotated read-only and
   * idempotent, and only when the answer has the recorded digest.
   */
  async #refetch(
    id: string,
  ): Promise<{ ok: false; code: string; message: string } | undefined> {
    const o = this.#options;
    if (id === "" || o.store.get(id) !== undefined) return undefined;
    const call = o.persistence?.missing?.(id);
    if (call === undefined) return undefined;
    await this.#started;
    const route = [...this.#routes.values()].find((r) =>
      r.upstream.name === call.server && r.tool.name === call.tool
    );
    const hints = route?.tool.annotations as
      | Record<string, unknown>
      | undefined;
    const what = `${id} (${call.server}/${call.tool})`;
    if (
      route === undefined || hints?.readOnlyHint !== true ||
      hints?.idempotentHint !== true
    ) {
      return {
        ok: false,
        code: "result_not_persisted",
        message:
          `${what} was kept as a descriptor only, and its tool is not annotated read-only and idempotent, so the gateway does not call it again; call the tool again yourself`,
      };
    }
    let answer;
    try {
      answer = await route.upstream.request("tools/call", {
        name: call.tool,
        arguments: call.arguments,
      });
    } catch (error) {
      return {
        ok: false,
        code: "result_not_persisted",
        message:
          `${what} was kept as a descriptor only and calling ${call.tool} again failed: ${
            error instanceof Error ? error.message : String(error)
          }`,
      };
    }
    const scratch = new ResultStore({
      maxResultBytes: o.maxResultBytes,
      maxTotalBytes: Number.MAX_SAFE_INTEGER,
    });
    const again = await offloadResult(answer.result, {
      server: call.server,
      tool: call.tool,
      store: scratch,
      offloadBytes: 0,
      maxResultBytes: o.maxResultBytes,
      outline: () => undefined,
    });
    const part = again.stored.find((s) =>
      String(s.descriptor.part ?? "content[0]") === call.part
    );
    const fetched = part === undefined ? undefined : scratch.get(part.id);
    if (fetched === undefined || fetched.sha256 !== call.sha256) {
      return {
        ok: false,
        code: "digest_mismatch",
        message:
          `${what} was called again to bring back its body, but the answer differs from the one the descriptor's sha256 names; the gateway does not swap it in`,
      };
    }
    o.store.restore({ ...fetched, id });
    if (part?.media !== undefined) this.#media.set(id, part.media);
    return undefined;
  }

  #retrieved(
    name: string,
    answer:
      | { ok: true; structured: Record<string, unknown> }
      | { ok: true; block: Record<string, unknown> }
      | { ok: false; code: string; message: string },
  ): McpResult {
    const figures = this.#figure(name);
    figures.calls += 1;
    let result: McpResult;
    if (!answer.ok) {
      result = toolError(answer.code, answer.message);
    } else if ("block" in answer) {
      result = { content: [answer.block] };
    } else {
      result = {
        content: [{ type: "text", text: JSON.stringify(answer.structured) }],
        structuredContent: answer.structured,
      };
    }
    figures.bytes_to_host += jsonBytes(result);
    return result;
  }

  #figure(key: string): ToolFigures {
    let figures = this.#figures.get(key);
    if (figures === undefined) {
      figures = { calls: 0, offloaded: 0, bytes_received: 0, bytes_to_host: 0 };
      this.#figures.set(key, figures);
    }
    return figures;
  }

  /**
   * The per-tool totals for `--report`: upstream tools as `server/tool`,
   * retrieval tools by name.
   *
   * @returns The figures by tool.
   */
  report(): Record<string, ToolFigures> {
    return Object.fromEntries(
      [...this.#figures].map(([k, v]) => [k, { ...v }]),
    );
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

/** The listing of one upstream tool under its gateway name, or `undefined` when unusable. */
function listedTool(name: string, tool: UpstreamTool): ListedTool | undefined {
  const schema = tool.inputSchema;
  if (
    typeof schema !== "object" || schema === null || Array.isArray(schema) ||
    (schema as Record<string, unknown>).type !== "object"
  ) return undefined;
  const out: ListedTool = { name, inputSchema: schema };
  if (typeof tool.title === "string") out.title = tool.title.slice(0, 256);
  if (typeof tool.description === "string") {
    out.description = tool.description.slice(0, 16_384);
  }
  if (
    typeof tool.annotations === "object" && tool.annotations !== null &&
    !Array.isArray(tool.annotations)
  ) out.annotations = tool.annotations;
  return out;
}

/** Why the Anthropic or OpenAI request rules would refuse a tool's input schema. */
function schemaRefusals(name: string, schema: unknown): string[] {
  try {
    return breaches(name, schema);
  } catch (error) {
    // The checker itself failed on a hostile schema: say so, list the tool.
    return [
      `its input schema could not be checked against the services' rules (${
        error instanceof Error ? error.message.slice(0, 200) : String(error)
      })`,
    ];
  }
}

function breaches(name: string, schema: unknown): string[] {
  const anthropic = checkAnthropicRequest({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    messages: [{ role: "user", content: "x" }],
    tools: [{ name, input_schema: schema }],
  });
  const openai = checkOpenAIRequest({
    model: "gpt-4.1",
    messages: [{ role: "user", content: "x" }],
    tools: [{ type: "function", function: { name, parameters: schema } }],
  });
  return [...anthropic, ...openai]
    .filter((breach) => breach.path.startsWith("/tools/"))
    .map((breach) => `${breach.service} would refuse it: ${breach.message}`);
}

/** A listing entry kept only when small (hostile fields can be huge). */
function small(item: Record<string, unknown>): Record<string, unknown> {
  if (JSON.stringify(item).length <= 16_384) return item;
  const out: Record<string, unknown> = {};
  for (const key of ["name", "title", "mimeType", "uri"]) {
    const value = item[key];
    if (typeof value === "string" && value.length <= 1024) out[key] = value;
  }
  return out;
}

function toolError(code: string, message: string): McpResult {
  return {
    content: [{ type: "text", text: `${code}: ${message}` }],
    isError: true,
  };
}

function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}
