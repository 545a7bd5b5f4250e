/**
 * `loom inspect FILE`: prints the result descriptor the model would see for
 * a file, as pretty JSON.
 *
 * @module
 */
import { compactDescriptor, ResultStore } from "../store/result_store.ts";
import { parseArguments, readInputFile, reportInvalidUtf8 } from "./_args.ts";
import { type CliIo, ExitCode, UsageError } from "./_io.ts";

const USAGE = `Usage: loom inspect FILE [--partial] [--compact]

Prints the result descriptor the model sees when FILE is stored: id, SHA-256,
size, a preview of at most 1,024 bytes (the head; the tail with --partial)
and a whole-content reference.

Options:
  --partial   Describe the file as partial output (tail preview)
  --compact   Print the compact form the bounded policy shows
  -h, --help  Show this help
`;

/**
 * Runs `loom inspect`.
 *
 * @param args Arguments after `inspect`.
 * @param io Where to write.
 * @returns The exit code: 0, or 2 for bad usage, a missing file or invalid UTF-8.
 */
export async function inspectCommand(
  args: string[],
  io: CliIo,
): Promise<number> {
  const parsed = parseArguments({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      partial: { type: "boolean" },
      compact: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (parsed.values.help) {
    io.out(USAGE);
    return ExitCode.ok;
  }
  if (parsed.positionals.length !== 1) {
    throw new UsageError("usage", "Expected exactly one FILE");
  }
  const file = parsed.positionals[0]!;
  const bytes = await readInputFile(file, { command: "inspect", io });
  if (bytes === null) return ExitCode.usage;
  if (!reportInvalidUtf8(bytes, file, { command: "inspect", io })) {
    return ExitCode.usage;
  }
  const store = new ResultStore();
  const descriptor = await store.put(bytes, {
    origin: `repository.inspect ${file}`,
    capture: parsed.values.partial ? "partial" : "complete",
  });
  const shown = parsed.values.compact
    ? compactDescriptor(descriptor)
    : descriptor;
  io.out(JSON.stringify(shown, null, 2) + "\n");
  return ExitCode.ok;
}
