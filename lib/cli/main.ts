/**
 * The CLI dispatcher: picks the command, runs it, maps failures to exit codes.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import { type CliIo, type Command, EXIT_CODES_HELP, ExitCode } from "./_io.ts";
import { describeFailure } from "./_failure.ts";

interface CommandEntry {
  /** Imports the command's module on first use (start-up stays near the floor). */
  readonly load: () => Promise<Command>;
  readonly summary: string;
}

// One line per command; each command module owns its own --help text and is
// imported only when its command runs, so `loom --help` loads no yaml, zod or
// provider SDK.
const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  run: {
    load: async () => (await import("./run.ts")).runCommand,
    summary: "Run a governed slice over a workspace",
  },
  cost: {
    load: async () => (await import("./cost.ts")).costCommand,
    summary: "Price a recorded run offline: tokens, cache hits, dollars",
  },
  demo: {
    load: async () => (await import("./demo.ts")).demoCommand,
    summary: "Replay the recorded bug-fix slice under the bounded policy",
  },
  inspect: {
    load: async () => (await import("./inspect.ts")).inspectCommand,
    summary: "Print the result descriptor the model sees for a file",
  },
  render: {
    load: async () => (await import("./render.ts")).renderCommand,
    summary: "Render a context file as text or provider messages",
  },
  select: {
    load: async () => (await import("./select.ts")).selectCommand,
    summary: "Print part of a file by bytes, lines or JSON pointer",
  },
  session: {
    load: async () => (await import("./session.ts")).sessionCommand,
    summary: "List, show or garbage-collect stored sessions (ls|show|gc DIR)",
  },
};

const HELP = () =>
  `loom ${VERSION} — a context engine for LLM agents

Usage: loom <command> [options]
       loom help <command>
       loom --version

Commands:
${
    Object.entries(COMMANDS).map(([name, c]) =>
      `  ${name.padEnd(10)}${c.summary}`
    )
      .join("\n")
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
  const [name, ...rest] = args;
  if (name === "--version" || name === "-V") {
    io.out(`loom ${VERSION}\n`);
    return ExitCode.ok;
  }
  if (name === "help" && rest.length > 0) {
    const [topic, ...extra] = rest;
    if (extra.length > 0) {
      io.err(`loom help: Expected one command, got ${rest.join(" ")}\n`);
      return ExitCode.usage;
    }
    return await main([topic!, "--help"], io);
  }
  if (
    name === undefined || name === "--help" || name === "-h" || name === "help"
  ) {
    io.out(HELP());
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    io.err(
      `loom: Unknown command ${name}; the commands are ${
        Object.keys(COMMANDS).join(", ")
      } (run 'loom --help')\n`,
    );
    return ExitCode.usage;
  }
  try {
    const run = await command.load();
    return await run(rest, io);
  } catch (error) {
    const failure = describeFailure(name, error);
    io.err(failure.text);
    return failure.exitCode;
  }
}
