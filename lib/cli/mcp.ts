/**
 * `loom mcp [--root DIR]`: an MCP server over stdio offering the result
 * store, verified references and composed writes to any MCP host (Claude
 * Code, Codex, Cursor, VS Code). It is the one command whose standard output
 * is not `io.out`: the SDK's stdio transport owns it and writes only
 * JSON-RPC there; every diagnostic goes to standard error.
 *
 * @module
 */
import { refuseUnknownContentMode } from "./_telemetry_env.ts";
import { resolve } from "node:path";
import { loadSdk } from "../mcp/gateway/sdk.ts";
import { McpTools } from "../mcp/mcp_tools.ts";
import {
  CATALOG_MODES,
  type CatalogMode,
} from "../mcp/gateway/tool_catalog.ts";
import { createToolsServer, serveStdio } from "../mcp/stdio_server.ts";
import { MCP_TOOLS } from "../mcp/tool_definitions.ts";
import { McpSession } from "../persist/mcp_session.ts";
import {
  MAX_RESULT_BYTES,
  ResultStore,
  type ResultStoreOptions,
} from "../store/result_store.ts";
import {
  defined,
  parseDuration,
  parseFlags,
  positiveInteger,
} from "./_args.ts";
import { type GatewayArguments, serveGateway } from "./_gateway.ts";
import {
  HTTP_OPTIONS,
  type HttpArguments,
  parseHttpFlags,
  readTokenFile,
  requestLimit,
  serveOverHttp,
} from "./_http.ts";
import { UsageError } from "./_io.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { type CliIo, ExitCode } from "./_io.ts";

const USAGE =
  `Usage: loom mcp [--root DIR] [--session DIR | --store URL [--session NAME]]
                [store limits] [--http HOST:PORT (--token-file F | --insecure-no-token)]
       loom mcp --servers FILE [--root DIR] [--session DIR | --store URL [--session NAME]]
                [--list] [gateway options] [--http HOST:PORT …]

Serves Loom's result store, verified references and composed writes as an
MCP server over standard input and output (JSON-RPC only on standard output;
diagnostics on standard error), or with --http over Streamable HTTP. Files
are read and written only inside DIR, by the same confined executor as
'loom run': a Deno worker whose permissions allow DIR and nothing else,
inside bubblewrap where it works; symlinks and hard links leading out of
DIR, special files (FIFOs, sockets, devices) and writes into .git are
refused. Results live as long as the server, or, with --session, across
restarts.

Tools:
  inspect_files {paths}          store files, answer descriptors (preview
                                 of at most 1,024 bytes, never the whole text)
  read_result {reference}        bytes, lines or a JSON pointer of a stored
                                 result, digest-checked, at most 8 KiB
  list_results {offset}          the stored results, 8 per page
  write_file {path, contents}    write a file from literal strings and
                                 references to stored results, atomically

Options:
  --root DIR               The folder the tools may use (default: the
                           current folder)
  --session DIR            Keep the stored results in session DIR (outside
                           the root) across restarts: an HMAC-chained
                           journal under the session key, verified on start
  --store URL              Keep them in a store instead: file:DIR,
                           sqlite:PATH or postgres://user:pw@host:port/db;
                           --session NAME names the session in it
                           (default: default); see docs/storage.md
  --max-result-bytes N     Largest stored result and file read (default
                           16777216)
  --max-total-bytes N      Largest total of stored results (default 67108864)
  --max-results N          Most stored results (default 1024)
  -h, --help               Show this help

Over HTTP (a shared server; see docs/mcp.md and docs/storage.md):
  --http HOST:PORT         Serve Streamable HTTP at http://HOST:PORT/mcp,
                           bound to HOST only (port 0: any free port; the
                           start-up line names it)
  --token-file F           The bearer token every request must carry
                           (Authorization: Bearer TOKEN): F's content,
                           trimmed, at least 16 characters; F must not be
                           writable by other users. Make one with
                           openssl rand -hex 32 > F; chmod 600 F
  --insecure-no-token      Serve without a token: only on a loopback
                           address (127.0.0.1, ::1, localhost)
  Without --http the server speaks over stdio. With --store, several
  servers (and hosts) given the same store and --session share one
  catalogue.

Gateway (--servers FILE): Loom starts the MCP servers of FILE (.mcp.json's
{"mcpServers": …} or VS Code's {"servers": …}) and offers their tools as
<server>__<tool>. An answer over --offload-bytes is stored and answered with
a descriptor (id, sha256, size, preview, outline); read_result,
find_in_result and list_results read it exactly. See docs/mcp.md.
  --servers FILE           The servers file; a loom mcp entry in it is skipped
  --list                   Print each server, its tools and how each is
                           treated, the catalogue and its sizes, then exit
  --catalog MODE           full: list every upstream tool; search: list
                           search_tools and call_tool instead (a listing
                           that never changes); auto (default): full while
                           the upstream definitions fit in 16 KiB
  --offload-bytes N        Store answers over N serialized bytes (default 8192)
  --call-timeout DURATION  Deadline of one upstream call (default 120s)
  --start-timeout DURATION Deadline of an upstream's start: its process up
                           and initialize answered (default 120s)
  --max-age DURATION       With --session: forget results older than this
  --report FILE            Write per-tool totals (JSON) when the gateway stops
  --code                   Offer run_code: TypeScript the model writes runs
                           in a fresh sandboxed Deno process (no permission,
                           bubblewrap with nothing of the file system but
                           Deno) where the upstream tools are functions; see
                           docs/code.md. "code": false on a server or tool
                           in FILE keeps it out of reach
  --code-memory MIB        Heap limit of one run (default 256)
  --code-timeout DURATION  Longest deadline a run may ask for (default 120s;
                           a run's own default is 30s)
  --code-max-calls N       Tool calls one run may make (default 500)
  --code-unconfined        Run code without bubblewrap, confined by Deno's
                           permission flags alone (said at start and in every
                           run_code answer); without it, --code needs a
                           working bubblewrap and exits 2 otherwise
  (gateway store defaults: --max-result-bytes 67108864, --max-total-bytes
  536870912, the oldest results evicted first)

Add it to Claude Code:  claude mcp add loom -- loom mcp --root .
As a gateway:           claude mcp add loom -- loom mcp --servers .mcp.json
Over HTTP:              claude mcp add --transport http loom http://HOST:PORT/mcp \
                          --header "Authorization: Bearer $(cat F)"
Other hosts (Codex, Cursor, VS Code): see docs/mcp.md.

Needs Deno's --unstable-worker-options and read, write, run (bubblewrap)
and env permissions, as 'deno task loom' and 'deno task install' grant.
`;

/** Parsed `loom mcp` arguments. */
export interface McpArguments {
  /** `--root DIR` (default `.`). */
  readonly root: string;
  /** `--session DIR`: where the results persist (a name with `--store`). */
  readonly session?: string;
  /** `--store URL`: the store the session is in. */
  readonly store?: string;
  /** The store's limits from `--max-result-bytes`, `--max-total-bytes`, `--max-results`. */
  readonly limits: ResultStoreOptions;
  /** `--root` was given (the gateway offers Loom's file tools only then). */
  readonly rootGiven?: boolean;
  /** The gateway's options, with `--servers FILE`. */
  readonly gateway?: GatewayArguments;
  /** `--http HOST:PORT` and its token flag: serve over HTTP, not stdio. */
  readonly http?: HttpArguments;
}

/** The gateway's flags: each needs `--servers FILE`. */
const GATEWAY_OPTIONS = {
  list: { type: "boolean" },
  catalog: { type: "string" },
  "offload-bytes": { type: "string" },
  "call-timeout": { type: "string" },
  "start-timeout": { type: "string" },
  "max-age": { type: "string" },
  report: { type: "string" },
  code: { type: "boolean" },
} as const;

/** `run_code`'s limits: each needs `--code`. */
const CODE_OPTIONS = {
  "code-memory": { type: "string" },
  "code-timeout": { type: "string" },
  "code-max-calls": { type: "string" },
  "code-unconfined": { type: "boolean" },
} as const;

/**
 * Parses `loom mcp` arguments; reads nothing.
 *
 * @param args Arguments after `mcp`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On an unknown option or a limit that is not a
 *   positive integer.
 */
export function parseMcpArguments(
  args: readonly string[],
): Parsed<McpArguments> {
  const { values } = parseFlags(args, {
    servers: { type: "string" },
    ...GATEWAY_OPTIONS,
    ...CODE_OPTIONS,
    root: { type: "string" },
    session: { type: "string" },
    store: { type: "string" },
    "max-result-bytes": { type: "string" },
    "max-total-bytes": { type: "string" },
    "max-results": { type: "string" },
    ...HTTP_OPTIONS,
  });
  if (values.help) return help(USAGE);
  const http = parseHttpFlags({
    http: values.http,
    tokenFile: values["token-file"],
    insecure: values["insecure-no-token"],
  });
  if (http !== undefined && values.list === true) {
    throw new UsageError(
      "usage",
      "--list prints the servers' tools and exits: it serves nothing, over --http or otherwise",
    );
  }
  const codeOnly = Object.keys(CODE_OPTIONS)
    .filter((flag) => values[flag as keyof typeof CODE_OPTIONS] !== undefined);
  if (values.code !== true && codeOnly.length > 0) {
    throw new UsageError("usage", `--${codeOnly[0]} needs --code`);
  }
  const gatewayOnly = Object.keys(GATEWAY_OPTIONS)
    .filter((flag) =>
      values[flag as keyof typeof GATEWAY_OPTIONS] !== undefined
    );
  if (values.servers === undefined && gatewayOnly.length > 0) {
    throw new UsageError(
      "usage",
      `--${gatewayOnly[0]} needs --servers FILE`,
    );
  }
  if (
    values["max-age"] !== undefined && values.session === undefined &&
    values.store === undefined
  ) {
    throw new UsageError(
      "usage",
      "--max-age needs --session DIR or --store URL",
    );
  }
  const gateway = values.servers === undefined ? undefined : defined({
    servers: values.servers,
    list: values.list === true,
    catalog: catalogMode(values.catalog),
    offloadBytes: positiveInteger(values["offload-bytes"], "--offload-bytes"),
    callTimeoutMs: parseDuration(values["call-timeout"], "--call-timeout"),
    startTimeoutMs: parseDuration(values["start-timeout"], "--start-timeout"),
    maxAgeMs: parseDuration(values["max-age"], "--max-age"),
    report: values.report,
    code: values.code === true
      ? defined({
        memoryMiB: positiveInteger(values["code-memory"], "--code-memory"),
        maxTimeoutMs: parseDuration(values["code-timeout"], "--code-timeout"),
        maxCalls: positiveInteger(
          values["code-max-calls"],
          "--code-max-calls",
        ),
        unconfined: values["code-unconfined"] === true,
      })
      : undefined,
  });
  return {
    ...(gateway === undefined
      ? {}
      : { gateway, rootGiven: values.root !== undefined }),
    root: values.root ?? ".",
    ...(values.session === undefined && values.store === undefined
      ? {}
      : { session: values.session ?? "default" }),
    ...(values.store === undefined ? {} : { store: values.store }),
    ...(http === undefined ? {} : { http }),
    limits: defined({
      maxResultBytes: positiveInteger(
        values["max-result-bytes"],
        "--max-result-bytes",
      ),
      maxTotalBytes: positiveInteger(
        values["max-total-bytes"],
        "--max-total-bytes",
      ),
      maxResults: positiveInteger(values["max-results"], "--max-results"),
    }),
  };
}

function catalogMode(value: string | undefined): CatalogMode | undefined {
  if (value === undefined) return undefined;
  if (!CATALOG_MODES.includes(value as CatalogMode)) {
    throw new UsageError(
      "usage",
      `--catalog is ${JSON.stringify(value)}; it must be ${
        CATALOG_MODES.join(", ")
      }`,
    );
  }
  return value as CatalogMode;
}

async function serve(a: McpArguments, io: CliIo): Promise<number> {
  const refused = refuseUnknownContentMode("mcp", io);
  if (refused !== undefined) return refused;
  const log = (line: string) => io.err(`loom mcp: ${line}\n`);
  // A token that cannot be used stops the server before anything starts.
  const token = a.http?.tokenFile === undefined
    ? undefined
    : await readTokenFile(a.http.tokenFile, log);
  if (a.gateway !== undefined) {
    return await serveGateway(a, a.gateway, io, token);
  }
  const root = resolve(a.root);
  // In a store, several servers may share the session: ids come from it.
  const session = a.session === undefined
    ? null
    : a.store === undefined
    ? await McpSession.open(resolve(a.session), { root })
    : await McpSession.open(a.session, {
      root,
      store: a.store,
      shared: true,
      bodies: "read",
    });
  const shared = session !== null && a.store !== undefined;
  const store = new ResultStore({
    ...a.limits,
    ...(shared ? { backing: session.backing() } : {}),
  });
  try {
    for (const result of session?.results ?? []) store.restore(result);
    if (session !== null) {
      log(
        `session ${session.dir}: ${
          shared
            ? `${session.recordCount} results catalogued`
            : `${session.results.length} results restored`
        }`,
      );
    }
    const tools = await McpTools.start({
      root,
      limits: a.limits,
      store,
      ...(session === null || shared
        ? {}
        : { onStored: (r) => session.save(r) }),
    });
    if (a.http === undefined) {
      await serveStdio(tools, { log });
    } else {
      try {
        const sdk = await loadSdk();
        await serveOverHttp(a.http, token, {
          sdk,
          server: () =>
            createToolsServer(tools, sdk, { log, transport: "http" }),
          what: `${MCP_TOOLS.length} tools (root ${tools.root}${
            tools.sandboxed ? ", bubblewrap" : ""
          })`,
          maxRequestBytes: requestLimit(
            a.limits.maxResultBytes ?? MAX_RESULT_BYTES,
          ),
          log,
        });
      } finally {
        tools.close();
      }
    }
  } finally {
    await session?.close();
  }
  return ExitCode.ok;
}

/** `loom mcp`: serves until standard input ends; exit 0, 2 for bad usage, 3 when it cannot confine. */
export const mcpCommand: Command = commandOf(parseMcpArguments, serve);
