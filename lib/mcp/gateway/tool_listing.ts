/**
 * The gateway's listing of upstream tools: each server's tools as listed
 * (at most 4,096 a server), the gateway's name `<server>__<tool>` for each
 * and the route behind it, the `tools/list` entry the host sees, and the
 * notes on what was left out or would be refused by the Anthropic or
 * OpenAI request rules. A tool the servers file disables
 * (`"tools": {"<tool>": {"disabled": true}}`) is in no listing and has no
 * route; one it marks `"alwaysLoad"` is flagged for the catalogue.
 *
 * @module
 */
import {
  checkAnthropicRequest,
  checkOpenAIRequest,
} from "../../providers/request_rules.ts";
import { toolSettings } from "./gateway_config.ts";
import { nameTools } from "./tool_names.ts";
import type { Upstream, UpstreamTool } from "./upstream.ts";
import { messageOf } from "../../errors.ts";

/** What `tools/list` shows for one tool (an open object). */
export type ListedTool = Record<string, unknown> & { name: string };

/** Where a gateway tool name leads: the upstream and its tool. */
export interface ToolRoute {
  /** The upstream server. */
  readonly upstream: Upstream;
  /** Its tool, as listed. */
  readonly tool: UpstreamTool;
}

/** One catalogued upstream tool: its listing, its route and its placement. */
export interface CatalogEntry {
  /** The gateway's name, `<server>__<tool>`. */
  readonly name: string;
  /** The server's entry name. */
  readonly server: string;
  /** The upstream's own name. */
  readonly tool: string;
  /** Its title (at most 256 characters). */
  readonly title?: string;
  /** Its description (at most 16,384 characters). */
  readonly description?: string;
  /** Its input schema. */
  readonly inputSchema: Record<string, unknown>;
  /** Its annotations, as the upstream sent them. */
  readonly annotations?: Record<string, unknown>;
  /** Its output schema, as the upstream sent it (never listed: it types `run_code`'s `json()`). */
  readonly outputSchema?: unknown;
  /** What `tools/list` shows for it. */
  readonly listed: ListedTool;
  /** Where a call goes. */
  readonly route: ToolRoute;
  /** The servers file keeps it in `tools/list` in every mode. */
  readonly alwaysLoad: boolean;
}

/**
 * Most tools offered from one server (a hostile one may list millions);
 * enough for the largest catalogues a search serves.
 */
const MAX_TOOLS_PER_SERVER = 4096;

/**
 * The upstream tools, their names and routes.
 *
 * @example
 * ```ts
 * import { ToolListing } from "./tool_listing.ts";
 * import assert from "node:assert/strict";
 * const listing = new ToolListing(() => {});
 * listing.name([]);
 * assert.deepEqual(listing.listed, []);
 * ```
 */
export class ToolListing {
  readonly #log: (line: string) => void;
  readonly #toolsByServer = new Map<string, UpstreamTool[]>();
  #routes = new Map<string, ToolRoute>();
  #listed: ListedTool[] = [];
  #entries: CatalogEntry[] = [];
  #notes: string[] = [];
  readonly #unlisted = new Set<string>();

  /**
   * An empty listing.
   *
   * @param log Diagnostics to standard error.
   */
  constructor(log: (line: string) => void) {
    this.#log = log;
  }

  /** What listing found worth saying: refused schemas, dropped names, failed servers. */
  get notes(): readonly string[] {
    return this.#notes;
  }

  /** The upstream tools by server, as listed (for `--list`). */
  get upstreamTools(): ReadonlyMap<string, readonly UpstreamTool[]> {
    return this.#toolsByServer;
  }

  /** The `tools/list` entries of the upstream tools, in the file's order. */
  get listed(): readonly ListedTool[] {
    return this.#listed;
  }

  /** The catalogued tools (none disabled), in the file's order. */
  get entries(): readonly CatalogEntry[] {
    return this.#entries;
  }

  /** The servers whose last listing failed. */
  get unlisted(): ReadonlySet<string> {
    return this.#unlisted;
  }

  /**
   * The route of a gateway tool name.
   *
   * @param name The name the host used (untrusted).
   * @returns Its route, or `undefined` when no upstream tool has it.
   */
  route(name: string): ToolRoute | undefined {
    return this.#routes.get(name);
  }

  /**
   * The route of an upstream tool by its server and own name.
   *
   * @param server The server's entry name.
   * @param tool The upstream's name of the tool.
   * @returns Its route, or `undefined` when it is not listed.
   */
  routeOf(server: string, tool: string): ToolRoute | undefined {
    return [...this.#routes.values()].find((r) =>
      r.upstream.name === server && r.tool.name === tool
    );
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
   * Lists one upstream's tools; a server that cannot be reached is noted
   * and logged and holds no tools.
   *
   * @param upstream The server.
   * @returns Whether it answered.
   */
  async list(upstream: Upstream): Promise<boolean> {
    try {
      const tools = await upstream.listTools();
      if (tools.length > MAX_TOOLS_PER_SERVER) {
        this.#log(
          `server ${upstream.name}: lists ${tools.length} tools; the first ${MAX_TOOLS_PER_SERVER} are offered`,
        );
      }
      this.#toolsByServer.set(
        upstream.name,
        tools.slice(0, MAX_TOOLS_PER_SERVER),
      );
      this.#unlisted.delete(upstream.name);
      return true;
    } catch (error) {
      const message = messageOf(error);
      this.#notes.push(`server ${upstream.name}: ${message}`);
      this.#log(`server ${upstream.name}: no tools listed: ${message}`);
      this.#toolsByServer.set(upstream.name, []);
      this.#unlisted.add(upstream.name);
      return false;
    }
  }

  /**
   * Names every listed tool of the upstreams (in the file's order) but the
   * disabled ones and rebuilds the routes, the `tools/list` entries and the
   * catalogue; new notes are logged.
   *
   * @param upstreams The servers, in the file's order.
   */
  name(upstreams: readonly Upstream[]): void {
    const pairs: { server: string; tool: string; upstream: Upstream }[] = [];
    const byPair = new Map<string, UpstreamTool>();
    for (const upstream of upstreams) {
      for (const tool of this.#toolsByServer.get(upstream.name) ?? []) {
        if (toolSettings(upstream.entry, tool.name).disabled) continue;
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
    const routes = new Map<string, ToolRoute>();
    const listed: ListedTool[] = [];
    const entries: CatalogEntry[] = [];
    for (const n of named) {
      const tool = byPair.get(`${n.server}\u0000${n.tool}`)!;
      const upstream = upstreams.find((u) => u.name === n.server)!;
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
      const route = { upstream, tool };
      routes.set(n.name, route);
      listed.push(shown);
      entries.push({
        name: n.name,
        server: n.server,
        tool: n.tool,
        ...(typeof shown.title === "string" ? { title: shown.title } : {}),
        ...(typeof shown.description === "string"
          ? { description: shown.description }
          : {}),
        inputSchema: shown.inputSchema as Record<string, unknown>,
        ...(shown.annotations === undefined
          ? {}
          : { annotations: shown.annotations as Record<string, unknown> }),
        ...(tool.outputSchema === undefined
          ? {}
          : { outputSchema: tool.outputSchema }),
        listed: shown,
        route,
        alwaysLoad: toolSettings(upstream.entry, n.tool).alwaysLoad,
      });
    }
    for (const note of notes) {
      if (!this.#notes.includes(note)) this.#log(note);
    }
    this.#notes = notes;
    this.#routes = routes;
    this.#listed = listed;
    this.#entries = entries;
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
