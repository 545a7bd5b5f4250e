/**
 * `loom mcp --servers FILE`: reads the servers file (a bad one is a usage
 * error naming the file, the entry and the field, before any server
 * starts), opens the session (`--session DIR`, or a name in `--store URL`
 * shared with other instances), builds the one store (evicting the oldest
 * results; the session is its backing), the gateway and its MCP server,
 * and serves it over stdio or HTTP — or, with `--list`, prints each
 * server's tools and how each is treated.
 *
 * @module
 */
import { resolve } from "node:path";
import { CodeRunner } from "../code/code_runner.ts";
import { ConfinementUnavailableError } from "../executor/confinement_unavailable.ts";
import {
  GatewayConfigError,
  parseGatewayConfig,
  toolSettings,
} from "../mcp/gateway/gateway_config.ts";
import {
  AUTO_FULL_BYTES,
  type CatalogMode,
} from "../mcp/gateway/tool_catalog.ts";
import { Gateway, type OwnTools } from "../mcp/gateway/gateway.ts";
import type { ListedTool } from "../mcp/gateway/tool_listing.ts";
import {
  createGatewayServer,
  serveGatewayStdio,
} from "../mcp/gateway/gateway_server.ts";
import { GatewaySession } from "../mcp/gateway/gateway_session.ts";
import { loadSdk } from "../mcp/gateway/sdk.ts";
import { McpTools } from "../mcp/mcp_tools.ts";
import { callToolResult } from "../mcp/stdio_server.ts";
import { MCP_TOOLS } from "../mcp/tool_definitions.ts";
import { ResultStore, type ResultStoreOptions } from "../store/result_store.ts";
import { type HttpArguments, requestLimit, serveOverHttp } from "./_http.ts";
import { type CliIo, ExitCode } from "./_io.ts";
import { readingFile } from "../fs_reason.ts";

/** The gateway's flags. */
export interface GatewayArguments {
  /** `--servers FILE`. */
  readonly servers: string;
  /** `--list`. */
  readonly list: boolean;
  /** `--catalog` (default `auto`). */
  readonly catalog?: CatalogMode;
  /** `--offload-bytes`. */
  readonly offloadBytes?: number;
  /** `--call-timeout` in milliseconds. */
  readonly callTimeoutMs?: number;
  /** `--start-timeout` in milliseconds. */
  readonly startTimeoutMs?: number;
  /** `--max-age` in milliseconds. */
  readonly maxAgeMs?: number;
  /** `--report FILE`. */
  readonly report?: string;
  /** `--code` and its limits. */
  readonly code?: CodeArguments;
}

/** `--code`'s flags. */
export interface CodeArguments {
  /** `--code-memory` in MiB. */
  readonly memoryMiB?: number;
  /** `--code-timeout` in milliseconds. */
  readonly maxTimeoutMs?: number;
  /** `--code-max-calls`. */
  readonly maxCalls?: number;
  /** `--code-unconfined`. */
  readonly unconfined: boolean;
}

/** The common flags of `loom mcp` the gateway uses. */
interface Common {
  readonly root: string;
  readonly rootGiven?: boolean;
  readonly session?: string;
  readonly store?: string;
  readonly limits: ResultStoreOptions;
  readonly http?: HttpArguments;
}

/**
 * Runs the gateway until standard input ends, or over HTTP until SIGINT or
 * SIGTERM (or prints `--list`).
 *
 * @param a The common flags.
 * @param g The gateway's flags.
 * @param io Where diagnostics and `--list` go.
 * @param token The bearer token, with `--http` and `--token-file`.
 * @returns The exit code.
 * @throws {GatewayConfigError} When the servers file cannot be used.
 */
export async function serveGateway(
  a: Common,
  g: GatewayArguments,
  io: CliIo,
  token?: string,
): Promise<number> {
  const log = (line: string) => io.err(`loom mcp: ${line}\n`);
  // Nothing an upstream sends may stop the gateway: a promise rejected in a
  // relay or a notification handler is logged, not fatal.
  const unhandled = (event: PromiseRejectionEvent) => {
    event.preventDefault();
    log(`internal error (ignored): ${String(event.reason).slice(0, 300)}`);
  };
  globalThis.addEventListener("unhandledrejection", unhandled);
  try {
    return await gateway(a, g, io, log, token);
  } finally {
    globalThis.removeEventListener("unhandledrejection", unhandled);
  }
}

async function gateway(
  a: Common,
  g: GatewayArguments,
  io: CliIo,
  log: (line: string) => void,
  token: string | undefined,
): Promise<number> {
  const file = resolve(g.servers);
  const text = await readingFile(
    `the servers file ${file}`,
    () => Deno.readTextFile(file),
    (message, cause) =>
      new GatewayConfigError("gateway_config_invalid", message, { cause }),
  );
  const env = Deno.env.toObject();
  const config = parseGatewayConfig(text, { file, env });
  for (const skipped of config.skipped) {
    log(`entry ${skipped.name} skipped: ${skipped.why}`);
  }
  const maxResultBytes = a.limits.maxResultBytes ?? 64 * 1024 * 1024;
  // In a store, the session is shared by every instance given its name.
  const session = a.session === undefined || g.list
    ? undefined
    : await GatewaySession.open(
      a.store === undefined ? resolve(a.session) : a.session,
      {
        root: a.rootGiven ? resolve(a.root) : file,
        ...(a.store === undefined ? {} : { store: a.store }),
        ...(g.maxAgeMs === undefined ? {} : { maxAgeMs: g.maxAgeMs }),
        // A store that stopped answering fails the call within its deadline.
        timeoutMs: Math.min(g.callTimeoutMs ?? 120_000, 10_000),
      },
    );
  let ownTools: McpTools | undefined;
  let code: CodeRunner | undefined;
  try {
    if (g.code !== undefined && !g.list) {
      try {
        code = await CodeRunner.start(g.code);
      } catch (error) {
        if (!(error instanceof ConfinementUnavailableError)) throw error;
        log(`${error.code}: ${error.message}`);
        return ExitCode.usage;
      }
    }
    // The session is the store's backing: each result is recorded as it
    // is stored, under the persistence rule the gateway's note carries.
    const store = new ResultStore({
      maxResultBytes,
      maxTotalBytes: a.limits.maxTotalBytes ?? 512 * 1024 * 1024,
      ...(a.limits.maxResults === undefined
        ? {}
        : { maxResults: a.limits.maxResults }),
      evictOldest: true,
      ...(session === undefined ? {} : { backing: session.backing() }),
    });
    if (session !== undefined) {
      const restored = session.restore(store);
      log(`session ${session.dir}: ${restored} results restored`);
    }
    if (a.rootGiven && !g.list) {
      ownTools = await McpTools.start({
        root: resolve(a.root),
        limits: { maxResultBytes },
        store,
      });
    }
    const sdk = await loadSdk();
    const gw = new Gateway({
      sdk,
      config,
      store,
      offloadBytes: g.offloadBytes ?? 8192,
      maxResultBytes,
      callTimeoutMs: g.callTimeoutMs ?? 120_000,
      ...(g.startTimeoutMs === undefined
        ? {}
        : { startTimeoutMs: g.startTimeoutMs }),
      env,
      log,
      ...(g.catalog === undefined ? {} : { catalog: g.catalog }),
      ...(ownTools === undefined ? {} : { own: ownToolsOf(ownTools) }),
      ...(code === undefined ? {} : { code }),
      ...(session === undefined ? {} : {
        persistence: session,
        media: session.media,
        location: session.dir,
      }),
    });
    try {
      if (g.list) {
        await gw.start({}, { log: () => {}, listChanged: () => {} });
        io.out(listing(gw, config));
        return ExitCode.ok;
      }
      if (a.http === undefined) {
        log(
          `gateway over ${config.servers.length} servers of ${file}, serving over stdio${
            g.catalog === undefined ? "" : ` (--catalog ${g.catalog})`
          }${codeLine(code)}`,
        );
        await serveGatewayStdio(createGatewayServer(gw, { sdk, log }), sdk);
      } else {
        // Many hosts, one gateway: the upstreams start now, with no host's
        // capabilities, and nothing is relayed to a host.
        await gw.start({}, { log: () => {}, listChanged: () => {} });
        await serveOverHttp(a.http, token, {
          sdk,
          server: () => createGatewayServer(gw, { sdk, log, shared: true }),
          what: `the gateway over ${config.servers.length} servers of ${file}${
            codeLine(code)
          }`,
          maxRequestBytes: requestLimit(maxResultBytes),
          log,
        });
      }
    } finally {
      await gw.close();
      if (g.report !== undefined) {
        await Deno.writeTextFile(
          resolve(g.report),
          JSON.stringify(
            { format: "loom-gateway-report/1", tools: gw.report() },
            null,
            2,
          ) + "\n",
        );
      }
    }
  } finally {
    ownTools?.close();
    await code?.close();
    if (session !== undefined) log(session.journalSummary());
    await session?.close();
  }
  return ExitCode.ok;
}

/** What the start-up line says of `run_code`. */
function codeLine(code: CodeRunner | undefined): string {
  if (code === undefined) return "";
  return code.confined
    ? "; run_code confined by bubblewrap"
    : "; run_code UNCONFINED (--code-unconfined): code runs under Deno's permission flags alone, without bubblewrap";
}

function ownToolsOf(tools: McpTools): OwnTools {
  const names = new Set(["inspect_files", "write_file"]);
  return {
    definitions: MCP_TOOLS.filter((t) => names.has(t.name)).map((t) => ({
      ...t,
    })) as unknown as ListedTool[],
    call: async (name, args) => callToolResult(await tools.call(name, args)),
  };
}

/** What `--list` says of the catalogue: its mode, why, and the sizes. */
function catalogLine(gateway: Gateway): string {
  const c = gateway.catalog;
  const upstream = `${c.upstreamBytes.toLocaleString("en-US")} bytes`;
  const why = c.requested !== "auto"
    ? `--catalog ${c.requested}; the upstream tool definitions are ${upstream}`
    : c.mode === "full"
    ? `auto: the upstream tool definitions are ${upstream}, within ${
      AUTO_FULL_BYTES.toLocaleString("en-US")
    }`
    : `auto: the upstream tool definitions are ${upstream}, over ${
      AUTO_FULL_BYTES.toLocaleString("en-US")
    }`;
  return `catalog: ${c.mode} (${why}); tools/list is ${
    c.listingBytes.toLocaleString("en-US")
  } bytes`;
}

function listing(
  gateway: Gateway,
  config: ReturnType<typeof parseGatewayConfig>,
): string {
  const lines: string[] = [catalogLine(gateway)];
  const routes = gateway.routes();
  const search = gateway.catalog.mode === "search";
  for (const entry of config.servers) {
    const tools = gateway.upstreamTools.get(entry.name) ?? [];
    lines.push(`${entry.name} (${entry.transport}): ${tools.length} tools`);
    for (const tool of tools) {
      const name = routes.find((r) =>
        r.server === entry.name && r.tool === tool.name
      )?.name;
      const c = toolSettings(entry, tool.name);
      const hints = (tool.annotations ?? {}) as Record<string, unknown>;
      if (c.disabled) {
        lines.push(`  ${tool.name}: disabled by the servers file`);
        continue;
      }
      const treatment = [
        name === undefined
          ? "left out"
          : !search
          ? `as ${name}`
          : c.alwaysLoad
          ? `as ${name}, always listed (alwaysLoad)`
          : `as ${name}, in the catalogue (search_tools, call_tool)`,
        "answers over the threshold offloaded",
        ...(tool.outputSchema === undefined
          ? []
          : ["outputSchema left out (an offloaded answer is a descriptor)"]),
        c.selfReading
          ? "self-reading: never persisted"
          : c.persist
          ? "persisted with --session"
          : "not persisted",
        ...(hints.readOnlyHint === true && hints.idempotentHint === true
          ? ["re-fetched on resume"]
          : []),
        ...(c.code ? [] : ['not callable from run_code ("code": false)']),
      ];
      lines.push(`  ${tool.name}: ${treatment.join("; ")}`);
    }
  }
  for (const skipped of config.skipped) {
    lines.push(`${skipped.name}: skipped (${skipped.why})`);
  }
  for (const note of gateway.notes) lines.push(`note: ${note}`);
  return lines.join("\n") + "\n";
}
