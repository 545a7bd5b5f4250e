/**
 * The CLI dispatcher: picks the command, runs it, maps failures to exit codes.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import type { Command } from "./_command.ts";
import {
  type CliIo,
  EXIT_CODES_HELP,
  ExitCode,
  exitCodeOfError,
  UsageError,
} from "./_io.ts";
import { describeFailure } from "./_failure.ts";

// One line per command; each command module owns its own --help text and is
// imported only when its command runs, so `loom --help` loads no yaml, zod or
// provider SDK.
const SUMMARIES = {
  run: "Run a governed slice over a workspace",
  cost: "Price a recorded run offline: tokens, cache hits, dollars",
  demo: "Replay the recorded bug-fix slice under the bounded policy",
  inspect: "Print the result descriptor the model sees for a file",
  mcp: "Serve the result store and verified references to MCP hosts",
  render: "Render a context file as text or provider messages",
  report: "Render a context report as text, GitHub Markdown or one HTML file",
  select: "Print part of a file by bytes, lines or JSON pointer",
  session: "List, show or garbage-collect stored sessions (ls|show|gc DIR)",
  view: "Serve a local read-only page over sessions, reports and recordings",
} as const;

/** The names of loom's commands. */
export type CommandName = keyof typeof SUMMARIES;

const LOADERS: Readonly<Record<CommandName, () => Promise<Command>>> = {
  run: async () => (await import("./run.ts")).runCommand,
  cost: async () => (await import("./cost.ts")).costCommand,
  demo: async () => (await import("./demo.ts")).demoCommand,
  inspect: async () => (await import("./inspect.ts")).inspectCommand,
  mcp: async () => (await import("./mcp.ts")).mcpCommand,
  render: async () => (await import("./render.ts")).renderCommand,
  report: async () => (await import("./report.ts")).reportCommand,
  select: async () => (await import("./select.ts")).selectCommand,
  session: async () => (await import("./session.ts")).sessionCommand,
  view: async () => (await import("./view.ts")).viewCommand,
};

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(SUMMARIES, name);
}

/**
 * What `loom` was asked to do, before any command module is loaded. The
 * help's `asked` is false when no command was given: it then exits 2.
 */
export type MainArguments =
  | { readonly kind: "version" }
  | { readonly kind: "help"; readonly asked: boolean }
  | {
    readonly kind: "command";
    readonly name: CommandName;
    readonly args: readonly string[];
  };

/**
 * Parses loom's top-level arguments: `--version`, `--help`, `help
 * <command>` (the command's `--help`) or a command and its arguments.
 *
 * @param args Command-line arguments after the program name.
 * @returns What to do.
 * @throws {UsageError} On an unknown command, or `help` with more than one
 *   (its `command` is then `help`).
 */
export function parseMainArguments(args: readonly string[]): MainArguments {
  const [name, ...rest] = args;
  if (name === "--version" || name === "-V") return { kind: "version" };
  if (name === "help" && rest.length > 0) {
    const [topic, ...extra] = rest;
    if (extra.length > 0) {
      throw new UsageError(
        "usage",
        `Expected one command, got ${rest.join(" ")}`,
        { command: "help" },
      );
    }
    return parseMainArguments([topic!, "--help"]);
  }
  if (
    name === undefined || name === "--help" || name === "-h" || name === "help"
  ) {
    return { kind: "help", asked: name !== undefined };
  }
  if (!isCommandName(name)) {
    throw new UsageError(
      "usage",
      `Unknown command ${name}; the commands are ${
        Object.keys(SUMMARIES).join(", ")
      } (run 'loom --help')`,
    );
  }
  return { kind: "command", name, args: rest };
}

const HELP = () =>
  `loom ${VERSION} — a context engine for LLM agents

Usage: loom <command> [options]
       loom help <command>
       loom --version

Commands:
${
    Object.entries(SUMMARIES).map(([name, summary]) =>
      `  ${name.padEnd(10)}${summary}`
    ).join("\n")
  }

Run 'loom help <command>' or 'loom <command> --help' for a command's options.

Paths on the command line resolve against the directory loom was started
from, also under 'deno task loom' (which runs in the folder of deno.json).

${EXIT_CODES_HELP}`;

/**
 * Runs the CLI with the given arguments.
 *
 * @param args Command-line arguments after the program name.
 * @param io Where to write output.
 * @returns The process exit code.
 *
 * @example
 * ```ts
 * import { main } from "@loom/loom/cli";
 * import assert from "node:assert/strict";
 * let out = "";
 * const code = await main(["--version"], { out: (t) => out += t, err: () => {} });
 * assert.equal(code, 0);
 * assert.match(out, /^loom [0-9]+\.[0-9]+\.[0-9]+\n$/);
 * ```
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  let parsed: MainArguments;
  try {
    parsed = parseMainArguments(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const scope = error.command === undefined ? "" : ` ${error.command}`;
    io.err(`loom${scope}: ${error.message}\n`);
    return exitCodeOfError(error);
  }
  switch (parsed.kind) {
    case "version":
      io.out(`loom ${VERSION}\n`);
      return ExitCode.ok;
    case "help":
      io.out(HELP());
      return parsed.asked ? ExitCode.ok : ExitCode.usage;
  }
  try {
    const run = await LOADERS[parsed.name]();
    return await run(parsed.args, io);
  } catch (error) {
    const failure = describeFailure(parsed.name, error);
    io.err(failure.text);
    return failure.exitCode;
  }
}
