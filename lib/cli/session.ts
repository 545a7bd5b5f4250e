/**
 * `loom session ls|show|gc DIR`: list stored sessions, show one (counts,
 * digests and paths, never a result body; `--verify` checks the journal's
 * MAC chain and every result), and delete persisted results that the
 * journal no longer references.
 *
 * @module
 */
import { collectGarbage } from "../persist/session_gc.ts";
import { McpSession } from "../persist/mcp_session.ts";
import { SessionError } from "../persist/session_error.ts";
import { StorageError } from "../storage/storage_error.ts";
import { verifySession } from "../persist/session_verify.ts";
import {
  listSessions,
  type SessionSummary,
  summarizeSession,
} from "../persist/session_summary.ts";
import { parseFlags } from "./_args.ts";
import { type Command, commandOf, help, type Parsed } from "./_command.ts";
import { type CliIo, ExitCode, exitCodeOfError, UsageError } from "./_io.ts";

const USAGE = `Usage: loom session ls DIR [--json]
       loom session show DIR [--verify] [--json]
       loom session gc DIR [--dry-run] [--json]
       loom session ls --store URL [--json]
       loom session show NAME --store URL [--verify] [--json]
       loom session gc NAME --store URL [--dry-run] [--json]

Sessions are written by 'loom run --session DIR' and continued by
'loom run --resume DIR'; 'loom mcp --session DIR' keeps an MCP server's
stored results in the same format. A session directory holds journal.jsonl (a header
record, then one record per acknowledged step, each sealed with an
HMAC-SHA-256 chain keyed by the per-user secret in $LOOM_SESSION_KEY_FILE,
default ~/.config/loom/session.key), tool-results/<sha256>.txt (bodies of
externally bounded results such as test output that are larger than their
tool's persistence threshold; smaller ones stay inline in the journal) and,
while a run holds it, lock. Results of repository.inspect are never written:
they are re-read from the workspace and verified against their digest.

Subcommands:
  ls DIR      List the sessions in DIR (DIR itself and its subdirectories)
  show DIR    Summarise one session; never prints result bodies
  gc DIR      Delete persisted results that the journal does not reference
              and temp files of interrupted writes (verifies and locks first)

Options:
  --store URL Sessions in a store (file:DIR, sqlite:PATH,
              postgres://user:pw@host:port/db): NAME is a session in it
  --verify    (show) Verify the journal's MAC chain, every persisted file,
              inline result and re-read source now
  --dry-run   (gc) Report what would be deleted, delete nothing
  --json      Print JSON instead of text
  -h, --help  Show this help

Exit codes: 0 done, 2 bad usage or a missing, invalid, tampered, damaged
or locked session, 3 a store that cannot be reached.
`;

/** The subcommands of `loom session`. */
const SUBCOMMANDS = ["ls", "show", "gc"] as const;

/** Parsed `loom session` arguments. */
export interface SessionArguments {
  /** The subcommand. */
  readonly sub: typeof SUBCOMMANDS[number];
  /**
   * The session directory (for `ls`, the directory holding sessions), or
   * with a store the session's name (empty for `ls`).
   */
  readonly dir: string;
  /** `--store URL`. */
  readonly store?: string;
  /** `--json`. */
  readonly json: boolean;
  /** `--verify` (`show` only). */
  readonly verify: boolean;
  /** `--dry-run` (`gc` only). */
  readonly dryRun: boolean;
}

/**
 * Parses `loom session` arguments; reads nothing.
 *
 * @param args Arguments after `session`.
 * @returns The arguments, or the help text.
 * @throws {UsageError} On an unknown option or subcommand, not exactly one
 *   DIR, or a flag of another subcommand.
 */
export function parseSessionArguments(
  args: readonly string[],
): Parsed<SessionArguments> {
  const { values, positionals } = parseFlags(args, {
    "dry-run": { type: "boolean", default: false },
    verify: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    store: { type: "string" },
  }, true);
  if (values.help) return help(USAGE);
  const [sub, dir, ...extra] = positionals;
  if (sub === undefined) {
    throw new UsageError("usage", "expected ls, show or gc");
  }
  if (!isSubcommand(sub)) {
    throw new UsageError(
      "usage",
      `unknown subcommand '${sub}'; expected ls, show or gc`,
    );
  }
  const store = values.store;
  if (store !== undefined && sub === "ls" && dir === undefined) {
    // `ls --store URL` lists the whole store.
  } else if (dir === undefined || extra.length > 0) {
    throw new UsageError(
      "usage",
      `expected exactly one ${
        store === undefined ? "DIR" : "NAME"
      } after '${sub}'`,
    );
  }
  if (values["dry-run"] && sub !== "gc") {
    throw new UsageError("usage", "--dry-run applies to gc only");
  }
  if (values.verify && sub !== "show") {
    throw new UsageError("usage", "--verify applies to show only");
  }
  return {
    sub,
    dir: dir ?? "",
    ...(store === undefined ? {} : { store }),
    json: values.json,
    verify: values.verify,
    dryRun: values["dry-run"],
  };
}

function isSubcommand(sub: string): sub is SessionArguments["sub"] {
  return (SUBCOMMANDS as readonly string[]).includes(sub);
}

async function session(a: SessionArguments, io: CliIo): Promise<number> {
  try {
    switch (a.sub) {
      case "ls":
        return await ls(a, io);
      case "show":
        return await show(a.dir, a, io);
      default:
        return await gc(a.dir, a, io);
    }
  } catch (error) {
    if (error instanceof SessionError || error instanceof StorageError) {
      io.err(`loom session ${a.sub}: ${error.code}: ${error.message}\n`);
      return exitCodeOfError(error);
    }
    if (error instanceof Deno.errors.NotFound) {
      io.err(`loom session ${a.sub}: ${a.dir} does not exist\n`);
      return ExitCode.usage;
    }
    throw error;
  }
}

async function ls(a: SessionArguments, io: CliIo): Promise<number> {
  const listed = await listSessions(a.dir, storeOf(a));
  const dir = a.store ?? a.dir;
  if (a.json) {
    io.out(
      JSON.stringify(
        listed.map((l) =>
          l.summary === undefined ? { root: l.root, error: l.error } : {
            root: l.root,
            kind: l.summary.kind,
            session: l.summary.session,
            policy: l.summary.policy,
            model: l.summary.model,
            steps_used: l.summary.steps_used,
            max_steps: l.summary.max_steps,
            events: l.summary.events,
            results: l.summary.results.length,
            persisted_bytes: l.summary.persisted_bytes,
            inline_bytes: l.summary.inline_bytes,
          }
        ),
        null,
        2,
      ) + "\n",
    );
    return ExitCode.ok;
  }
  if (listed.length === 0) {
    io.out(`No sessions in ${dir}\n`);
    return ExitCode.ok;
  }
  for (const l of listed) {
    if (l.summary === undefined) {
      io.out(`${l.root}  invalid: ${l.error}\n`);
      continue;
    }
    const s = l.summary;
    io.out(
      s.kind === "mcp"
        ? `${l.root}  mcp  ${s.results.length} results (${
          bytes(s.persisted_bytes)
        } persisted)  root ${s.workspace ?? "(none: an SDK adapter's store)"}\n`
        : `${l.root}  ${s.policy}  steps ${s.steps_used}/${s.max_steps}  ${s.events} events  ${s.results.length} results (${
          bytes(s.persisted_bytes)
        } persisted)  ${s.model}\n`,
    );
  }
  return ExitCode.ok;
}

async function show(
  dir: string,
  options: SessionArguments,
  io: CliIo,
): Promise<number> {
  const summary = await summarizeSession(dir, storeOf(options));
  let verified: Verified | undefined;
  if (options.verify) {
    if (summary.kind === "mcp") {
      const results = await verifyMcpSession(dir, summary.workspace, options);
      verified = { chain: summary.journal_records, ok: results, stale: [] };
    } else {
      const loaded = await verifySession(dir, storeOf(options));
      verified = {
        chain: summary.journal_records,
        ok: loaded.results.length,
        stale: loaded.unavailable.map((u) => ({ id: u.id, detail: u.detail })),
      };
    }
  }
  if (options.json) {
    io.out(
      JSON.stringify(
        verified === undefined ? summary : { ...summary, verified },
        null,
        2,
      ) +
        "\n",
    );
    return ExitCode.ok;
  }
  io.out(render(summary));
  if (verified !== undefined) {
    io.out(
      `verified   ${verified.chain} journal records: MAC chain intact\n` +
        `           ${verified.ok} results healthy; ${verified.stale.length} stale by design (re-read files changed after inspection)\n`,
    );
    for (const u of verified.stale) {
      io.out(`  ${u.id}  stale: file changed after inspection (${u.detail})\n`);
    }
  }
  return ExitCode.ok;
}

/** What `show --verify` found. */
interface Verified {
  /** Journal records whose MAC verified. */
  readonly chain: number;
  /** Results that match their digests. */
  readonly ok: number;
  /** Re-read results whose file changed or went away since inspection. */
  readonly stale: readonly { id: string; detail: string }[];
}

function render(s: SessionSummary): string {
  const count = (source: string) =>
    s.results.filter((r) => r.source === source).length;
  const lines = s.kind === "mcp"
    ? [
      `session    ${s.session} (an MCP server's stored results)`,
      `root       ${s.root}`,
      `serves     ${s.workspace ?? "no workspace (an SDK adapter's store)"}`,
      `journal    ${s.journal_records} records${
        s.torn_bytes === 0
          ? ""
          : `; a torn last line of ${s.torn_bytes} bytes is ignored`
      }`,
      `results    ${s.results.length} (${bytes(s.persisted_bytes)} persisted)`,
    ]
    : [
      `session    ${s.session}`,
      `root       ${s.root}`,
      `workspace  ${s.workspace}`,
      `policy     ${s.policy}`,
      `model      ${s.model}`,
      `tests      ${
        s.test_command === null ? "(none)" : s.test_command.join(" ")
      }`,
      `revision   ${s.revision ?? "(unedited)"}`,
      `steps      ${s.steps_used} of ${s.max_steps}${
        s.stop === null ? "" : ` (stopped: ${s.stop})`
      }`,
      `calls      ${s.model_calls_used} model calls answered`,
      `events     ${s.events}${
        s.last_action === null ? "" : ` (last: ${s.last_action})`
      }`,
      `journal    ${s.journal_records} records${
        s.torn_bytes === 0
          ? ""
          : `; a torn last line of ${s.torn_bytes} bytes (an unacknowledged step) is ignored`
      }`,
      `results    ${s.results.length} (${count("persisted")} persisted, ${
        count("inline")
      } inline, ${count("reread")} re-read from the workspace; ${
        bytes(s.persisted_bytes)
      } persisted, ${bytes(s.inline_bytes)} inline)`,
    ];
  for (const r of s.results) {
    lines.push(
      `  ${r.id.padEnd(10)} ${r.source.padEnd(9)} ${r.capture.padEnd(8)} ${
        bytes(r.utf8_bytes).padStart(9)
      }  sha256 ${r.sha256.slice(0, 12)}  ${r.location}`,
    );
  }
  return lines.join("\n") + "\n";
}

async function gc(
  dir: string,
  options: SessionArguments,
  io: CliIo,
): Promise<number> {
  const report = await collectGarbage(dir, {
    dryRun: options.dryRun,
    ...storeOf(options),
  });
  if (options.json) {
    io.out(JSON.stringify(report, null, 2) + "\n");
    return ExitCode.ok;
  }
  if (report.tookOverLock !== null) io.out(`${report.tookOverLock}\n`);
  const verb = report.dryRun ? "would delete" : "deleted";
  for (const path of report.deleted) io.out(`${verb} ${path}\n`);
  for (const path of report.ignored) {
    io.out(`left alone ${path} (not written by loom)\n`);
  }
  io.out(
    `${
      report.dryRun ? "Dry run: " : ""
    }${verb} ${report.deleted.length} files (${
      bytes(report.freedBytes)
    }); kept ${report.kept} referenced results\n`,
  );
  return ExitCode.ok;
}

function storeOf(a: SessionArguments): { store?: string } {
  return a.store === undefined ? {} : { store: a.store };
}

/** Verifies an MCP session's chain and bodies; its result count. */
async function verifyMcpSession(
  dir: string,
  root: string | null,
  a: SessionArguments,
): Promise<number> {
  const options = { ...(root === null ? {} : { root }), ...storeOf(a) };
  return (await McpSession.verify(dir, options)).length;
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** `loom session`: exit 0, or 2 for bad usage or a bad session. */
export const sessionCommand: Command = commandOf(
  parseSessionArguments,
  session,
);
