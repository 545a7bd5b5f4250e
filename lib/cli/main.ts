/**
 * The CLI dispatcher: picks the command, runs it, maps failures to exit codes.
 *
 * @module
 */
import { isLoomError } from "../errors.ts";
import {
  type CliIo,
  type Command,
  ExitCode,
  exitCodeOfError,
  UsageError,
} from "./_io.ts";
import { demoCommand } from "./demo.ts";
import { inspectCommand } from "./inspect.ts";
import { runCommand } from "./run.ts";
import { renderCommand } from "./render.ts";
import { selectCommand } from "./select.ts";
import { sessionCommand } from "./session.ts";

interface CommandEntry {
  readonly run: Command;
  readonly summary: string;
}

// One line per command; each command module owns its own --help text.
const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  run: { run: runCommand, summary: "Run a governed slice over a workspace" },
  demo: {
    run: demoCommand,
    summary: "Replay the recorded bug-fix slice under the bounded policy",
  },
  inspect: {
    run: inspectCommand,
    summary: "Print the result descriptor the model sees for a file",
  },
  render: {
    run: renderCommand,
    summary: "Render a context file as text or provider messages",
  },
  select: {
    run: selectCommand,
    summary: "Print part of a file by bytes, lines or JSON pointer",
  },
  session: {
    run: sessionCommand,
    summary: "List, show or garbage-collect stored sessions (ls|show|gc DIR)",
  },
};

const HELP = () =>
  `loom — a context engine for LLM agents

Usage: loom <command> [options]

Commands:
${
    Object.entries(COMMANDS).map(([name, c]) =>
      `  ${name.padEnd(10)}${c.summary}`
    )
      .join("\n")
  }

Run 'loom <command> --help' for a command's options.
Exit codes: 0 done, 1 slice stopped without completion, 2 usage or bad input,
3 internal or provider failure.
`;

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
 * let err = "";
 * const code = await main(["frobnicate"], { out: () => {}, err: (t) => (err += t) });
 * assert.equal(code, 2);
 * assert.match(err, /unknown command 'frobnicate'/);
 * ```
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = args;
  if (
    name === undefined || name === "--help" || name === "-h" || name === "help"
  ) {
    io.out(HELP());
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.err(`loom: unknown command '${name}'; run 'loom --help'\n`);
    return ExitCode.usage;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`loom ${name}: ${error.message}; run 'loom ${name} --help'\n`);
    } else if (isLoomError(error)) {
      io.err(`loom ${name}: ${error.code}: ${error.message}\n`);
    } else {
      io.err(`loom ${name}: internal error: ${String(error)}\n`);
    }
    return exitCodeOfError(error);
  }
}
