/**
 * The CLI dispatcher: picks the command, runs it, maps failures to exit codes.
 *
 * @module
 */
import { isCodedError } from "../errors.ts";
import { type CliIo, type Command, ExitCode, UsageError } from "./_io.ts";

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
    const run = await command.load();
    return await run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`loom ${name}: ${error.message}; run 'loom ${name} --help'\n`);
      return ExitCode.usage;
    }
    if (isCodedError(error)) {
      io.err(`loom ${name}: ${error.code}: ${error.message}\n`);
      return ExitCode.failure;
    }
    io.err(`loom ${name}: internal error: ${String(error)}\n`);
    return ExitCode.failure;
  }
}
