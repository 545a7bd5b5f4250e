/**
 * The configuration of `loom mcp --servers FILE`: the JSON the hosts already
 * use — `{"mcpServers": {...}}` (Claude Code's `.mcp.json`, Claude Desktop,
 * Cursor) or VS Code's `{"servers": {...}}` — read into checked entries.
 * Stdio entries have `command`, `args`, `env`, `cwd`; remote entries have
 * `"type": "http"` (or `"streamable-http"`) or `"sse"`, a `url` and
 * `headers`. `${VAR}` and `${VAR:-default}` expand in every string as Claude
 * Code expands them. Loom's own keys: `"persist": true`,
 * `"selfReading": true`, `"alwaysLoad": true` and `"code": false` on an
 * entry, the same per tool under `"tools"`, and `"disabled": true` there for
 * a tool. The file
 * is the user's (trusted), but a mistake in it is a
 * {@linkcode GatewayConfigError} naming the file, the entry and the field,
 * found before any server starts.
 *
 * @module
 */
import { LoomError } from "../../errors.ts";
import { isPlainObject } from "../../plain_object.ts";

/**
 * The servers file cannot be used: it is unreadable, not JSON, or an entry
 * has a field of the wrong type or an unset variable. Exit code 2.
 *
 * @example
 * ```ts
 * import { GatewayConfigError, parseGatewayConfig } from "./gateway_config.ts";
 * import assert from "node:assert/strict";
 * assert.throws(
 *   () => parseGatewayConfig('{"mcpServers": {"fs": {"args": []}}}', { file: ".mcp.json", env: {} }),
 *   (e: unknown) => e instanceof GatewayConfigError && /fs.*command/.test(e.message),
 * );
 * ```
 */
export class GatewayConfigError
  extends LoomError.TypeError<"GatewayConfigError"> {}

/** How a tool's results are persisted in a `--session` (the seeds' rule). */
export interface ToolClassification {
  /** `"persist": true`: the config opts the results in. */
  readonly persist: boolean;
  /** `"selfReading": true`: the tool reads arbitrary paths or URLs; never persisted. */
  readonly selfReading: boolean;
}

/**
 * A tool's own settings under an entry's `"tools"`: its persistence, where
 * the catalogue puts it, and whether code may call it.
 */
export interface ToolSettings extends Partial<ToolClassification> {
  /** `"alwaysLoad": true`: listed in `tools/list` even in `search` mode. */
  readonly alwaysLoad?: boolean;
  /** `"disabled": true`: in no listing, search or call. */
  readonly disabled?: boolean;
  /** `"code": false`: not callable from `run_code`. */
  readonly code?: boolean;
}

/** Every setting a tool may have of its own, each a boolean. */
const TOOL_SETTING_NAMES = [
  "persist",
  "selfReading",
  "alwaysLoad",
  "disabled",
  "code",
] as const satisfies readonly (keyof ToolSettings)[];

/** Where the catalogue puts one upstream tool (the servers file decides). */
export interface ToolPlacement {
  /** Listed in `tools/list` even in `search` mode. */
  readonly alwaysLoad: boolean;
  /** In no listing, search or call. */
  readonly disabled: boolean;
}

/** The settings in force for one upstream tool (see {@linkcode toolSettings}). */
export interface ToolInForce extends ToolClassification, ToolPlacement {
  /** Code in `run_code` may call it (`tools.<server>.<tool>`, `callTool`). */
  readonly code: boolean;
}

/** A stdio upstream: a program the gateway starts. */
export interface StdioServerEntry {
  /** The entry's name in the file. */
  readonly name: string;
  /** Always `stdio`. */
  readonly transport: "stdio";
  /** The program. */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** Variables added to the gateway's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** The working folder (default: the gateway's). */
  readonly cwd?: string;
  /** The server-wide classification. */
  readonly classification: ToolClassification;
  /** `"alwaysLoad": true`: every tool listed even in `search` mode. */
  readonly alwaysLoad?: boolean;
  /** `"code": false`: no tool of the server is callable from `run_code`. */
  readonly code?: false;
  /** Per-tool settings by upstream tool name. */
  readonly tools: Readonly<Record<string, ToolSettings>>;
}

/** A remote upstream: Streamable HTTP or SSE. */
export interface RemoteServerEntry {
  /** The entry's name in the file. */
  readonly name: string;
  /** `http` (Streamable HTTP) or `sse`. */
  readonly transport: "http" | "sse";
  /** The endpoint. */
  readonly url: string;
  /** Headers sent with every request. */
  readonly headers: Readonly<Record<string, string>>;
  /** The server-wide classification. */
  readonly classification: ToolClassification;
  /** `"alwaysLoad": true`: every tool listed even in `search` mode. */
  readonly alwaysLoad?: boolean;
  /** `"code": false`: no tool of the server is callable from `run_code`. */
  readonly code?: false;
  /** Per-tool settings by upstream tool name. */
  readonly tools: Readonly<Record<string, ToolSettings>>;
}

/** One upstream server of the file. */
export type ServerEntry = StdioServerEntry | RemoteServerEntry;

/** The checked file. */
export interface GatewayConfig {
  /** The file it came from. */
  readonly file: string;
  /** The upstreams, in file order. */
  readonly servers: readonly ServerEntry[];
  /** Entries left out, with why (a `loom mcp` entry, a disabled one). */
  readonly skipped: readonly { readonly name: string; readonly why: string }[];
}

/** Options of {@linkcode parseGatewayConfig}. */
export interface ParseGatewayConfigOptions {
  /** The file's name, for messages. */
  readonly file: string;
  /** The variables `${VAR}` expands from. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Expands `${VAR}` and `${VAR:-default}` in one string.
 *
 * @param text The string from the file.
 * @param env The variables.
 * @returns The expanded string, or the name of the first unset variable
 *   without a default.
 *
 * @example
 * ```ts
 * import { expandVariables } from "./gateway_config.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(expandVariables("${HOME}/x ${N:-3}", { HOME: "/h" }), { text: "/h/x 3" });
 * assert.deepEqual(expandVariables("${TOKEN}", {}), { missing: "TOKEN" });
 * ```
 */
export function expandVariables(
  text: string,
  env: Readonly<Record<string, string>>,
): { readonly text: string } | { readonly missing: string } {
  let missing: string | undefined;
  const out = text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_, name: string, fallback: string | undefined) => {
      const value = Object.hasOwn(env, name) ? env[name] : undefined;
      if (value !== undefined && value !== "") return value;
      if (fallback !== undefined) return fallback;
      if (value !== undefined) return value;
      missing ??= name;
      return "";
    },
  );
  return missing === undefined ? { text: out } : { missing };
}

/**
 * Reads the servers file's text into checked entries.
 *
 * @param text The file's contents.
 * @param options The file name and the variables.
 * @returns The configuration.
 * @throws {GatewayConfigError} When the file is not JSON, has neither
 *   `mcpServers` nor `servers`, or an entry is wrong (named with its field).
 *
 * @example
 * ```ts
 * import { parseGatewayConfig } from "./gateway_config.ts";
 * import assert from "node:assert/strict";
 * const config = parseGatewayConfig(JSON.stringify({
 *   mcpServers: {
 *     fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "${ROOT:-.}"] },
 *     web: { type: "http", url: "https://example.test/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
 *     loom: { command: "loom", args: ["mcp", "--servers", ".mcp.json"] },
 *   },
 * }), { file: ".mcp.json", env: { TOKEN: "t" } });
 * assert.deepEqual(config.servers.map((s) => s.name), ["fs", "web"]);
 * assert.equal(config.skipped[0]?.name, "loom");
 * ```
 */
export function parseGatewayConfig(
  text: string,
  options: ParseGatewayConfigOptions,
): GatewayConfig {
  const { file, env } = options;
  const fail = (message: string): never => {
    throw new GatewayConfigError(
      "gateway_config_invalid",
      `Cannot use the servers file ${file}: ${message}`,
    );
  };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    fail(`it is not JSON (${(error as Error).message})`);
  }
  if (!isPlainObject(data)) fail("it is not a JSON object");
  const top = data as Record<string, unknown>;
  const key = Object.hasOwn(top, "mcpServers")
    ? "mcpServers"
    : Object.hasOwn(top, "servers")
    ? "servers"
    : fail('it has neither "mcpServers" nor "servers"');
  const entries = top[key];
  if (!isPlainObject(entries)) fail(`"${key}" is not an object`);
  const servers: ServerEntry[] = [];
  const skipped: { name: string; why: string }[] = [];
  for (const [name, raw] of Object.entries(entries as object)) {
    const at = (field: string) =>
      `entry ${JSON.stringify(name)} field ${field}`;
    if (name === "") fail("an entry has an empty name");
    if (!isPlainObject(raw)) {
      fail(`entry ${JSON.stringify(name)} is not an object`);
    }
    const entry = raw as Record<string, unknown>;
    if (entry.disabled === true) {
      skipped.push({ name, why: "it is disabled" });
      continue;
    }
    const str = (field: string, value: unknown): string => {
      if (typeof value !== "string") fail(`${at(field)} is not a string`);
      const expanded = expandVariables(value as string, env);
      if ("missing" in expanded) {
        fail(
          `${
            at(field)
          } uses \${${expanded.missing}}, which is not set and has no default (\${${expanded.missing}:-default})`,
        );
      }
      return (expanded as { text: string }).text;
    };
    const optionalStr = (field: string): string | undefined =>
      entry[field] === undefined ? undefined : str(field, entry[field]);
    const record = (field: string): Record<string, string> => {
      const value = entry[field];
      if (value === undefined) return {};
      if (!isPlainObject(value)) fail(`${at(field)} is not an object`);
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(value as object)) {
        out[k] = str(`${field}.${k}`, v);
      }
      return out;
    };
    const flag = (value: unknown, field: string): boolean | undefined => {
      if (value === undefined) return undefined;
      if (typeof value !== "boolean") fail(`${at(field)} is not true or false`);
      return value as boolean;
    };
    const classification: ToolClassification = {
      persist: flag(entry.persist, "persist") ?? false,
      selfReading: flag(entry.selfReading, "selfReading") ?? false,
    };
    const alwaysLoad = flag(entry.alwaysLoad, "alwaysLoad") ?? false;
    const code = flag(entry.code, "code") ?? true;
    const tools: Record<string, ToolSettings> = {};
    if (entry.tools !== undefined) {
      if (!isPlainObject(entry.tools)) fail(`${at("tools")} is not an object`);
      for (const [tool, value] of Object.entries(entry.tools as object)) {
        if (!isPlainObject(value)) {
          fail(`${at(`tools.${tool}`)} is not an object`);
        }
        const v = value as Record<string, unknown>;
        const settings: Record<string, boolean> = {};
        for (const key of TOOL_SETTING_NAMES) {
          const value = flag(v[key], `tools.${tool}.${key}`);
          if (value !== undefined) settings[key] = value;
        }
        tools[tool] = settings;
      }
    }
    const type = entry.type === undefined ? undefined : str("type", entry.type);
    if (
      type === "http" || type === "streamable-http" ||
      type === "streamableHttp" || type === "sse" ||
      (type === undefined && entry.url !== undefined &&
        entry.command === undefined)
    ) {
      const url = str("url", entry.url);
      try {
        const parsed = new URL(url);
        if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
          fail(`${at("url")} is not an http or https URL`);
        }
      } catch (error) {
        if (error instanceof GatewayConfigError) throw error;
        fail(`${at("url")} is not a URL`);
      }
      servers.push({
        name,
        transport: type === "sse" ? "sse" : "http",
        url,
        headers: record("headers"),
        classification,
        ...(alwaysLoad ? { alwaysLoad } : {}),
        ...(code ? {} : { code }),
        tools,
      });
      continue;
    }
    if (type !== undefined && type !== "stdio") {
      fail(
        `${at("type")} is ${
          JSON.stringify(type)
        }; it must be stdio, http, streamable-http or sse`,
      );
    }
    if (entry.command === undefined) fail(`${at("command")} is missing`);
    const command = str("command", entry.command);
    if (command === "") fail(`${at("command")} is empty`);
    const argsValue = entry.args ?? [];
    if (!Array.isArray(argsValue)) fail(`${at("args")} is not an array`);
    const args = (argsValue as unknown[]).map((a, i) => str(`args[${i}]`, a));
    if (startsThisGateway(command, args)) {
      skipped.push({ name, why: "it starts loom mcp --servers itself" });
      continue;
    }
    const cwd = optionalStr("cwd");
    servers.push({
      name,
      transport: "stdio",
      command,
      args,
      env: record("env"),
      ...(cwd === undefined ? {} : { cwd }),
      classification,
      ...(alwaysLoad ? { alwaysLoad } : {}),
      ...(code ? {} : { code }),
      tools,
    });
  }
  return { file, servers, skipped };
}

/**
 * The settings in force for one upstream tool: the tool's own (under its
 * server's `"tools"`) over its server's, `disabled` the tool's own. One
 * lookup for persistence, the catalogue's placement and `run_code`.
 *
 * @param entry The server entry.
 * @param tool The upstream tool's name.
 * @returns Whether its results may be persisted, whether it reads arbitrary
 *   paths, whether it is always listed or left out, whether code may call it.
 *
 * @example Persistence: the tool's own over its server's
 * ```ts
 * import { parseGatewayConfig, toolSettings } from "./gateway_config.ts";
 * import assert from "node:assert/strict";
 * const { servers: [fs] } = parseGatewayConfig(JSON.stringify({ mcpServers: { fs: {
 *   command: "x", persist: true, tools: { read_file: { selfReading: true } } } } }), { file: "f", env: {} });
 * assert.equal(toolSettings(fs!, "read_file").persist, true);
 * assert.equal(toolSettings(fs!, "read_file").selfReading, true);
 * assert.equal(toolSettings(fs!, "list").selfReading, false);
 * ```
 *
 * @example Placement: `alwaysLoad` over the server's, `disabled` the tool's own
 * ```ts
 * import { parseGatewayConfig, toolSettings } from "./gateway_config.ts";
 * import assert from "node:assert/strict";
 * const { servers: [gh] } = parseGatewayConfig(JSON.stringify({ mcpServers: { gh: {
 *   command: "x", alwaysLoad: true, tools: { delete_repo: { disabled: true } } } } }), { file: "f", env: {} });
 * assert.equal(toolSettings(gh!, "delete_repo").disabled, true);
 * assert.equal(toolSettings(gh!, "get_issue").disabled, false);
 * assert.equal(toolSettings(gh!, "get_issue").alwaysLoad, true);
 * ```
 *
 * @example Code: `"code": false` keeps a tool out of `run_code`'s reach
 * ```ts
 * import { parseGatewayConfig, toolSettings } from "./gateway_config.ts";
 * import assert from "node:assert/strict";
 * const { servers: [fs] } = parseGatewayConfig(JSON.stringify({ mcpServers: { fs: {
 *   command: "x", tools: { write_file: { code: false } } } } }), { file: "f", env: {} });
 * assert.equal(toolSettings(fs!, "write_file").code, false);
 * assert.equal(toolSettings(fs!, "read_file").code, true);
 * ```
 */
export function toolSettings(
  entry: ServerEntry,
  tool: string,
): ToolInForce {
  const own = Object.hasOwn(entry.tools, tool) ? entry.tools[tool] : undefined;
  return {
    persist: own?.persist ?? entry.classification.persist,
    selfReading: own?.selfReading ?? entry.classification.selfReading,
    alwaysLoad: own?.alwaysLoad ?? entry.alwaysLoad ?? false,
    disabled: own?.disabled ?? false,
    code: own?.code ?? entry.code ?? true,
  };
}

/** Whether a command line starts `loom mcp --servers` (this gateway again). */
function startsThisGateway(command: string, args: readonly string[]): boolean {
  const argv = [command, ...args];
  const mcp = argv.indexOf("mcp");
  if (mcp < 0 || !argv.slice(mcp).includes("--servers")) return false;
  return argv.slice(0, mcp).some((part) => {
    const base = part.split(/[\\/]/).at(-1) ?? "";
    return /^loom(\.js|\.ts|\.exe)?$/.test(base) || base === "cli.ts";
  });
}
