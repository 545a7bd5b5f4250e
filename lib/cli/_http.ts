/**
 * `loom mcp --http HOST:PORT [--token-file F | --insecure-no-token]`: the
 * flags checked (no token, no start — except on a loopback address with
 * `--insecure-no-token`), the token file read and checked, and the server
 * of `lib/mcp/http_server.ts` started with them. Used by both `loom mcp`
 * and the gateway.
 *
 * @module
 */
import { resolve } from "node:path";
import { isLoopback } from "../http_guard.ts";
import { serveHttp } from "../mcp/http_server.ts";
import type { HttpSdk, RequestServer } from "../mcp/http_server.ts";
import { fsReason } from "./_args.ts";
import { UsageError } from "./_io.ts";

/** The checked HTTP flags. */
export interface HttpArguments {
  /** The address to bind, as `Deno.serve` takes it (IPv6 without brackets). */
  readonly hostname: string;
  /** The port (0: one the system picks). */
  readonly port: number;
  /** `--token-file F`; absent only with `--insecure-no-token`. */
  readonly tokenFile?: string;
}

/** Largest token file read, in bytes. */
const MAX_TOKEN_FILE_BYTES = 4096;
/** Shortest token accepted, in characters. */
const MIN_TOKEN_CHARS = 16;

/** The flags {@linkcode parseHttpFlags} reads (`--http`, the token's). */
export const HTTP_OPTIONS = {
  http: { type: "string" },
  "token-file": { type: "string" },
  "insecure-no-token": { type: "boolean" },
} as const;

/**
 * Checks `--http`, `--token-file` and `--insecure-no-token`; reads nothing.
 *
 * @param values The three flags' values.
 * @returns The HTTP arguments, or `undefined` without `--http`.
 * @throws {UsageError} When `--http` is not HOST:PORT, a token flag comes
 *   without `--http`, both token flags are given, no token is given, or
 *   `--insecure-no-token` names an address that is not a loopback one.
 */
export function parseHttpFlags(values: {
  readonly http?: string | undefined;
  readonly tokenFile?: string | undefined;
  readonly insecure?: boolean | undefined;
}): HttpArguments | undefined {
  const insecure = values.insecure === true;
  if (values.http === undefined) {
    if (values.tokenFile !== undefined || insecure) {
      throw new UsageError(
        "usage",
        `${
          insecure ? "--insecure-no-token" : "--token-file"
        } needs --http HOST:PORT`,
      );
    }
    return undefined;
  }
  const { hostname, port } = parseAddress(values.http);
  if (values.tokenFile !== undefined && insecure) {
    throw new UsageError(
      "usage",
      "--token-file and --insecure-no-token exclude each other: give one",
    );
  }
  if (values.tokenFile === undefined && !insecure) {
    throw new UsageError(
      "usage",
      `--http ${values.http} needs --token-file FILE: every request must carry that bearer token (only on a loopback address may --insecure-no-token serve without one)`,
    );
  }
  if (insecure && !isLoopback(hostname)) {
    throw new UsageError(
      "usage",
      `--insecure-no-token serves only on a loopback address (127.0.0.1, ::1, localhost), not ${values.http}: anyone who can reach ${hostname} could use the server; give --token-file FILE`,
    );
  }
  return {
    hostname,
    port,
    ...(values.tokenFile === undefined ? {} : { tokenFile: values.tokenFile }),
  };
}

/** `HOST:PORT` or `[IPv6]:PORT`. */
function parseAddress(text: string): { hostname: string; port: number } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]/]+)):([0-9]{1,5})$/.exec(
    text,
  );
  const port = Number(match?.[3]);
  if (match === null || !(port <= 65535)) {
    throw new UsageError(
      "usage",
      `Invalid --http ${text}: expected HOST:PORT, e.g. 127.0.0.1:8765 or [::1]:8765 (port 0 to 65535)`,
    );
  }
  return { hostname: match[1] ?? match[2]!, port };
}

/**
 * Reads the bearer token: the file's content, trimmed. The file must be a
 * regular file no other user can write (a token someone else can change is
 * theirs), at most 4 KiB; the token at least 16 visible ASCII characters
 * (a header carries nothing else). A file other users can read is used,
 * with a warning.
 *
 * @param path `--token-file`.
 * @param log Where the warning goes.
 * @returns The token.
 * @throws {UsageError} When the file cannot be read or does not hold a
 *   usable token.
 */
export async function readTokenFile(
  path: string,
  log: (line: string) => void,
): Promise<string> {
  const file = resolve(path);
  const refuse = (why: string) =>
    new UsageError("usage", `Cannot use the token file ${file}: ${why}`);
  let info: Deno.FileInfo;
  let bytes: Uint8Array;
  try {
    info = await Deno.stat(file);
    if (!info.isFile) throw refuse("it is not a regular file");
    if (info.size > MAX_TOKEN_FILE_BYTES) {
      throw refuse(
        `it holds ${info.size} bytes, more than a token (at most ${MAX_TOKEN_FILE_BYTES})`,
      );
    }
    bytes = await Deno.readFile(file);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw refuse(fsReason(error));
  }
  const mode = info.mode ?? 0;
  if ((mode & 0o022) !== 0) {
    throw refuse(
      `other users can write it (mode ${
        (mode & 0o777).toString(8)
      }); chmod 600 ${file}`,
    );
  }
  if ((mode & 0o004) !== 0) {
    log(
      `warning: every user of this machine can read the token file ${file} (mode ${
        (mode & 0o777).toString(8)
      }); chmod 600 it`,
    );
  }
  const token = new TextDecoder().decode(bytes).trim();
  if (token === "") throw refuse("it is empty");
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw refuse(
      "the token holds spaces, control or non-ASCII characters, which an Authorization header cannot carry as they are",
    );
  }
  if (token.length < MIN_TOKEN_CHARS) {
    throw refuse(
      `the token has ${token.length} characters, fewer than ${MIN_TOKEN_CHARS}; make one with: openssl rand -hex 32 > ${file}`,
    );
  }
  return token;
}

/**
 * The largest HTTP request body: a tool call carrying one whole result's
 * text (a `write_file`), JSON-escaped, and its envelope — twice the
 * per-result limit and 1 MiB.
 *
 * @param maxResultBytes The per-result limit.
 * @returns Bytes.
 */
export function requestLimit(maxResultBytes: number): number {
  return 2 * maxResultBytes + 1024 * 1024;
}

/**
 * Serves a server factory over HTTP until SIGINT or SIGTERM.
 *
 * @param http The checked flags.
 * @param token The token (`undefined` with `--insecure-no-token`).
 * @param options The SDK, the per-request server, the start-up line, the
 *   largest request body, the log.
 * @throws {UsageError} When the address cannot be bound (taken, not this
 *   machine's).
 */
export async function serveOverHttp(
  http: HttpArguments,
  token: string | undefined,
  options: {
    readonly sdk: HttpSdk;
    readonly server: () => RequestServer;
    readonly what: string;
    readonly maxRequestBytes: number;
    readonly log: (line: string) => void;
  },
): Promise<void> {
  try {
    await serveHttp({
      hostname: http.hostname,
      port: http.port,
      token,
      ...options,
    });
  } catch (error) {
    throw listenFailure(error, http.hostname, http.port) ?? error;
  }
}

/**
 * The usage error of an address that cannot be listened on (taken, not
 * this machine's), or `undefined` for any other failure.
 *
 * @param error What `Deno.serve` threw.
 * @param hostname The address (IPv6 without brackets).
 * @param port The port.
 * @returns The usage error, or `undefined`.
 */
export function listenFailure(
  error: unknown,
  hostname: string,
  port: number,
): UsageError | undefined {
  if (
    !(error instanceof Deno.errors.AddrInUse ||
      error instanceof Deno.errors.AddrNotAvailable)
  ) return undefined;
  return new UsageError(
    "usage",
    `Cannot listen on ${
      hostname.includes(":") ? `[${hostname}]` : hostname
    }:${port}: ${error.message}`,
  );
}
