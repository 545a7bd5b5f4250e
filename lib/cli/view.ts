/**
 * `loom view [SESSION…] [--store URL] [--report FILE…] [--record FILE…]
 * [--requests FILE…] [--host 127.0.0.1] [--port N]`: a local, read-only
 * page over sessions, context reports, gateway reports and recordings.
 *
 * @module
 */
import { isLoopback } from "../http_guard.ts";
import { loadRuns, type RunInput } from "../view/load_runs.ts";
import { serveView } from "../view/view_server.ts";
import { ViewApi } from "../view/view_api.ts";
import { parseFlags, positiveInteger } from "./_args.ts";
import { listenFailure } from "./_http.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { type CliIo, ExitCode, UsageError } from "./_io.ts";

const USAGE =
  `Usage: loom view [SESSION…] [--store URL] [--report FILE…] [--record FILE…]
                 [--requests FILE…] [--host 127.0.0.1] [--port N]

Serves a read-only page over runs: what the model saw at every request (a
timeline of request bytes by part, cache reads and writes, cumulative
dollars, retirement checkpoints and test runs), one request as sent and
its difference from the one before, stored results with a digest-checked
reader, and a gateway's bytes per tool. Prints the page's URL with a
token made for this launch, and opens nothing: paste the URL into a
browser. Stop it with Ctrl+C.

Runs:
  SESSION          A session folder (loom run --session, loom mcp --session),
                   a folder of them, or with --store a session's name; with
                   --store and no SESSION, every session of the store
  --report FILE    A context report (loom run --context-report) or a
                   gateway report (loom mcp --servers … --report)
  --record FILE    A recording (loom run --record): the model's replies
  --requests FILE  A request log (loom run --record-requests): each request
                   as sent, read only when it is shown
  A --record or --requests belongs to the SESSION or --report given just
  before it; a --record given first is a run of its own.

Options:
  --store URL      file:DIR, sqlite:PATH or postgres://… (opened read-only)
  --host ADDRESS   The address to listen on (default 127.0.0.1); requests
                   must name it (or, on a loopback address, any loopback
                   name) in their Host header
  --port N         The port (default 0: one the system picks)
  -h, --help       Show this help

Every request needs the printed token; one without it, with another Host
or another method than GET is refused. Nothing is ever written. See
docs/view.md.
`;

/** Parsed `loom view` arguments. */
export interface ViewArguments {
  /** The runs, in order. */
  readonly runs: readonly RunInput[];
  /** `--store URL`. */
  readonly store?: string;
  /** `--host`, default 127.0.0.1. */
  readonly hostname: string;
  /** `--port`, default 0. */
  readonly port: number;
}

const OPTIONS = {
  store: { type: "string" },
  report: { type: "string", multiple: true },
  record: { type: "string", multiple: true },
  requests: { type: "string", multiple: true },
  host: { type: "string" },
  port: { type: "string" },
} as const;

/**
 * Parses `loom view` arguments; reads nothing. A `--record` or
 * `--requests` belongs to the SESSION or `--report` before it.
 *
 * @param args Arguments after `view`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On an unknown option, a bad port or host, or a
 *   file given twice to one run.
 */
export function parseViewArguments(
  args: readonly string[],
): Parsed<ViewArguments> {
  const { values } = parseFlags(args, OPTIONS, true);
  if (values.help) return help(USAGE);
  const hostname = (values.host ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1");
  if (hostname === "" || hostname === "0.0.0.0" || hostname === "::") {
    throw new UsageError(
      "usage",
      `Invalid --host ${values.host}: give the address the page will be opened at (requests must name it); the default is 127.0.0.1`,
    );
  }
  const port = values.port === undefined
    ? 0
    : values.port === "0"
    ? 0
    : positiveInteger(values.port, "--port");
  if (port > 65535) {
    throw new UsageError("usage", `Invalid --port ${port}: at most 65535`);
  }
  return {
    runs: runsOf(args),
    ...(values.store === undefined ? {} : { store: values.store }),
    hostname,
    port,
  };
}

/** Groups the runs in the order given (parseFlags checked the syntax). */
function runsOf(args: readonly string[]): RunInput[] {
  const runs: Record<string, string>[] = [];
  const flags = new Set(Object.keys(OPTIONS));
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      for (const rest of args.slice(i + 1)) runs.push({ session: rest });
      break;
    }
    let name: string | undefined;
    let value: string | undefined;
    const match = /^--([a-z]+)(?:=(.*))?$/s.exec(arg);
    if (match !== null && flags.has(match[1]!)) {
      name = match[1]!;
      value = match[2] ?? args[++i]!;
    } else if (arg.startsWith("-")) continue;
    else {
      runs.push({ session: arg });
      continue;
    }
    if (name === "report") runs.push({ report: value });
    else if (name === "record" || name === "requests") {
      const last = runs.at(-1);
      if (last === undefined || last[name] !== undefined) {
        if (name === "requests") {
          throw new UsageError(
            "usage",
            `--requests ${value} belongs to a run: give it after the SESSION or --report FILE of that run`,
          );
        }
        runs.push({ record: value });
      } else last[name] = value;
    }
  }
  return runs;
}

async function view(a: ViewArguments, io: CliIo): Promise<number> {
  if (!isLoopback(a.hostname)) {
    io.err(
      `loom view: listening on ${a.hostname}, not a loopback address: anyone who can reach it and learns the token can read these runs\n`,
    );
  }
  await using loaded = await loadRuns(a.runs, a.store);
  if (loaded.runs.length === 0) {
    throw new UsageError(
      "usage",
      "Nothing to view: give a SESSION, --store URL, --report FILE or --record FILE",
    );
  }
  const stop = new AbortController();
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  const onSignal = () => stop.abort();
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  try {
    await serveView({
      hostname: a.hostname,
      port: a.port,
      api: new ViewApi(loaded.runs),
      signal: stop.signal,
      onListen: (url) => {
        io.out(`${url}\n`);
        io.err(
          `loom view: ${loaded.runs.length} run${
            loaded.runs.length === 1 ? "" : "s"
          }, read-only; open the URL above (it holds this launch's token); Ctrl+C stops\n`,
        );
      },
    });
  } catch (error) {
    throw listenFailure(error, a.hostname, a.port) ?? error;
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
  return ExitCode.ok;
}

/** `loom view`: serves until stopped; exit 0, or 2 for bad usage or input. */
export const viewCommand: Command = commandOf(parseViewArguments, view);
