/**
 * The upstreams' resources, resource templates and prompts behind the
 * gateway: listed under `<server>__<name>` names (a resource keeps its own
 * URI; one listed by two servers goes to the first), read and got from the
 * upstream that offers them, and a large resource read offloaded into the
 * store like a tool answer (never persisted: no configuration opts a
 * resource in).
 *
 * @module
 */
import type { ResultStore } from "../../store/result_store.ts";
import { jsonOutline } from "../../reference/outline.ts";
import { type MediaTemplate, offloadResult } from "./offload.ts";
import { namespacedName, nameTools } from "./tool_names.ts";
import { type Upstream, UpstreamFailure } from "./upstream.ts";
import { templateLiterals, uriMatches } from "./uri_template.ts";
import { messageOf } from "../../errors.ts";

/** What {@linkcode ResourcesAndPrompts} needs of the gateway. */
export interface ResourcesAndPromptsOptions {
  /** The upstreams, in the file's order. */
  readonly upstreams: () => readonly Upstream[];
  /** The one store. */
  readonly store: ResultStore;
  /** `--offload-bytes`. */
  readonly offloadBytes: number;
  /** `--max-result-bytes`. */
  readonly maxResultBytes: number;
  /** Diagnostics to standard error. */
  readonly log: (line: string) => void;
  /** Where the media templates of stored image, audio or blob parts go. */
  readonly media: Map<string, MediaTemplate>;
}

interface PromptRoute {
  readonly upstream: Upstream;
  readonly prompt: Record<string, unknown>;
}

/**
 * The resources, templates and prompts of every upstream.
 *
 * @example
 * ```ts
 * import { ResourcesAndPrompts } from "./resources_and_prompts.ts";
 * import { ResultStore } from "../../store/result_store.ts";
 * import assert from "node:assert/strict";
 * const catalogue = new ResourcesAndPrompts({
 *   upstreams: () => [], store: new ResultStore(), offloadBytes: 8192,
 *   maxResultBytes: 1 << 20, log: () => {}, media: new Map(),
 * });
 * assert.deepEqual(catalogue.resources(), []);
 * ```
 */
export class ResourcesAndPrompts {
  readonly #options: ResourcesAndPromptsOptions;
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

  /**
   * An empty catalogue.
   *
   * @param options The upstreams, the store and the limits.
   */
  constructor(options: ResourcesAndPromptsOptions) {
    this.#options = options;
  }

  /**
   * Lists one upstream's resources, templates and prompts; a failure is
   * logged and leaves what was listed before.
   *
   * @param upstream The server.
   */
  async list(upstream: Upstream): Promise<void> {
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
      const upstreams = this.#options.upstreams();
      const routes = new Map<string, PromptRoute>();
      for (const n of nameTools(pairs).named) {
        const owner = upstreams.find((u) => u.name === n.server)!;
        const prompt = this.#promptsByServer.get(n.server)!.find((p) =>
          p.name === n.tool
        )!;
        routes.set(n.name, { upstream: owner, prompt });
      }
      this.#prompts = routes;
    } catch (error) {
      this.#options.log(
        `server ${upstream.name}: resources and prompts not listed: ${
          messageOf(error)
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
    return this.#options.upstreams().flatMap((upstream) =>
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
      if (part.media !== undefined) o.media.set(part.id, part.media);
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
    const upstream = this.#options.upstreams().find((u) =>
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
